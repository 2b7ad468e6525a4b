"""A question naming a day in full ("on 25 May, 2022") asks about what was said that day: the cue view finds it
and the day focus ranks it first (recall/query.said_on, views.cue_view, assembly.said_first)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from rich.console import Console
from test_json_schema import check, schema
from typer.testing import CliRunner

from ripplecli.cli import app
from ripplecli.recall.assembly import said_first
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.query import QueryCues, said_on, time_range
from ripplecli.recall.views import cue_view
from ripplecli.trace import Cues, DayFocus, RecallResult, Trace


def test_a_day_named_in_full_is_read_in_either_order() -> None:
    day = (datetime(2022, 5, 25), datetime(2022, 5, 25, 23, 59, 59))
    assert said_on("What did Nate do for Joanna on 25 May, 2022?") == day
    assert said_on("What did Nate do on May 25, 2022?") == day
    assert said_on("What book did Tim finish on 8th December, 2023?")[0] == datetime(2023, 12, 8)
    assert said_on("Where was the picture shared on December 1,2023 taken?")[0] == datetime(2023, 12, 1)
    assert said_on("between 3 May 2023 and 5 May 2023?") == (datetime(2023, 5, 3), datetime(2023, 5, 5, 23, 59, 59))


def test_a_month_or_an_impossible_day_names_no_day() -> None:
    assert said_on("What did Melanie paint in May 2023?") is None
    assert said_on("When did Melanie go camping in June?") is None
    assert said_on("What happened on 31 February, 2023?") is None


def test_a_month_without_its_year_is_the_latest_one() -> None:
    as_of = datetime(2022, 11, 20)
    assert time_range("Which outdoor spot did Joanna visit in May?", as_of)[0] == datetime(2022, 5, 1)
    assert time_range("When did Melanie go camping during early December?", as_of)[0] == datetime(2021, 12, 1)
    assert time_range("What did Nate cook in November?", as_of) == (
        datetime(2022, 11, 1),
        datetime(2022, 11, 30, 23, 59, 59),
    )
    assert time_range("Who may come to the party?", as_of) is None


def _index() -> RecallIndex:
    """Twenty memories said over ten days, two a day, with one cue on the first three."""
    index = RecallIndex(version=1, texts={m: f"memory {m}" for m in range(1, 21)})
    index.placed = {m: ("chat", datetime(2023, 5, (m + 1) // 2, 12)) for m in range(1, 21)}
    for m in (1, 2, 3):
        index.concepts_of[m].add("garden")
        index.holders["garden"].append(m)
    return index


def test_the_cue_view_finds_what_was_said_on_the_day() -> None:
    index = _index()
    assert index.said_within(datetime(2023, 5, 2), datetime(2023, 5, 2, 23, 59, 59)) == [3, 4]
    cues = QueryCues("", concepts=["garden"], said_on=(datetime(2023, 5, 2), datetime(2023, 5, 2, 23, 59, 59)))
    ranked = [m for m, _ in cue_view(index, cues, 10).ranked]
    assert ranked[0] == 3  # the day and the cue
    assert set(ranked) == {1, 2, 3, 4}
    in_range = QueryCues("", time_range=(datetime(2023, 5, 9), datetime(2023, 5, 10, 23, 59, 59)))
    assert {m for m, _ in cue_view(index, in_range, 10).ranked} == {17, 18, 19, 20}  # said within the time range


def test_said_first_demotes_the_other_days_like_the_speaker_focus() -> None:
    ranked = list(range(1, 13))
    moved = said_first(ranked, {9, 12})
    assert moved[:4] == [1, 9, 2, 12]  # 9 and 12 keep places 9 and 12; the others' places are 5, 10, 15, …


def test_trace_renders_the_day_focus() -> None:
    from ripplecli.cli.render import trace_tree

    day = ["2023-05-04T00:00:00", "2023-05-04T23:59:59"]
    trace = Trace(Cues("", [], [], [], [], None, None, said_on=day), "ripple", day=DayFocus(day, 5.0, 3))
    console = Console(width=120, record=True)
    console.print(trace_tree(RecallResult("What was said on 4 May, 2023?", "ripple", 10, [], trace)))
    text = console.export_text()
    assert "said on: 2023-05-04" in text
    assert "day · 2023-05-04: 3 memories said then; what was said on other days ranks 5× further down" in text
    document = trace.to_dict()
    assert document["day"] == {"said_on": day, "others_demoted": 5.0, "memories": 3}
    assert document["query_cues"]["said_on"] == day


GARDEN_DAYS = [
    [("Ana", "The tomatoes finally came up in the garden."), ("Ben", "Great, mine are still seeds.")],
    [("Ana", "Bought a new watering can for the garden."), ("Ben", "Which colour?"), ("Ana", "Green.")],
    [("Ben", "Rain all day here."), ("Ana", "Same, the garden is a swamp.")],
    [("Ana", "I moved the pots to the sunny side."), ("Ben", "Smart.")],
    [("Ben", "Are the beans climbing yet?"), ("Ana", "Yes, the garden beans reach the fence now.")],
    [("Ana", "Picked the first courgette from the garden today!"), ("Ben", "Save me one.")],
]


@pytest.fixture
def garden_store(tmp_path: Path, fake_settings, fake_extractor) -> Path:
    """Six days of a garden chat (one session a day) through the fake encoder and extractor."""
    from chats import new_memory, session, write_chat

    sessions = [session(n, turns, datetime(2023, 5, n, 18, 0)) for n, turns in enumerate(GARDEN_DAYS, start=1)]
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write_chat(tmp_path / "garden.json", sessions))
    return tmp_path / "store"


def test_a_question_naming_a_day_ranks_what_was_said_then_first(garden_store: Path) -> None:
    from ripplecli.api import Memory

    with Memory(garden_store, read_only=True) as memory:
        result = memory.recall("What did Ana say about the garden on 4 May, 2023?", k=10)
        other = memory.recall("What did Ana say about the garden?", k=10)
    assert result.trace.day is not None and result.trace.day.memories == 2
    on_the_day = lambda r: {e.memory_id: e.rank for e in r.evidence if e.said_at.startswith("2023-05-04")}  # noqa: E731
    said, before = on_the_day(result), on_the_day(other)
    assert len(said) == 2 and all(said[m] < before.get(m, 11) for m in said)  # both rose
    assert min(said.values()) <= 3  # Ana's (Ben's "Smart." still ranks below Ana's other days: the speaker focus)
    assert other.trace.day is None and other.trace.query_cues.said_on is None


def test_a_day_question_writes_the_documented_schema(garden_store: Path) -> None:
    args = ["ask", "What did Ana say on 4 May, 2023?", "--json", "--answer", "none", "--store", str(garden_store)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    check(document, "document", schema(), "document")
    assert document["trace"]["day"]["memories"] == 2
