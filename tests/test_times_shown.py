"""Times as the person saw them (issue 29, point 4): a Telegram message keeps its instant in UTC and the exporting
device's offset; every printed time, `--json` and MCP show the wall clock where a message was said, with its offset;
a year-less date in quoted or historical text is not grounded to the year it was said in."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from chats import new_memory, run
from conftest import opened_read_only

from ripplecli.api import Memory
from ripplecli.extract.timeparse import day_span, ground_time
from ripplecli.extract.windows import placed_turns
from ripplecli.formats import read_conversations
from ripplecli.formats.telegram import parse_telegram
from ripplecli.recall.index import RecallIndex
from ripplecli.store.db import Store
from ripplecli.store.lookups import SqlReads

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
CALIFORNIA_CHAT = FIXTURES / "telegram_california.json"  # exported on a phone in California (UTC-07:00 in June)
CALIFORNIA = timedelta(hours=-7)
EVENING = "2024-06-14T21:30:00-07:00"  # "Today I fixed the bicycle chain": 15 June 04:30 in UTC
EVENING_SHOWN = "2024-06-14 21:30"


# --- the Telegram reader: the instant in UTC, the exporter's offset beside it ------------------------------
def test_a_telegram_message_keeps_its_instant_and_the_exporters_offset() -> None:
    (chat,) = read_conversations(CALIFORNIA_CHAT)
    first = chat.sessions[0].turns[0]
    assert (first.said_at, first.offset) == (datetime(2024, 6, 15, 4, 30), CALIFORNIA)
    assert [s.session_id for s in chat.sessions] == ["2024-06-14", "2024-06-15"]  # days on the exporter's clock


def test_today_in_a_telegram_message_is_the_day_on_the_exporters_clock() -> None:
    (chat,) = read_conversations(CALIFORNIA_CHAT)
    placed = placed_turns(chat)[0]
    assert placed.timestamp == datetime(2024, 6, 14, 21, 30)
    start, end, grounded = ground_time(placed.turn.text, placed.timestamp)
    assert grounded and (start, end) == day_span(datetime(2024, 6, 14))  # not 15 June, the day in UTC


def _message(date: str, unixtime: str | None) -> dict:
    """One Telegram message with `date` and, when given, `date_unixtime`."""
    message = {"id": 1, "type": "message", "date": date, "from": "Ana", "from_id": "user1", "text": "hi"}
    return message | ({"date_unixtime": unixtime} if unixtime is not None else {})


@pytest.mark.parametrize(
    ("date", "unixtime", "offset"),
    [
        ("2024-01-15T10:30:00", "1705314600", timedelta(0)),  # an exporter on UTC: a zone, not none
        ("2024-01-15T16:00:00", "1705314600", timedelta(hours=5, minutes=30)),  # India
        ("2024-01-15T16:15:00", "1705314600", timedelta(hours=5, minutes=45)),  # Nepal
        ("2024-01-15T07:00:00", "1705314600", timedelta(hours=-3, minutes=-30)),  # Newfoundland
        ("2024-01-15T16:15:07", "1705314600", timedelta(hours=5, minutes=45)),  # to the quarter hour
        ("2024-01-17T10:30:00", "1705314600", None),  # two days apart: no zone is that far, the fields disagree
        ("2024-01-15T10:30:00", None, None),  # the local time alone: no zone
    ],
)
def test_the_offset_is_the_local_time_minus_the_instant(date: str, unixtime: str | None, offset) -> None:
    export = {"name": "a", "type": "personal_chat", "id": 1, "messages": [_message(date, unixtime)]}
    (chat,) = parse_telegram(export, "result.json")
    assert chat.sessions[0].turns[0].offset == offset


# --- the store: every way of reading shows the wall clock with its offset ----------------------------------
@pytest.fixture
def california(tmp_path: Path, fake_settings, fake_extractor) -> Path:
    """The California export through the fake encoder and extractor."""
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(CALIFORNIA_CHAT)
    return tmp_path / "store"


def _evidence_of(doc: dict, text: str) -> dict:
    """The evidence entry whose restatement holds `text`."""
    return next(e for e in doc["evidence"] if text in e["restatement"])


def test_ask_json_shows_when_it_was_said_there_with_its_offset(california: Path) -> None:
    result = run("ask", "Who fixed the bicycle chain?", "--json", "--no-answer", "--store", str(california))
    assert result.exit_code == 0, result.output
    chain = _evidence_of(json.loads(result.stdout), "bicycle chain")
    assert chain["said_at"] == chain["sources"][0]["said_at"] == EVENING
    assert datetime.fromisoformat(chain["said_at"]) == datetime(2024, 6, 15, 4, 30, tzinfo=UTC)  # the same instant
    assert chain["sources"][0]["timestamp"] == "2024-06-14T21:30:00"  # the session's day, on the same clock


def test_ask_prints_the_time_it_was_said_there(california: Path) -> None:
    for shape in ([], ["--no-trace"]):
        result = run("ask", "Who fixed the bicycle chain?", "--no-answer", *shape, "--store", str(california))
        assert result.exit_code == 0, result.output
        assert f"said {EVENING_SHOWN}" in result.stdout and "2024-06-15 04:30" not in result.stdout


def test_memories_list_and_show_print_the_time_it_was_said_there(california: Path) -> None:
    store = str(california)
    listed = json.loads(run("memories", "list", "--json", "--store", store).stdout)
    assert listed[0]["said_at"] == EVENING and "said_offset" not in listed[0]
    assert EVENING_SHOWN in run("memories", "list", "--store", store).stdout
    shown = json.loads(run("show", "m1", "--json", "--store", store).stdout)
    assert shown["said_at"] == shown["sources"][0]["said_at"] == EVENING
    assert f"said: {EVENING}" in run("show", "m1", "--store", store).stdout
    found = json.loads(run("memories", "search", "bicycle chain", "--json", "--store", store).stdout)
    assert found[0]["said_at"] == EVENING


def test_every_recall_index_reads_the_same_offsets(california: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = opened_read_only(california)
    ids = [*range(0, 8), 10**9]
    arrays = store.recall_arrays()
    assert arrays is not None
    sql = SqlReads(store)
    assert arrays.said_offsets_of(ids) == sql.said_offsets_of(ids) == {mid: -7 * 3600 for mid in range(1, 6)}
    assert arrays.sources_of(ids) == sql.sources_of(ids)
    assert {row[-1] for row in sql.sources_of(ids)} == {-7 * 3600}
    california = {mid: CALIFORNIA for mid in range(1, 6)}
    assert RecallIndex.load(store).said_offsets(ids) == RecallIndex.open(store).said_offsets(ids) == california
    monkeypatch.setattr(Store, "recall_arrays", lambda self: None)
    assert RecallIndex.open(store).said_offsets(ids) == california  # by SQL
    store.close()


def test_a_time_without_a_zone_is_shown_as_before(store: Path) -> None:
    result = run("ask", "Who went hiking in Denver?", "--json", "--no-answer", "--store", str(store))
    said = [e["said_at"] for e in json.loads(result.stdout)["evidence"]]
    assert said and all(s is None or datetime.fromisoformat(s).tzinfo is None for s in said)


def _zoned_chat(path: Path) -> Path:
    """Alex fixes the chain on the evening of 10 March 2026 in California: 11 March in UTC."""
    when = "2026-03-10T20:00:00-07:00"
    turns = [{"speaker": "Alex", "text": "I fixed the bicycle chain.", "said_at": when}]
    sessions = [{"id": "s1", "timestamp": when, "turns": turns}]
    path.write_text(json.dumps({"conversation_id": "alex", "sessions": sessions}))
    return path


def test_the_typed_answer_dates_a_memory_on_the_day_it_was_said_there(tmp_path, fake_settings, fake_extractor) -> None:
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(_zoned_chat(tmp_path / "alex.json"))
    with Memory(tmp_path / "store", read_only=True) as memory:
        result = memory.recall("When did Alex fix the bicycle chain?", k=3, answer="typed")
    assert result.answer is not None and result.answer.span == "10 March 2026", result.answer
    assert "11 March" not in result.answer.text


# --- through the real encoder and spaCy -----------------------------------------------------------------------
@pytest.mark.slow
def test_the_california_export_through_the_real_parts(tmp_path: Path, shared_cache: Path) -> None:
    result = run("ingest", str(CALIFORNIA_CHAT), "--store", str(tmp_path / "s"))
    assert result.exit_code == 0, result.output
    with Memory(tmp_path / "s", read_only=True) as memory:
        rows = memory.store.con.execute(
            "SELECT s.turn_id, m.time_start, m.time_grounded FROM memories m JOIN provenance p USING (memory_id) "
            "JOIN sources s USING (source_id) ORDER BY m.memory_id"
        ).fetchall()
    told = {turn: start for turn, start, grounded in rows if grounded}
    assert told.get("2001") == datetime(2024, 6, 14)  # "Today" on the evening it was said in California
    assert "2003" not in told and "2004" not in told  # the diary's and the old letter's May 15 are not 2024's
    assert told.get("2005") == datetime(2024, 5, 15)  # the cousin's wedding was
    asked = run("ask", "When did Maya fix the bicycle chain?", "--json", "--store", str(tmp_path / "s"))
    doc = json.loads(asked.stdout)
    assert _evidence_of(doc, "bicycle chain")["said_at"] == EVENING
    assert doc["answer"]["span"] == "14 June 2024", doc["answer"]
