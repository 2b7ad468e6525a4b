"""Read phase: planner, diffusion, spreading activation and assembly on hand-built graphs; the trace; end to end."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from conftest import SAMPLE_CHATS
from rich.console import Console

from ripplecli.answer import Answer
from ripplecli.errors import InputError
from ripplecli.model import Edge, MemoryDraft, NewMemory
from ripplecli.recall import activation
from ripplecli.recall.assembly import (
    FOCUS_DEMOTION,
    PROTECTED_HEAD,
    SHARE_FROM,
    focus_speaker,
    merge_support,
    rerank,
    seed_ranking,
    speaker_first,
    speaker_share,
)
from ripplecli.recall.diffusion import diffuse, reachable
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.pipeline import RecallParams, validate
from ripplecli.recall.planner import Candidate, RulesPlanner
from ripplecli.recall.query import QueryCues, RulesQueryAnalyzer, answer_kind, time_range
from ripplecli.recall.views import ViewHits, cue_view, rrf
from ripplecli.store.db import Store
from ripplecli.trace import (
    Anchor,
    ChannelHit,
    Cues,
    Evidence,
    Focus,
    Plan,
    RecallResult,
    Round,
    Seed,
    SourceRef,
    Support,
    Target,
    Trace,
    ViewHit,
)


def hand_built(tmp_path: Path, edges: list[tuple[int, int, str, float]], cues: dict[int, list[str]]) -> Store:
    """A store with memories 1..N, the given edges and concept cues (no encoder needed)."""
    store = Store.open(tmp_path / "store")
    ids = sorted({m for e in edges for m in e[:2]} | set(cues))
    with store.transaction():
        drafts = {i: MemoryDraft(f"memory {i}", [], concepts=cues.get(i, []), extractor="test") for i in ids}
        store.add_memories([NewMemory(i, "c", "1", i, None, None, [], drafts[i]) for i in ids], run_id=1)
        store.add_edges([Edge(*edge) for edge in edges])
    return store


# --- planner ---------------------------------------------------------------------------------------
def test_planner_takes_strongest_seeds_and_targets_uncovered_cues() -> None:
    cues = QueryCues(
        "Should Alex take Maya to Harbor Grill?", persons=["alex", "maya"], concepts=["harbor grill", "allergy"]
    )
    evidence = [
        Candidate(1, 0.9, "a", concepts={"harbor grill"}),
        Candidate(2, 0.8, "b", concepts={"dinner"}),
        Candidate(3, 0.7, "c", persons={"maya"}),
        Candidate(4, 0.6, "d", concepts={"allergy"}),
    ]
    plan = RulesPlanner().plan(cues, evidence, speakers={"alex", "sam"})
    assert plan.proceed and plan.anchor_ids == [1, 2, 3]
    assert "allergy" in plan.missing and "harbor grill" in plan.covered
    assert plan.target is not None and plan.target.concepts == ["allergy"]
    assert not plan.target.restatement.endswith("?")


def test_planner_stops_without_evidence() -> None:
    plan = RulesPlanner().plan(QueryCues("q"), [], speakers=set())
    assert not plan.proceed and plan.stop_reason and plan.anchors == []


# --- diffusion -----------------------------------------------------------------------------------
def test_diffusion_respects_hops_exclusion_and_channel(tmp_path: Path) -> None:
    store = hand_built(
        tmp_path,
        [(1, 2, "semantic", 0.9), (2, 3, "semantic", 0.9), (3, 4, "semantic", 0.9), (1, 5, "structural", 0.8)],
        {},
    )
    found = reachable(store, [1], "semantic", hops=2)
    assert set(found) == {2, 3}  # 4 is three hops away; 5 is another channel
    assert found[3].path == [1, 2, 3]
    assert [s.memory_id for s in diffuse(store, [1], "semantic", None, exclude={2}, hops=2)] == [3]


def test_diffusion_top_n_and_ties_to_nearer_then_stronger(tmp_path: Path) -> None:
    edges = [(1, m, "semantic", 0.5 + m / 100) for m in range(2, 10)] + [(2, 20, "semantic", 0.99)]
    store = hand_built(tmp_path, edges, {})
    flat = diffuse(store, [1], "semantic", lambda ids: dict.fromkeys(ids, 1.0), exclude=set(), hops=2, top=5)
    assert len(flat) == 5
    assert all(len(s.path) == 2 for s in flat)  # equal scores: one-hop memories before the two-hop one
    assert [s.memory_id for s in flat] == [9, 8, 7, 6, 5]  # then stronger paths first


def test_spreading_activation_follows_shared_cues_and_skips_evidence(tmp_path: Path) -> None:
    cues = {
        1: ["harbor grill"],
        2: ["harbor grill", "oyster bar"],
        3: ["oyster bar"],
        4: ["knitting"],
        5: ["harbor grill"],
    }
    store = hand_built(tmp_path, [(1, 2, "contiguity", 1.0)], cues)
    found = activation.spread(RecallIndex.load(store), {"harbor grill": 1.0}, {1: 1.0}, exclude={1, 5}, top=5)
    ids = [a.memory_id for a in found]
    assert 2 in ids and 3 in ids and 4 not in ids and 5 not in ids and 1 not in ids
    assert ids.index(2) < ids.index(3)  # one cue step nearer the restart set
    assert "harbor grill" in next(a for a in found if a.memory_id == 2).via_cues


def test_local_graph_stays_within_the_node_budget_nearest_the_anchors(monkeypatch) -> None:
    """In a large store a cue held by thousands of memories spreads only to those nearest the anchors."""
    index = RecallIndex(version=1, texts={m: "" for m in range(1, 5001)})
    for m in range(1, 5001):
        for cue in ("garden", f"rare{m // 3}"):
            index.concepts_of[m].add(cue)
            index.holders[cue].append(m)
    monkeypatch.setattr(activation, "NODE_BUDGET", 300)
    graph = activation.local_graph(index, {"garden"}, {2500}, max_df=0.05)
    assert len(graph.memory_cues) <= 300
    assert all(abs(m - 2500) <= 200 for m in graph.memory_cues)  # the nearest holders, not the first ids


ACTIVATION_MASS = """
import sys
from ripplecli.recall import activation
cues = [f"cue{c}" for c in range(60)]
held = {m: {cues[(m * k) % 60] for k in (1, 3, 7, 11, 13)} for m in range(200)}
graph = activation.CueGraph(held, [(m, m + 1) for m in range(199)])
memories, mass = activation.personalised_pagerank(graph, {"cue7": 1.0, "cue21": 0.5}, {3: 1.0})
sys.stdout.write(repr(memories) + mass.tobytes().hex())
"""


def test_activation_mass_does_not_follow_the_string_hash_seed() -> None:
    """The cue sets' order changes with PYTHONHASHSEED; the mass must not (ties among equal masses would reorder
    evidence from one run to the next)."""
    import os
    import subprocess
    import sys

    outputs = {
        subprocess.run(
            [sys.executable, "-c", ACTIVATION_MASS],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(outputs) == 1


# --- assembly --------------------------------------------------------------------------------------
def test_activation_ranking_reorders_seeds() -> None:
    base = list(range(1, 21))
    assert rerank(base, [(12, 0.9), (15, 0.5)])[:3] == [12, 15, 1]  # seeds the activation also reaches rise


def test_focus_needs_exactly_one_speaker_of_the_chat() -> None:
    speakers = {"alex", "sam"}
    assert focus_speaker(["sam", "maya"], speakers) == "sam"  # Maya is talked about, not a speaker
    assert focus_speaker(["alex", "sam"], speakers) is None  # a question about both focuses on neither
    assert focus_speaker(["maya"], speakers) is None


def test_speaker_first_keeps_the_head_and_each_side_in_order() -> None:
    speaker_of = {m: "sam" if m % 2 else "alex" for m in range(1, 11)}
    ranked = speaker_first(list(range(1, 11)), speaker_of, "sam")
    assert FOCUS_DEMOTION == 5.0
    assert ranked == [1, 3, 5, 7, 9, 2, 4, 6, 8, 10]  # Alex's 2nd (place 10) sorts after Sam's 9th (place 9)


def test_the_speakers_nearest_memories_get_a_share_below_the_head() -> None:
    ranked = list(range(1, 61))
    own = [101, 102, 103, 104, 5]  # the speaker's memories by the question's vector: four the ranking lacks
    out, moved = speaker_share(ranked, own)
    assert out[:5] == [5, 1, 2, 3, 4]  # fused in at a quarter weight: 5, in both rankings, rises to the top
    assert sorted(out) == sorted({*ranked, *own})  # nothing lost, nothing twice
    below = out[SHARE_FROM:]
    assert [m for m in below[:8] if m > 100] == [m for m in own if m not in out[:SHARE_FROM]][:4]
    assert below[1] > 100 and below[3] > 100  # every other place below the head is the speaker's
    assert moved == [m for m in out[: 2 * SHARE_FROM] if m > 100]
    assert speaker_share(ranked, []) == (ranked, [])


def test_a_cue_on_a_fifth_of_the_store_seeds_nothing_even_alone() -> None:
    index = RecallIndex(version=1, texts={m: f"memory {m}" for m in range(1, 11)})
    index.person_holders.update({"caroline": [1, 2, 3, 4, 5, 6], "maya": [7]})
    common = cue_view(index, QueryCues("What workshop did Caroline attend?", persons=["caroline"]), 10)
    assert common.ranked == []  # "caroline" is on 6 of 10 memories: it would rank them newest first, by nothing
    rare = cue_view(index, QueryCues("Where is Maya?", persons=["maya"]), 10)
    assert [m for m, _ in rare.ranked] == [7]


def test_a_name_in_the_possessive_is_still_the_person() -> None:
    index = RecallIndex(version=1, texts={1: "Caroline: I went to the adoption agency."})
    index.speakers = {"caroline", "melanie"}
    cues = RulesQueryAnalyzer().analyze("What are Caroline's plans for the summer?", index, datetime(2024, 1, 1))
    assert cues.persons == ["caroline"]
    assert focus_speaker(cues.persons, index.speakers) == "caroline"
    curly = RulesQueryAnalyzer().analyze("What did Melanie’s kids like?", index, datetime(2024, 1, 1))
    assert curly.persons == ["melanie"]


def test_seed_ranking_puts_the_union_first() -> None:
    dense = ViewHits("dense", [(m, 1.0) for m in range(1, 21)])
    lexical = ViewHits("lexical", [(m, 1.0) for m in range(30, 40)])
    ranking = seed_ranking([dense, lexical])
    assert set(ranking[:15]) == set(range(1, 11)) | set(range(30, 35))


def test_support_enters_below_the_protected_head() -> None:
    base = list(range(1, 31))
    growth = [Support(100 + i, "activation", 1.0 - i / 10) for i in range(5)]
    merged = merge_support(base, growth)
    assert merged[:PROTECTED_HEAD] == base[:PROTECTED_HEAD]
    assert 100 in merged[PROTECTED_HEAD:25] and set(merged) == set(base) | {100, 101, 102, 103, 104}
    assert rrf([([(1, 0.0), (2, 0.0)], 1.0)], 60)[1] > rrf([([(1, 0.0), (2, 0.0)], 1.0)], 60)[2]


@pytest.mark.parametrize(
    ("question", "params"),
    [
        ("", RecallParams()),
        ("  ", RecallParams()),
        ("q", RecallParams(k=0)),
        ("q", RecallParams(rounds=-1)),
        ("q", RecallParams(mode="nope")),
    ],
)
def test_bad_recall_arguments_are_one_clear_error(question: str, params: RecallParams) -> None:
    with pytest.raises(InputError):
        validate(question, params)


def test_answer_kind_names_place_questions_only() -> None:
    assert answer_kind("Which cities has Jon visited?") == "place"
    assert answer_kind("Where did Maya go last summer?") == "place"
    assert answer_kind("What European countries has Maria been to?") == "place"
    assert answer_kind("What did Jon eat for dinner?") is None


def test_wanted_kind_adds_the_speakers_place_memories_beyond_the_seeds() -> None:
    """A place question gets the best-fused memories that name a place, said by the speaker it is about."""
    from ripplecli.recall.context import Growth, RecallContext
    from ripplecli.recall.pipeline import _with_wanted_kind

    index = RecallIndex(version=1, speakers={"jon", "gina"})
    index.speaker_of = {m: "jon" if m < 8 else "gina" for m in range(1, 10)}
    for mid in (2, 5, 6, 8):
        index.locations_of[mid].add("rome")
    cues = QueryCues("Which cities has Jon visited?", persons=["jon"], wants="place")
    fused = {m: 1.0 / m for m in range(1, 10)}
    ctx = RecallContext(
        store=None, index=index, encoder=None, planner=None, params=RecallParams(),  # type: ignore[arg-type]
        cues=cues, seeds=[1, 2], fused=fused, vector=None,
    )  # fmt: skip
    growth = _with_wanted_kind(ctx, Growth())
    assert [s.memory_id for s in growth.support] == [5, 6]  # 2 is a seed already; 8 is Gina's
    assert [s.memory_id for s in growth.shown["wanted place"]] == [5, 6]
    assert {s.channel for s in growth.support} == {"place"}


def test_a_kind_only_a_model_planner_wanted_ranks_after_the_rules_support() -> None:
    """ "place" judged missing for "What outdoor activities does John enjoy?" may add memories, never displace."""
    from ripplecli.recall.assembly import PLANNED_KIND
    from ripplecli.recall.context import Growth, RecallContext
    from ripplecli.recall.pipeline import _with_wanted_kind
    from ripplecli.trace import Plan, Round, Target

    index = RecallIndex(version=1, speakers={"john"})
    index.speaker_of = dict.fromkeys(range(1, 30), "john")
    for mid in (20, 21):
        index.locations_of[mid].add("park")
    cues = QueryCues("What outdoor activities does John enjoy?", persons=["john"])
    fused = {m: 1.0 / m for m in range(1, 30)}
    ctx = RecallContext(
        store=None, index=index, encoder=None, planner=None, params=RecallParams(),  # type: ignore[arg-type]
        cues=cues, seeds=list(range(1, 13)), fused=fused, vector=None,
    )  # fmt: skip
    planned = Plan("continue", None, [], Target("John: outdoor activities", [], [], [], None, "place"), [], [])
    rules_support = [Support(m, "activation", 1.0, [1, m]) for m in (25, 26)]
    growth = _with_wanted_kind(ctx, Growth(list(rules_support), rounds=[Round(1, planned)]))
    assert {s.channel for s in growth.support[2:]} == {PLANNED_KIND}
    merged = merge_support(list(range(1, 13)), growth.support)
    assert merged.index(25) < merged.index(20) and merged.index(26) < merged.index(21)


def test_question_time_ranges() -> None:
    as_of = datetime(2023, 8, 20, 12, 0)
    assert time_range("What happened in May 2023?", as_of)[0] == datetime(2023, 5, 1)
    assert time_range("What did she do last year?", as_of)[0] == datetime(2022, 1, 1)
    assert time_range("Where did they go?", as_of) is None


# --- the trace -------------------------------------------------------------------------------------
def test_trace_renders_every_section_at_a_fixed_width() -> None:
    from ripplecli.cli.render import trace_tree

    evidence = [
        Evidence(
            7,
            "Sam: Harbor Grill is by the marina.",
            0.5,
            1,
            ["D1:3"],
            [SourceRef("D1:3", "1", "Sam", "Harbor Grill is by the marina.", "2026-04-23T19:00:00")],
            [ViewHit("dense", 1, 0.7, True)],
        ),
        Evidence(
            9,
            "Alex: the oyster bar was packed.",
            0.4,
            2,
            ["D2:11"],
            [],
            [ChannelHit("activation", [7, 9], [], 0.01)],
        ),
    ]
    trace = Trace(
        Cues("", ["harbor", "grill"], ["maya"], [], ["harbor grill"], None, None),
        "ripple",
        seeds={"dense": [Seed(7, 0.7, "Sam: Harbor Grill is by the marina.")]},
        rounds=[
            Round(
                1,
                Plan(
                    "continue",
                    None,
                    [Anchor(7, "x")],
                    Target("Maya: allergy", ["maya"], [], ["allergy"], None, None),
                    [],
                    ["allergy"],
                ),
                {"activation": [Support(9, "activation", 0.01, [7, 9], [], ["harbor grill"], text="oyster")]},
            )
        ],
        focus=Focus("alex", 5.0),
    )
    result = RecallResult(
        "Should Alex take Maya to Harbor Grill?",
        "ripple",
        2,
        evidence,
        trace,
        Answer("extractive", "Harbor Grill is by the marina. [m7]", [7]),
    )
    console = Console(width=100, record=True)
    console.print(trace_tree(result))
    text = console.export_text()
    for needle in (
        "query cues",
        "seeds",
        "round 1",
        "anchors",
        "missing-support target",
        "activation",
        "m7 → m9",
        "via cues: harbor grill",
        "alex: what others said ranks 5× further down",
        "evidence (2)",
        "D1:3 · said 2026-04-23 19:00",
        "answer (extractive)",
    ):
        assert needle in text, needle
    assert max(len(line) for line in text.splitlines()) <= 100


# --- end to end through the real encoder, spaCy and dateparser -----------------------------------------
@pytest.fixture(scope="module")
def dinner_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ripplecli import Memory

    path = tmp_path_factory.mktemp("dinner") / "store"
    with Memory(path) as memory:
        memory.ingest(SAMPLE_CHATS / "dinner.json")
    return path


@pytest.mark.slow
def test_graph_reaches_evidence_that_seeds_miss(dinner_store: Path) -> None:
    """The seafood turn (D2:11) never names the question's words: only the graph brings it in."""
    from ripplecli import Memory

    with Memory(dinner_store, read_only=True) as memory:
        question = "What kind of food is Harbor Grill known for?"
        ripple = memory.recall(question, k=10, mode="ripple")
        seeds = memory.recall(question, k=10, mode="seeds")
    turns = lambda result: {t for e in result.evidence for t in e.source_turns}  # noqa: E731
    assert "D2:11" in turns(ripple) and "D2:11" not in turns(seeds)
    found = next(e for e in ripple.evidence if "D2:11" in e.source_turns)
    assert any(getattr(p, "channel", None) == "activation" for p in found.provenance)


@pytest.mark.slow
def test_query_path_loads_no_heavy_library(dinner_store: Path) -> None:
    """After the one-time ONNX export, an ask needs numpy, duckdb, hnswlib and onnxruntime: no torch, spaCy, bm25s
    or scipy (each costs 0.1-5 s of a cold `ripple ask`)."""
    import subprocess
    import sys

    script = (
        "import sys; from pathlib import Path; from ripplecli import Memory; "
        f"m = Memory(Path({str(dinner_store)!r}), read_only=True); "
        "m.recall('Should Alex take Maya to Harbor Grill?', answer='none'); "
        "print(sorted(n for n in ('torch', 'spacy', 'sentence_transformers', 'bm25s', 'scipy') if n in sys.modules))"
    )
    run = lambda: subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)  # noqa: E731
    run()  # the first ask in this test's cache may export the encoder (torch), once
    assert run().stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
def test_ask_json_document(dinner_store: Path) -> None:
    from typer.testing import CliRunner

    from ripplecli.cli import app

    result = CliRunner().invoke(
        app, ["ask", "Should Alex take Maya to Harbor Grill?", "--json", "--store", str(dinner_store)]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert {"question", "mode", "k", "evidence", "trace", "answer", "seconds"} <= set(doc)
    assert {"query_cues", "seeds", "rounds", "evidence"} <= set(doc["trace"])
    first = doc["evidence"][0]
    assert {"memory_id", "rank", "restatement", "source_turns", "sources", "provenance", "tokens"} <= set(first)
    assert doc["answer"]["citations"] and set(doc["answer"]["citations"]) <= {e["memory_id"] for e in doc["evidence"]}
    planner = doc["trace"]["rounds"][0]["planner"]
    assert planner["decision"] == "continue" and 1 <= len(planner["anchors"]) <= 3
    focus = doc["trace"]["focus"]
    assert (focus["speaker"], focus["others_demoted"]) == ("alex", 5.0)  # the one speaker the question names
    assert set(focus.get("shared", [])) <= set(doc["trace"]["evidence"])  # Alex's nearest memories, moved up
    by_alex = [all(s["speaker"] == "Alex" for s in e["sources"]) for e in doc["evidence"]]
    assert sum(by_alex[:5]) >= 4  # Alex's own turns lead


@pytest.mark.slow
def test_ask_trace_at_fixed_width(dinner_store: Path) -> None:
    from typer.testing import CliRunner

    from ripplecli.cli import app

    result = CliRunner().invoke(
        app,
        ["ask", "Should Alex take Maya to Harbor Grill?", "--k", "12", "--store", str(dinner_store)],
        env={"COLUMNS": "100"},
    )
    assert result.exit_code == 0, result.output
    for needle in ("query cues", "seeds", "planner", "missing-support target", "evidence (12", "answer"):
        assert needle in result.output


@pytest.mark.slow
def test_ask_with_a_zone_aware_as_of(dinner_store: Path) -> None:
    """An --as-of with an offset is read on its own clock (as the stored days are), not a traceback."""
    from typer.testing import CliRunner

    from ripplecli.cli import app

    args = ["ask", "What did Alex do last week?", "--as-of", "2026-05-01T10:00+02:00", "--store", str(dinner_store)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["trace"]["query_cues"]["time_range"]
