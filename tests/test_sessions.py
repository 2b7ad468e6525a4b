"""Sessions as units (`ripple+sessions`): session membership, the session view, session-local recall, list questions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from test_json_schema import check, schema
from test_recall import hand_built
from typer.testing import CliRunner

from ripplecli.cli import app
from ripplecli.recall import pipeline
from ripplecli.recall.context import KIND_WEIGHT, RecallContext, RecallParams
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.query import QueryCues, list_kind, wants_many
from ripplecli.recall.sessions import Sessions, local_ranking, session_view
from ripplecli.recall.views import ViewHits
from ripplecli.trace import Anchor, Cues, Focus, Plan, RecallResult, Round, SessionRank, Support, Target, Trace

# Two sessions: 1-2-3-4-5 and 6-7-8-9, joined by their contiguity links only.
CONTIGUITY = [
    (1, 2, "contiguity", 1.0),
    (2, 3, "contiguity", 1.0),
    (3, 4, "contiguity", 1.0),
    (4, 5, "contiguity", 1.0),
]
CONTIGUITY += [(6, 7, "contiguity", 1.0), (7, 8, "contiguity", 1.0), (8, 9, "contiguity", 1.0)]
CUES = {1: ["dog"], 2: ["weather"], 3: ["work"], 4: ["weather"], 5: ["dog", "biscuit"], 6: ["dog"], 7: ["tea"]}


@pytest.fixture
def index(tmp_path: Path) -> tuple[RecallIndex, object]:
    """The two-session store and its recall maps."""
    store = hand_built(tmp_path, CONTIGUITY, CUES)
    return RecallIndex.load(store), store


def test_sessions_are_walked_from_contiguity_links(index) -> None:
    sessions = Sessions(index[0])
    assert sessions.of(3) == sessions.of(5) == 1 and sessions.of(8) == 6
    assert sessions.members(4) == [1, 2, 3, 4, 5] and sessions.members(9) == [6, 7, 8, 9]


def test_session_view_ranks_sessions_as_units(index) -> None:
    """The best single memory (6) sits in a session with nothing else; the session holding three fair matches wins."""
    dense = ViewHits("dense", [(6, 0.9), (2, 0.5), (4, 0.4), (5, 0.3)])
    lexical = ViewHits("lexical", [(6, 3.0), (5, 2.0), (2, 1.0)])
    hits, ranked = session_view([dense, lexical, ViewHits("cue", [(7, 1.0)])], Sessions(index[0]), 5.0, 40)
    assert [key for key, _ in ranked] == [1, 6]
    assert hits.view == "session" and [m for m, _ in hits.ranked] == [2, 5, 4, 6]  # the cue view does not count


def test_session_local_reads_the_anchors_session_beyond_its_neighbours(index, monkeypatch) -> None:
    """From anchor 1, the rest of its session ranks by the question's rare cues: 5 (two hops away) comes first."""
    recall_index, store = index
    monkeypatch.setattr(pipeline, "SESSION_LOCAL_TOP", 2)
    cues = QueryCues("What are the names of the dogs?", concepts=["dog", "biscuit"], many=True)
    ctx = RecallContext(
        store=store, index=recall_index, encoder=None, planner=None, params=RecallParams(),  # type: ignore[arg-type]
        cues=cues, seeds=[1], fused={1: 1.0}, vector=None,
    )  # fmt: skip
    target = Target("Someone: dog", many=True)
    plan = Plan(decision="continue", stop_reason=None, anchors=[Anchor(id=1, text="")], target=target)
    found = pipeline._session_local(ctx, plan, {1})
    assert [s.memory_id for s in found] == [5, 2]  # 5 shares both cues; 2 is only a neighbour
    assert found[0].channel == "session" and found[0].path == [1, 5]
    assert next(m for m, _ in local_ranking(store, recall_index, [2, 3, 4, 5], None, {"dog": 1.0})) == 5


def test_list_items_come_from_sessions_the_seeds_have_not_covered(index) -> None:
    recall_index, store = index
    cues = QueryCues("What are the names of the dogs?", concepts=["dog"], many=True)
    fused = {1: 0.9, 2: 0.8, 7: 0.5}
    ctx = RecallContext(
        store=store, index=recall_index, encoder=None, planner=None, params=RecallParams(),  # type: ignore[arg-type]
        cues=cues, seeds=[1, 2], fused=fused, vector=None,
    )  # fmt: skip
    found = pipeline._list_items(ctx, {1, 2})
    assert [(s.memory_id, s.channel) for s in found] == [(6, "list")]  # session 6-9's best item by the cue "dog"


def test_list_questions() -> None:
    for question in (
        "What books has Melanie read?",
        "Which cities has Jon visited?",
        "What are the names of James's dogs?",
        "What activities does Melanie partake in?",
    ):
        assert wants_many(question), question
    for question in ("What is the name of Maria's puppy?", "When did Caroline go hiking?", "What was Jon's job?"):
        assert not wants_many(question), question


def test_a_list_question_names_the_kind_of_item_it_wants() -> None:
    assert list_kind("What books has Melanie read?") == "books"
    assert list_kind("What martial arts has John done?") == "martial arts"
    assert list_kind("What kind of activities did John do?") == "activities"
    assert list_kind("What are the names of John's children?") == "children"
    assert list_kind("What are some changes Caroline has faced?") == "changes"
    assert list_kind("When did Melanie read the book?") is None


def test_a_list_questions_kind_moves_the_speakers_items_up(index) -> None:
    recall_index, store = index
    cues = QueryCues("What dogs has Sam had?", many=True)
    vectors = {"dogs": np.array([0.0, 1.0])}
    encoder = type("E", (), {"encode": lambda self, texts: np.stack([vectors[t] for t in texts])})()
    ctx = RecallContext(
        store=store, index=recall_index, encoder=lambda: encoder, planner=None, params=RecallParams(),  # type: ignore[arg-type]
        cues=cues, seeds=[], fused={}, vector=np.array([1.0, 0.0]), kind="dogs",
    )  # fmt: skip
    assert ctx.kind_vector().tolist() == [1.0, KIND_WEIGHT]  # the question's vector plus half the kind's
    assert ctx.kind_vector() is ctx.kind_vector()  # the kind word is encoded once per question
    ctx.kind = None
    ctx._kind_vector = None
    assert ctx.kind_vector() is None


def test_trace_renders_the_session_view_and_the_list_target() -> None:
    from ripplecli.cli.render import trace_tree

    target = Target("Melanie: book", persons=["melanie"], concepts=["book"], many=True)
    plan = Plan(decision="continue", stop_reason=None, anchors=[], target=target)
    support = {"session": [Support(5, "session", 0.4, [1, 5], text="m5")], "list": [Support(6, "list", 0.3, [6])]}
    trace = Trace(
        Cues("", ["books"], ["melanie"], [], ["book"], None, None, many=True, kind="books"),
        "ripple+sessions",
        seeds={"session": []},
        rounds=[Round(1, plan, support, "list target met: items from 3 sessions")],
        sessions=[SessionRank(1, 0.25, [1, 2, 3, 4, 5])],
    )
    console = Console(width=100, record=True)
    console.print(trace_tree(RecallResult("What books has Melanie read?", "ripple+sessions", 5, [], trace)))
    text = console.export_text()
    for needle in (
        "wants: a list of books",
        "sessions (ranked as units, 1)",
        "session of m1…m5 (5 memories)",
        "list: more from other sessions",
        "support · session (1)",
        "m1 → m5",
        "support · list (1)",
        "stop: list target met: items from 3 sessions",
    ):
        assert needle in text, needle
    document = trace.to_dict()
    assert document["sessions"] == [{"session": 1, "score": 0.25, "members": [1, 2, 3, 4, 5]}]
    assert document["query_cues"]["many"] is True and document["rounds"][0]["planner"]["target"]["many"] is True
    assert document["query_cues"]["kind"] == "books"


def test_trace_renders_the_speakers_share() -> None:
    from ripplecli.cli.render import trace_tree

    trace = Trace(Cues("", [], ["melanie"], [], [], None, None), "ripple", focus=Focus("melanie", 5.0, [12, 40]))
    console = Console(width=100, record=True)
    console.print(trace_tree(RecallResult("What does Melanie paint?", "ripple", 10, [], trace)))
    text = console.export_text()
    assert "focus · melanie: what others said ranks 5× further down" in text
    assert "melanie's own memories nearest the question, moved up: m12, m40" in text
    assert trace.to_dict()["focus"] == {"speaker": "melanie", "others_demoted": 5.0, "shared": [12, 40]}
    assert "shared" not in Focus("melanie", 5.0).to_dict()  # only when it moved some


# --- a sample chat: a list whose items sit in three sessions ------------------------------------------------
HOBBY_DECOYS = [
    "Nora, which hobbies are you thinking about?",
    "Hobbies keep me sane, Sam.",
    "Hobbies are the best way to meet people.",
    "I need hobbies that are not screens.",
    "The library lists hobbies for newcomers.",
    "Hobbies cost money though.",
    "Free hobbies exist, Nora.",
    "Name three hobbies you would try.",
    "I can never choose between hobbies.",
    "Pick hobbies with a fixed weekday.",
    "Hobbies with people, not alone.",
    "My sister says hobbies fix everything.",
]
FILLER = [
    ("Sam", "How was your week?"),
    ("Nora", "Busy, the office moved floors."),
    ("Sam", "Did they give you a window?"),
    ("Nora", "A window and a plant."),
]


def hobbies_chat(path: Path) -> Path:
    """Nora's three new hobbies, one per session, each said without the word; the first session talks hobbies."""
    first = [("Sam", "Hey Nora, how was the move?"), ("Nora", "My first new hobby is pottery, on Tuesdays.")]
    first += [("Sam" if i % 2 == 0 else "Nora", text) for i, text in enumerate(HOBBY_DECOYS)]
    second = [*FILLER[:2], ("Nora", "Guess what, I joined a choir, we sing on Thursday evenings."), *FILLER[2:]]
    third = [*FILLER[:2], ("Nora", "And I climb now: bouldering at the gym twice a week."), *FILLER[2:]]
    days = ["2026-03-01T18:00:00", "2026-03-15T19:00:00", "2026-04-02T20:00:00"]
    sessions = [
        {"timestamp": day, "turns": [{"speaker": who, "text": text} for who, text in turns]}
        for day, turns in zip(days, (first, second, third), strict=True)
    ]
    path.write_text(json.dumps({"conversation_id": "new-hobbies", "sessions": sessions}), encoding="utf-8")
    return path


@pytest.fixture
def hobbies_store(tmp_path: Path, fake_settings, fake_extractor) -> Path:
    """The hobbies chat through the fake encoder and extractor."""
    from chats import new_memory

    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(hobbies_chat(tmp_path / "hobbies.json"))
    return tmp_path / "store"


def test_a_list_question_reaches_items_in_three_sessions(hobbies_store: Path) -> None:
    from ripplecli.api import Memory

    question = "What hobbies has Nora taken up?"
    items = {"pottery", "choir", "bouldering"}
    with Memory(hobbies_store, read_only=True) as memory:
        sessions = memory.recall(question, k=16, mode="ripple+sessions")
        default = memory.recall(question, k=16)
        seeds = memory.recall(question, k=16, mode="seeds")
    found = lambda result: {w for e in result.evidence for w in items if w in e.restatement}  # noqa: E731
    assert found(sessions) == items
    assert found(default) == items, [e.restatement for e in default.evidence]
    assert found(seeds) != items
    assert sessions.trace.query_cues.many and sessions.trace.sessions
    assert default.trace.query_cues.kind == "hobbies" and seeds.trace.query_cues.kind is None
    stopped = sessions.trace.rounds[-1].stopped or ""
    assert stopped.startswith(("list target met", "round budget", "no new support"))


def test_a_list_question_writes_the_documented_schema(hobbies_store: Path) -> None:
    args = ["ask", "What hobbies has Nora taken up?", "--mode", "ripple+sessions", "--json", "--answer", "none"]
    result = CliRunner().invoke(app, [*args, "--store", str(hobbies_store)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    check(document, "document", schema(), "document")
    assert document["trace"]["sessions"] and document["trace"]["query_cues"]["many"] is True
