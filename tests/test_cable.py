"""CABLE (issue 6): antecedent queries, subtraction, verification, edges, backfill, host mode, end to end."""

from __future__ import annotations

import json
from datetime import datetime

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from ripplecli.api import Memory
from ripplecli.cli import app
from ripplecli.cli.render import trace_tree
from ripplecli.graph.antecedents import (
    LLMQuerier,
    MemoryView,
    RulesQuerier,
    about_self,
    low_information,
    memory_type,
)
from ripplecli.graph.cable import CableLinker, CableParams, older_neighbours
from ripplecli.graph.verifiers import Candidate, LLMVerifier, RulesVerifier, Verdict, rare_shared
from ripplecli.model import Conversation, Edge, Session, Turn
from ripplecli.recall import cable as read_side

FILLER = [
    "Jordan: I ran the 10K race route again, raising money for the race felt good",
    "Jordan: My 10K race fundraising page raised money from coworkers",
    "Jordan: I signed up friends to run the 10K race with me",
    "Jordan: Training for the 10K race, I ran intervals and raised my pace",
    "Jordan: The 10K race money goal is 1,500 dollars, I signed the pledge",
]


def view(mid: int, speaker: str, text: str, persons=(), stamp: datetime | None = None) -> MemoryView:
    """A MemoryView for unit tests."""
    return MemoryView(mid, "c", speaker, f"{speaker}: {text}", list(persons), [], stamp)


def chat(turns: list[tuple[str, str]], sessions: int = 1) -> Conversation:
    """A two-person chat split evenly into dated sessions."""
    size = -(-len(turns) // sessions)
    out = []
    for n in range(sessions):
        part = turns[n * size : (n + 1) * size]
        out.append(
            Session(
                str(n + 1),
                datetime(2026, 1 + n, 1, 10),
                [Turn(f"D{n + 1}:{i + 1}", s, t) for i, (s, t) in enumerate(part)],
            )
        )
    return Conversation("run", out)


def motivation_chat() -> Conversation:
    """The diagnosis (first session), 24 running turns that crowd the direct neighbourhood, then the race."""
    turns = [("Jordan", "My aunt Teresa was diagnosed with lymphoma. I care about her so much.")]
    turns += [("Riley", "So sorry to hear that, tell me if I can help.")]
    turns += [("Jordan", FILLER[i % len(FILLER)].split(": ", 1)[1] + f" week {i}") for i in range(24)]
    turns += [("Jordan", "I signed up for a 10K race to raise money for the lymphoma foundation.")]
    return chat(turns, sessions=2)


class AcceptAll:
    """A verifier that accepts every candidate (to test what reaches verification)."""

    name = "all"

    def verify(self, memory, candidates, speakers):
        return [Verdict(True, round(c.query_match, 4), "test") for c in candidates]


@pytest.fixture
def store_with_chat(tmp_path, fake_settings):
    """A store holding the motivation chat, without links."""
    memory = Memory(tmp_path / "store")
    memory.configure(fake_settings)
    memory.ingest_conversations([motivation_chat()])
    yield memory
    memory.close()


def antecedent_edges(memory: Memory, channel: str = "antecedent") -> list[tuple[int, int, float, str]]:
    """Every antecedent edge of the store."""
    return memory.store.con.execute(
        "SELECT src, dst, weight, info FROM edges WHERE channel = ? ORDER BY dst, src", [channel]
    ).fetchall()


# --- step 1: filter and queries ----------------------------------------------------------------------
def test_low_information_units_are_skipped():
    speakers = {"jordan", "riley"}
    assert low_information(view(1, "Riley", "Thanks, Jordan!"), speakers)
    assert low_information(view(2, "Riley", "Morning!"), speakers)
    assert low_information(view(3, "Riley", "How is she taking it, and what did the doctors say?"), speakers)
    assert not low_information(view(4, "Jordan", "My aunt Teresa was diagnosed with lymphoma on Monday."), speakers)


def test_rules_queries_follow_the_memory_type():
    race = view(1, "Melanie", "Melanie ran a charity race for mental health last Saturday.")
    plan = view(2, "Jordan", "Jordan is going to sign up for a half marathon in the fall.")
    assert memory_type(race) == "event" and memory_type(plan) == "plan"
    queries = RulesQuerier().queries(race, ["mental health", "charity race"])
    assert [q.text for q in queries] == [
        "Melanie cares about mental health",
        "Melanie planned mental health",
        "Melanie got into charity race",
    ]
    assert len(queries) <= 3 and RulesQuerier().queries(race, []) == []


def test_llm_querier_uses_the_model_and_falls_back_to_rules(fake_llm):
    memory = view(5, "Melanie", "Melanie ran a charity race for mental health.")
    good = {"type": "event", "queries": [{"text": "Melanie cares about mental health", "relation": "motivation"}]}
    querier = LLMQuerier(fake_llm(good))
    assert [q.text for q in querier.queries(memory, ["charity race"])] == ["Melanie cares about mental health"]
    broken = LLMQuerier(fake_llm("not json"))
    assert broken.queries(memory, ["charity race"])[0].text == "Melanie cares about charity race"
    assert broken.failures and broken.failures[0]["stage"] == "cable:query"


# --- step 3: verification ------------------------------------------------------------------------------
SPEAKERS = {"jordan", "riley"}
LATER = MemoryView(30, "c", "Jordan", "Jordan: Jordan is running for the lymphoma foundation.", ["jordan"],
                   ["lymphoma foundation", "run"])  # fmt: skip


def candidate(other: MemoryView, query_match: float, own_match: float, rare=("lymphoma",)) -> Candidate:
    """A candidate found by a query."""
    from ripplecli.graph.antecedents import AntecedentQuery

    return Candidate(other, AntecedentQuery("Jordan cares about lymphoma", "motivation"), query_match, own_match, rare)


def test_rules_verifier_accepts_an_older_same_speaker_rare_concept_clear_match():
    cause = view(4, "Jordan", "Jordan's aunt Teresa was diagnosed with lymphoma.", ["jordan", "teresa"])
    verdict = RulesVerifier(margin=0.0, floor=0.55).verify(LATER, [candidate(cause, 0.80, 0.55)], SPEAKERS)
    assert verdict[0].accepted and verdict[0].score == 0.8
    assert "jordan" in verdict[0].reason.lower() and "lymphoma" in verdict[0].reason


@pytest.mark.parametrize(
    ("other", "query_match", "own_match", "rare", "why"),
    [
        (view(40, "Jordan", "Jordan ran later.", ["jordan"]), 0.9, 0.5, ("lymphoma",), "not older"),
        (view(4, "Riley", "Riley's aunt has lymphoma.", ["riley", "jordan"]), 0.9, 0.5, ("lymphoma",), "speaker"),
        (MemoryView(4, "other chat", "Jordan", "Jordan: Jordan has lymphoma."), 0.9, 0.5, ("lymphoma",), "speaker"),
        (view(4, "Jordan", "So sorry, Riley. Your aunt is brave."), 0.9, 0.5, ("lymphoma",), "nothing of its speaker"),
        (view(4, "Jordan", "Jordan likes lymphoma soup.", ["jordan"]), 0.9, 0.5, (), "no rare shared concept"),
        (view(4, "Jordan", "Jordan read about lymphoma.", ["jordan"]), 0.60, 0.65, ("lymphoma",), "margin"),
        (view(4, "Jordan", "Jordan read about lymphoma.", ["jordan"]), 0.50, 0.30, ("lymphoma",), "query fit"),
    ],
)
def test_rules_verifier_rejects(other, query_match, own_match, rare, why):
    verdict = RulesVerifier(margin=0.0, floor=0.55).verify(
        LATER, [candidate(other, query_match, own_match, rare)], SPEAKERS
    )
    assert not verdict[0].accepted and why in verdict[0].reason


def test_a_shared_third_person_alone_is_not_the_same_subject():
    new = view(30, "Jordan", "Jordan took Teresa to the lymphoma clinic.", ["jordan", "teresa"])
    other = view(4, "Riley", "Riley drove Teresa to chemo for her lymphoma.", ["riley", "teresa"])
    verdict = RulesVerifier().verify(new, [candidate(other, 0.8, 0.5)], SPEAKERS)
    assert not verdict[0].accepted and "speaker" in verdict[0].reason


def test_rare_shared_needs_a_rare_concept_of_both_memories_that_the_query_asks_about():
    from ripplecli.graph.antecedents import AntecedentQuery

    older_one = MemoryView(4, "c", "Jordan", "Jordan: Jordan's aunt has lymphoma.", [], ["lymphoma", "aunt", "riley"])
    query = AntecedentQuery("Jordan cares about lymphoma foundation", "motivation")
    frequency = {"lymphoma": 2, "foundation": 1, "aunt": 40, "run": 90, "riley": 1}
    assert rare_shared(LATER, older_one, query, frequency, 20, SPEAKERS) == ("lymphoma",)
    assert rare_shared(LATER, older_one, query, {**frequency, "lymphoma": 21}, 20, SPEAKERS) == ()
    other_query = AntecedentQuery("Jordan cares about running", "motivation")
    assert rare_shared(LATER, older_one, other_query, frequency, 20, SPEAKERS) == ()


def test_about_self_drops_replies_about_the_other_person():
    assert about_self(view(1, "Jordan", "Jordan's aunt was diagnosed with lymphoma."))
    assert about_self(view(2, "Jordan", "Wow, Riley! Last week Jordan started running."))
    assert not about_self(view(3, "Jordan", "That's great, Riley! Riley's garden looks amazing. Did Jordan see it?"))


def test_llm_verifier_rejects_shared_topic_and_falls_back_on_failure(fake_llm):
    cands = [
        candidate(view(4, "Jordan", "Jordan's aunt has lymphoma.", ["jordan"]), 0.8, 0.5),
        candidate(view(5, "Jordan", "Jordan read about lymphoma."), 0.8, 0.5),
    ]
    said = {"verdicts": [{"number": 1, "relation": "motivation", "confidence": 0.9},
                         {"number": 2, "relation": "none", "confidence": 0.9}]}  # fmt: skip
    verdicts = LLMVerifier(fake_llm(said)).verify(LATER, cands, {"jordan"})
    assert [v.accepted for v in verdicts] == [True, False]
    fallback = LLMVerifier(fake_llm("nonsense"))
    assert [v.accepted for v in fallback.verify(LATER, cands, {"jordan"})] == [True, True]
    assert fallback.failures[0]["stage"] == "cable:verify"


def test_llm_verifier_cannot_link_another_speakers_memory_or_a_reply_about_the_other(fake_llm):
    """The model judges the relation; the rules' structural tests still hold (0.5B on 150 turns: 145 -> 108 links)."""
    cands = [
        candidate(view(4, "Riley", "Riley's aunt has lymphoma.", ["riley"]), 0.8, 0.5),
        candidate(view(5, "Jordan", "So sorry, Riley. Your aunt is brave."), 0.8, 0.5),
        candidate(view(6, "Jordan", "Jordan's aunt has lymphoma.", ["jordan"]), 0.8, 0.5),
    ]
    said = {"verdicts": [{"number": n, "relation": "motivation", "confidence": 0.9} for n in (1, 2, 3)]}
    verdicts = LLMVerifier(fake_llm(said)).verify(LATER, cands, {"jordan", "riley"})
    assert [v.accepted for v in verdicts] == [False, False, True]
    assert "speaker" in verdicts[0].reason and "nothing of its speaker" in verdicts[1].reason


def test_llm_verifier_judges_the_best_matching_candidates_only_under_a_bounded_schema(fake_llm):
    from ripplecli.graph.verifiers import MAX_SHOWN

    cands = [candidate(view(i, "Jordan", f"Jordan note {i}.", ["jordan"]), i / 100, 0.0) for i in range(1, 12)]
    llm = fake_llm({"verdicts": [{"number": 1, "relation": "cause", "confidence": 0.9}]})
    verdicts = LLMVerifier(llm).verify(LATER, cands, {"jordan"})
    assert [v.accepted for v in verdicts].count(True) == 1 and verdicts[-1].accepted  # 1. is the best query match
    prompt = llm.requests[0][0][-1]["content"]
    assert prompt.count("Jordan note") == MAX_SHOWN and "Jordan note 1." not in prompt
    schema = llm.requests[0][1]
    assert schema["properties"]["verdicts"]["maxItems"] == MAX_SHOWN
    assert "cause" in json.dumps(schema) and "none" in json.dumps(schema)
    failed = LLMVerifier(fake_llm({"verdicts": [{"number": 1, "relation": "shared topic", "confidence": 0.9}]}))
    failed.verify(LATER, cands, {"jordan"})
    assert failed.failures[0]["stage"] == "cable:verify"  # a relation outside the list is a schema violation


def test_a_model_querier_or_verifier_without_a_model_is_refused(store_with_chat):
    """They were built around None and failed at their first question."""
    from ripplecli.errors import InputError

    memory = store_with_chat
    for params in (CableParams(querier="llm"), CableParams(verifier="llm")):
        with pytest.raises(InputError, match="needs a local model"):
            CableLinker(memory.store, memory.encoder, params)


# --- steps 2 and 4 against a store -------------------------------------------------------------------
def test_subtraction_keeps_direct_neighbours_out(store_with_chat):
    memory = store_with_chat
    linker = CableLinker(memory.store, memory.encoder, CableParams())
    linker.verifier = AcceptAll()
    linker.backfill()
    edges = antecedent_edges(memory)
    assert edges, "the permissive verifier should accept something"
    index = memory.store.vector_index()
    for src, dst, _, _ in edges:
        direct = older_neighbours(index, index.get_vectors([dst]), [dst], 15)[0]
        assert src not in {m for m, _ in direct}
        assert float(index.get_vectors([src])[0] @ index.get_vectors([dst])[0]) < min(s for _, s in direct)
    nosub = CableLinker(memory.store, memory.encoder, CableParams(subtract=False))
    nosub.verifier = AcceptAll()
    nosub.backfill()
    plain = antecedent_edges(memory, "antecedent-nosub")
    assert any(
        src in {m for m, _ in older_neighbours(index, index.get_vectors([dst]), [dst], 15)[0]}
        for src, dst, _, _ in plain
    ), "without the subtraction direct neighbours do become edges"


def test_edges_point_older_to_newer_and_respect_the_cap(store_with_chat):
    memory = store_with_chat
    linker = CableLinker(memory.store, memory.encoder, CableParams(cap=2))
    linker.verifier = AcceptAll()
    linker.backfill()
    edges = antecedent_edges(memory)
    assert edges and all(src < dst for src, dst, _, _ in edges)
    per_dst: dict[int, int] = {}
    for _, dst, _, _ in edges:
        per_dst[dst] = per_dst.get(dst, 0) + 1
    assert max(per_dst.values()) <= 2
    assert memory.store.get_meta("cable:antecedent")["cap"] == 2
    assert all(json.loads(info)["query"] for *_, info in edges)


def test_backfill_is_idempotent_and_resumes(store_with_chat):
    memory = store_with_chat
    first = memory.link("cable")
    edges = antecedent_edges(memory)
    second = memory.link("cable")
    assert first.memories == memory.store.count("memories") and second.memories == 0
    assert antecedent_edges(memory) == edges
    memory.store.con.execute("DELETE FROM cable_done WHERE memory_id > 10")  # as if killed after one batch
    third = memory.link("cable")
    assert third.memories == memory.store.count("memories") - 10 and antecedent_edges(memory) == edges


def test_ingest_with_links_equals_ingest_then_backfill(tmp_path, fake_settings):
    linked = Memory(tmp_path / "a")
    linked.configure(fake_settings)
    report = linked.ingest_conversations([motivation_chat()], links="cable")
    later = Memory(tmp_path / "b")
    later.configure(fake_settings)
    later.ingest_conversations([motivation_chat()])
    assert not antecedent_edges(later)
    later.link("cable")
    assert [e[:3] for e in antecedent_edges(linked)] == [e[:3] for e in antecedent_edges(later)]
    assert report.edges.get("antecedent", 0) == len(antecedent_edges(linked))
    assert linked.link("cable").memories == 0
    linked.close()
    later.close()


# --- read side -------------------------------------------------------------------------------------------
def test_budget_scales_with_k():
    assert [read_side.budget(k) for k in (1, 5, 10, 30, 50)] == [1, 1, 1, 5, 8]
    assert read_side.slots(10) == [5] and read_side.slots(30) == [5, 11, 17, 23, 29] and read_side.slots(3) == [2]


def test_host_mode_replaces_only_its_budget(store_with_chat):
    memory = store_with_chat
    store = memory.store
    ids = [r[0] for r in store.con.execute("SELECT memory_id FROM memories ORDER BY memory_id").fetchall()]
    vector = store.vector_index().get_vectors([ids[-1]])[0]
    ranked = sorted(ids, key=lambda m: -float(store.vector_index().get_vectors([m])[0] @ vector))
    host = ranked[:10]
    outside = [m for m in ranked if m not in host]
    infos = [json.dumps({"query": f"q{i}"}) for i in range(6)]
    store.add_edges([Edge(src, host[0], "antecedent", 0.7) for src in outside[:6]], infos)
    at10, picks10 = read_side.host_cable(store, ranked, vector, 10)
    assert len(picks10) == 1 and at10[:10].count(picks10[0].memory_id) == 1
    assert set(at10[:10]) - set(host) == {picks10[0].memory_id} and picks10[0].query.startswith("q")
    at30, picks30 = read_side.host_cable(store, ranked, vector, 30)
    assert len(picks30) <= 5 and len(set(at30[:30])) == len(at30[:30]) == min(30, len(ids))
    assert at30[:10] == at10[:10], "the list at K is a prefix of the list at a larger K"


def test_end_to_end_motivation_reachable_through_an_antecedent_edge(tmp_path, fake_settings):
    """Hand-made chat: the diagnosis is outside the race memory's 15 nearest, found by its motivation query."""
    memory = Memory(tmp_path / "store")
    memory.configure(fake_settings)
    memory.ingest_conversations([motivation_chat()])
    memory.link("cable", margin=0.05)  # the fake bag-of-words encoder's scale; 0.15 is calibrated for MiniLM
    texts = dict(memory.store.con.execute("SELECT memory_id, restatement FROM memories").fetchall())
    diagnosis = next(m for m, t in texts.items() if "diagnosed" in t)
    race = next(m for m, t in texts.items() if "lymphoma foundation" in t)
    edges = {(s, d): json.loads(info) for s, d, _, info in antecedent_edges(memory)}
    assert (diagnosis, race) in edges, edges
    assert "lymphoma" in edges[(diagnosis, race)]["query"]
    result = memory.recall("What race did Jordan sign up for to raise money?", k=6, mode="dense+cable")
    found = {e.memory_id: e for e in result.evidence}
    assert diagnosis in found
    via = [p for p in found[diagnosis].provenance if getattr(p, "channel", None) == "antecedent"]
    assert via and via[0].query == edges[(diagnosis, race)]["query"]
    stats = memory.stats()["antecedent"]["antecedent"]
    assert stats["share_outside_dst_top"] == 1.0 and stats["max_in_degree"] <= 3
    memory.close()


def test_cli_link_cable_and_graph_stats(tmp_path, fake_settings):
    store = tmp_path / "store"
    with Memory(store) as memory:
        memory.configure(fake_settings)
        memory.ingest_conversations([motivation_chat()])
    runner = CliRunner()
    done = runner.invoke(app, ["link", "cable", "--store", str(store), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["memories"] > 0
    again = runner.invoke(app, ["link", "cable", "--store", str(store), "--json"])
    assert json.loads(again.output)["memories"] == 0
    stats = runner.invoke(app, ["graph", "stats", "--store", str(store)])
    assert stats.exit_code == 0 and "antecedent links (CABLE)" in stats.output
    with Memory(store, read_only=True, create=False) as memory:  # host mode: an evaluation mode, not ask's
        result = memory.recall("What race did Jordan sign up for to raise money?", k=6, mode="dense+cable")
    screen = Console(record=True, width=200)
    screen.print(trace_tree(result))
    assert "query: “" in screen.export_text()  # the trace shows the antecedent query CABLE wrote


def test_ripple_cable_adds_antecedent_support(store_with_chat):
    memory = store_with_chat
    memory.link("cable")
    result = memory.recall("What did Jordan sign up for at Lakeshore?", k=10, mode="ripple+cable")
    assert result.mode == "ripple+cable" and result.evidence
    assert np.isfinite([e.rank for e in result.evidence]).all()


def _ranked_and_vector(store):
    """Every memory ranked by cosine to the last one, and that vector (a stand-in question)."""
    ids = [r[0] for r in store.con.execute("SELECT memory_id FROM memories ORDER BY memory_id").fetchall()]
    vector = store.vector_index().get_vectors([ids[-1]])[0]
    return sorted(ids, key=lambda m: -float(store.vector_index().get_vectors([m])[0] @ vector)), vector


def _link(store, srcs: list[int], dst: int, weight: float) -> None:
    """Hand-made antecedent edges srcs -> dst."""
    infos = [json.dumps({"query": f"q{i}"}) for i in range(len(srcs))]
    store.add_edges([Edge(src, dst, "antecedent", weight) for src in srcs], infos)


@pytest.mark.parametrize(
    ("seed_rank", "weight", "picked"),
    [(0, 0.7, True), (0, read_side.PICK_MIN_WEIGHT - 0.01, False), (read_side.TOP_SEEDS, 0.7, False)],
)
def test_host_mode_needs_a_strong_link_from_a_top_seed(store_with_chat, seed_rank, weight, picked):
    store = store_with_chat.store
    ranked, vector = _ranked_and_vector(store)
    near_question = [m for m in ranked[10:] if float(store.vector_index().get_vectors([m])[0] @ vector) >= 0.35]
    _link(store, near_question[:1], ranked[seed_rank], weight)
    out, picks = read_side.host_cable(store, ranked, vector, 10)
    assert bool(picks) == picked
    assert out[:10] == ([*ranked[:5], picks[0].memory_id, *ranked[5:9]] if picked else ranked[:10])


def test_host_mode_skips_picks_off_the_question(store_with_chat):
    store = store_with_chat.store
    ranked, vector = _ranked_and_vector(store)
    sims = {m: float(store.vector_index().get_vectors([m])[0] @ vector) for m in ranked}
    off = [m for m in ranked[10:] if sims[m] < read_side.PICK_MIN_COS]
    if not off:
        pytest.skip("the fake encoder put every memory near the question")
    _link(store, off[:3], ranked[0], 0.9)
    out, picks = read_side.host_cable(store, ranked, vector, 30)
    assert not picks and out[:30] == ranked[:30]


def test_ripple_cable_support_enters_below_ripple_support(store_with_chat):
    from ripplecli.recall.assembly import merge_support
    from ripplecli.recall.diffusion import Support

    store = store_with_chat.store
    ranked, vector = _ranked_and_vector(store)
    near = [
        m for m in ranked[12:] if float(store.vector_index().get_vectors([m])[0] @ vector) >= read_side.PICK_MIN_COS
    ]
    anchor, linked = ranked[0], near[:3]
    _link(store, linked, anchor, 0.8)
    ante = read_side.diffusion_support(store, [anchor], vector, set(), "antecedent")
    assert {s.memory_id for s in ante} == set(linked) and all(s.query for s in ante)
    assert {s.channel for s in ante} == {"antecedent"}  # the trace names the channel that found them
    ripple = [Support(m, "activation", 1.0, [anchor, m]) for m in ranked[12:] if m not in linked][:5]
    merged = merge_support(ranked[:12], ripple + ante)
    assert max(merged.index(s.memory_id) for s in ripple) < min(merged.index(s.memory_id) for s in ante)
