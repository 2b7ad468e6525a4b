"""Days belong to the zone the person lived them in (issue 31, point 7): a zone-aware timestamp keeps its instant in
UTC and its offset beside it; "today" in a turn, "10 March" in a question, `--as-of` and `--since` are read on the
clock where things were said; a question's "yesterday" is its time range, never a word to match."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import duckdb
import pytest
from chats import new_memory, run

from ripplecli.api import Memory, NewTurn
from ripplecli.cues import without_relative_times
from ripplecli.extract.timeparse import ground_time
from ripplecli.extract.windows import placed_turns
from ripplecli.formats.discord import parse_discord
from ripplecli.formats.native import parse_native
from ripplecli.inputs import parse_time
from ripplecli.recall.index import RecallIndex
from ripplecli.store import schema
from ripplecli.store.layout import RECALL_DIR, RECALL_STAMP
from ripplecli.store.lookups import SqlReads
from ripplecli.store.recall_arrays import FORMAT

CALIFORNIA = timezone(timedelta(hours=-7))
EVENING = "2026-03-10T20:00:00-07:00"  # 11 March 03:00 in UTC
TENTH = (datetime(2026, 3, 10), datetime(2026, 3, 10, 23, 59, 59))
FILLER = [
    ("I cooked pasta with mushrooms for dinner.", "Sounds tasty."),
    ("The new job starts to feel normal.", "Good to hear."),
    ("I read two chapters of the history book.", "Which book?"),
    ("We watched the rain from the balcony.", "Cosy."),
    ("I called my sister about her wedding plans.", "When is it?"),
    ("The tomatoes on the balcony are ripe.", "Save me some."),
    ("I painted the kitchen shelf blue.", "Show me a photo."),
    ("My knee hurts after the long walk.", "Rest it."),
    ("I bought a new lamp for the desk.", "Nice."),
    ("The neighbours had a loud party.", "Annoying."),
]


def _session(name: str, when: str, alex: str, sam: str) -> dict:
    """Alex says something at `when`, Sam answers a minute later (same offset)."""
    later = (datetime.fromisoformat(when) + timedelta(minutes=1)).isoformat()
    return {
        "id": name,
        "timestamp": when,
        "turns": [
            {"speaker": "Alex", "text": alex, "said_at": when},
            {"speaker": "Sam", "text": sam, "said_at": later},
        ],
    }


def alex_chat(path: Path) -> Path:
    """Nine months of Alex's evenings in California: a "yesterday" in June, ten ordinary days, and the evening of
    10 March 2026 (11 March in UTC) when Alex fixed the bicycle chain."""
    climbing = "Yesterday I went climbing at the gym with Maya."
    sessions = [_session("june", "2025-06-05T19:00:00-07:00", climbing, "Fun?")]
    for n, (alex, sam) in enumerate(FILLER):
        day = datetime(2025, 6, 20, 19, 0, tzinfo=CALIFORNIA) + timedelta(days=25 * n)
        sessions.append(_session(f"f{n}", day.isoformat(), alex, sam))
    sessions.append(_session("chain", EVENING, "Today I fixed the bicycle chain.", "Good, we can ride on Sunday."))
    path.write_text(json.dumps({"conversation_id": "alex", "sessions": sessions}))
    return path


@pytest.fixture
def alex_store(tmp_path: Path, fake_settings, fake_extractor) -> Path:
    """The chat through the fake encoder and extractor."""
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(alex_chat(tmp_path / "alex.json"))
    return tmp_path / "store"


def _memory_of(store: Path, text: str) -> int:
    """The id of the memory whose restatement contains `text`."""
    with Memory(store, read_only=True) as memory:
        rows = memory.store.con.execute("SELECT memory_id FROM memories WHERE contains(restatement, ?)", [text])
        (found,) = rows.fetchall()
    return found[0]


# --- a turn keeps its instant and its offset; its words are read on its own day ----------------------------
def _chat() -> dict:
    """The evening of the bicycle chain alone, as parsed JSON."""
    turns = [{"speaker": "Alex", "text": "Today I fixed the bicycle chain.", "said_at": EVENING}]
    return {"conversation_id": "alex", "sessions": [{"timestamp": EVENING, "turns": turns}]}


def test_a_zoned_timestamp_keeps_its_instant_in_utc_and_its_offset() -> None:
    (chat,) = parse_native(_chat(), "a")
    (session,) = chat.sessions
    (turn,) = session.turns
    assert (turn.said_at, turn.offset) == (datetime(2026, 3, 11, 3, 0), timedelta(hours=-7))
    assert (session.timestamp, session.offset) == (datetime(2026, 3, 11, 3, 0), timedelta(hours=-7))
    (placed,) = placed_turns(chat)
    assert placed.timestamp == datetime(2026, 3, 10, 20, 0)  # the wall clock in California


def test_today_in_a_turn_is_the_day_where_it_was_said() -> None:
    (chat,) = parse_native(_chat(), "a")
    (placed,) = placed_turns(chat)
    start, end, grounded = ground_time(placed.turn.text, placed.timestamp)
    assert grounded and (start, end) == TENTH  # not 11 March, the day in UTC


def test_a_timestamp_without_a_zone_is_the_wall_clock_as_before() -> None:
    chat = {"sessions": [{"timestamp": "2023-05-08T13:56:00", "turns": [{"speaker": "Ana", "text": "Hi."}]}]}
    (parsed,) = parse_native(chat, "a")
    session = parsed.sessions[0]
    assert session.timestamp == datetime(2023, 5, 8, 13, 56) and session.offset is None
    assert placed_turns(parsed)[0].timestamp == datetime(2023, 5, 8, 13, 56)


def test_a_discord_message_keeps_the_exporters_offset() -> None:
    message = {
        "id": "1",
        "type": "Default",
        "timestamp": "2024-01-15T23:30:00+02:00",
        "content": "Today I moved the piano.",
        "author": {"name": "ana"},
    }
    (chat,) = parse_discord({"guild": {"name": "g"}, "channel": {"id": "9"}, "messages": [message]}, "d.json")
    (turn,) = chat.sessions[0].turns
    assert (turn.said_at, turn.offset) == (datetime(2024, 1, 15, 21, 30), timedelta(hours=2))
    assert chat.sessions[0].session_id == "2024-01-15" and placed_turns(chat)[0].timestamp.hour == 23


# --- the store keeps the offset; days are read on the wall clock ---------------------------------------------
def test_the_store_keeps_the_instant_and_the_offset(alex_store: Path) -> None:
    chain = _memory_of(alex_store, "bicycle chain")
    with Memory(alex_store, read_only=True) as memory:
        said = memory.store.con.execute("SELECT said_at, said_offset FROM memories WHERE memory_id = ?", [chain])
        assert said.fetchone() == (datetime(2026, 3, 11, 3, 0), -7 * 3600)
        turns = memory.store.con.execute("SELECT DISTINCT said_offset FROM sources").fetchall()
        assert turns == [(-7 * 3600,)]


def test_a_day_named_in_a_question_is_the_day_as_it_was_lived(alex_store: Path) -> None:
    chain = _memory_of(alex_store, "bicycle chain")
    with Memory(alex_store, read_only=True) as memory:
        result = memory.recall("What did Alex do on 10 March 2026?", k=5)
    assert result.trace.day is not None and result.trace.day.memories == 2  # Alex's and Sam's turns of that evening
    assert chain in [e.memory_id for e in result.evidence[:2]]


def test_every_way_of_reading_finds_the_days_on_the_wall_clock(alex_store: Path) -> None:
    chain = _memory_of(alex_store, "bicycle chain")
    with Memory(alex_store, read_only=True) as memory:
        loaded = RecallIndex.load(memory.store)  # a long-lived process
        arrays = memory.store.recall_arrays()  # a cold ask
        assert arrays is not None
        found = [reads.said_within(*TENTH) for reads in (loaded, arrays, SqlReads(memory.store))]
    assert found == [[chain, chain + 1]] * 3  # Alex's turn and Sam's answer, said on the evening of 10 March


def test_listing_by_date_reads_days_on_the_wall_clock(alex_store: Path) -> None:
    with Memory(alex_store, read_only=True) as memory:
        tenth = memory.list_memories(since=datetime(2026, 3, 10), until=datetime(2026, 3, 10, 23, 59, 59))
        instant = memory.list_memories(since=datetime(2026, 3, 11, 3, 0, tzinfo=UTC))
    assert [m["restatement"][:4] for m in tenth] == ["Alex", "Sam:"]  # the evening of 10 March in California
    assert len(instant) == 2  # a bound with a zone is an instant: the same two, said from 03:00 UTC on


# --- the question's date and its relative words ---------------------------------------------------------------
def test_as_of_with_an_offset_is_read_on_its_own_clock_like_a_plain_now(alex_store: Path, monkeypatch) -> None:
    import ripplecli.recall.pipeline as pipeline

    class LocalClock(datetime):
        @classmethod
        def now(cls, tz=None):  # the machine's clock in California, as a plain `now` reads it
            return datetime(2026, 3, 11, 20, 0)

    question = "What did Alex do yesterday?"
    with Memory(alex_store, read_only=True) as memory:
        zoned = memory.recall(question, as_of=datetime(2026, 3, 11, 20, 0, tzinfo=CALIFORNIA))  # 12 March in UTC
        monkeypatch.setattr(pipeline, "datetime", LocalClock)
        plain = memory.recall(question)
    expected = [t.isoformat() for t in TENTH]
    assert zoned.trace.query_cues.time_range == plain.trace.query_cues.time_range == expected


def test_a_question_about_yesterday_is_answered_by_yesterday(alex_store: Path) -> None:
    chain = _memory_of(alex_store, "bicycle chain")
    climbing = _memory_of(alex_store, "climbing")
    with Memory(alex_store, read_only=True) as memory:
        result = memory.recall("What did Alex do yesterday?", as_of=parse_time(EVENING, "as_of") + timedelta(days=1))
    assert result.trace.query_cues.keywords == ["alex"]  # "yesterday" is the time range, not a word
    assert result.trace.day is not None and result.trace.day.said_on == [t.isoformat() for t in TENTH]
    assert result.evidence[0].memory_id == chain
    lexical = [seed.id for seed in result.trace.seeds["lexical"]]
    assert climbing not in lexical[:1]  # its "Yesterday" matches nothing of the question


def test_relative_words_are_taken_out_of_the_text_views_match() -> None:
    assert without_relative_times("What did Alex do yesterday?") == "What did Alex do ?"
    assert without_relative_times("Where did we eat last  week or this year") == "Where did we eat or"
    assert without_relative_times("What happened in May 2023?") == "What happened in May 2023?"


def test_the_typed_answer_does_not_match_yesterday_as_a_word(alex_store: Path) -> None:
    with Memory(alex_store, read_only=True) as memory:
        result = memory.recall(
            "What did Alex do yesterday?", as_of=datetime(2026, 3, 11, 20, 0, tzinfo=CALIFORNIA), answer="typed"
        )
    assert result.answer is not None and "climbing" not in result.answer.text


def test_remember_reads_yesterday_on_the_speakers_day(tmp_path: Path, fake_settings, fake_extractor) -> None:
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.remember(NewTurn("Alex", "Today I fixed the bicycle chain.", datetime.fromisoformat(EVENING)))
        row = memory.store.con.execute("SELECT session_id, said_at, said_offset FROM memories").fetchone()
        assert row == ("2026-03-10", datetime(2026, 3, 11, 3, 0), -7 * 3600)
        found = memory.recall("What did Alex do on 10 March 2026?", k=1)
    assert found.evidence[0].restatement.endswith("bicycle chain.")


# --- older stores and exports ----------------------------------------------------------------------------------
def _make_schema_3(store: Path) -> None:
    """Turn a store into what ripple wrote before schema 4: no offsets (nor schema 5's message keys)."""
    con = duckdb.connect(str(store / "ripple.duckdb"))
    con.execute("DROP INDEX sources_hash")  # DuckDB drops no column of a table an index depends on
    con.execute("DROP INDEX sources_turn")
    for table in ("sources", "memories"):
        con.execute(f"ALTER TABLE {table} DROP COLUMN said_offset")
    con.execute("ALTER TABLE sources DROP COLUMN message_key")
    con.execute("CREATE INDEX sources_hash ON sources (content_hash)")
    con.execute("CREATE INDEX sources_turn ON sources (conversation_id, turn_id)")
    con.execute("DROP TABLE passages")  # nor schema 6's passages
    con.execute("DELETE FROM schema_migrations WHERE version >= 4")
    con.close()
    stamp = store / RECALL_DIR / RECALL_STAMP  # recall arrays as that ripple saved them (format 1: no said_local)
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "format": 1}))


def test_a_schema_3_store_migrates_and_reads_its_times_as_before(alex_store: Path) -> None:
    _make_schema_3(alex_store)
    with Memory(alex_store, read_only=True) as memory:  # migrated by a short writable open
        assert memory.store.schema_version() == schema.LATEST_VERSION == 6
        offsets = memory.store.con.execute("SELECT DISTINCT said_offset FROM memories").fetchall()
        unkeyed = memory.store.con.execute("SELECT count(*) FROM sources WHERE message_key IS NULL").fetchone()
        result = memory.recall("What did Alex do on 11 March 2026?", k=3)
    assert offsets == [(None,)]  # the zone was not kept: said_at is read as the wall clock, as schema 3 did
    assert unkeyed == (0,)  # schema 5 keyed every turn
    assert result.trace.day is not None and result.trace.day.memories == 2
    stamp = json.loads((alex_store / RECALL_DIR / RECALL_STAMP).read_text())
    assert stamp["format"] == FORMAT  # rebuilt by the migration
    with Memory(alex_store) as memory:
        assert memory.doctor()["ok"]


def test_an_export_keeps_the_offsets_and_an_older_one_imports(alex_store: Path, tmp_path: Path) -> None:
    with Memory(alex_store, read_only=True) as memory:
        memory.export(tmp_path / "new.jsonl")
    assert run("import", str(tmp_path / "new.jsonl"), "--store", str(tmp_path / "copy")).exit_code == 0
    lines = [json.loads(line) for line in (tmp_path / "new.jsonl").read_text().splitlines()]
    lines[0]["schema_version"] = 3
    for record in lines[1:]:
        record.pop("said_offset", None)
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert run("import", str(tmp_path / "old.jsonl"), "--store", str(tmp_path / "old")).exit_code == 0
    query = "SELECT DISTINCT said_offset FROM memories"
    with Memory(tmp_path / "copy", read_only=True) as copy, Memory(tmp_path / "old", read_only=True) as old:
        assert copy.store.con.execute(query).fetchall() == [(-7 * 3600,)]
        assert old.store.con.execute(query).fetchall() == [(None,)]


# --- the real parts ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_cli_reads_days_and_yesterday_where_they_were_lived(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    ingested = run("ingest", str(alex_chat(tmp_path / "alex.json")), "--store", store)
    assert ingested.exit_code == 0, ingested.stderr
    shown = json.loads(run("memories", "list", "--since", "2026-03-10", "--store", store, "--json").stdout)
    assert shown[0]["restatement"].endswith("fixed the bicycle chain.")
    assert shown[0]["refers_to"] == {"start": "2026-03-10T00:00:00", "end": "2026-03-10T23:59:59"}  # "Today"
    for question, as_of in (
        ("What did Alex do yesterday?", "2026-03-11T20:00:00-07:00"),
        ("What did Alex do on 10 March 2026?", None),
    ):
        args = ["ask", question, "--json", "--answer", "none", "--store", store]
        result = run(*args, *(["--as-of", as_of] if as_of else []))
        assert result.exit_code == 0, result.stderr
        document = json.loads(result.stdout)
        assert document["trace"]["day"]["said_on"][0] == "2026-03-10T00:00:00", question
        assert document["evidence"][0]["restatement"].endswith("fixed the bicycle chain."), question
