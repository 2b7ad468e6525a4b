"""The memory graph: structural scores, edge selection and caps, contiguity, and graph stats on a known store."""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from chats import CHAT_1, CHAT_2, CHAT_3, new_memory, session, write_chat

from ripplecli.config import GraphParams
from ripplecli.graph.build import MemoryCues, profile
from ripplecli.graph.edges import CueProfile, keep_strongest, structural_score, time_affinity, weighted_jaccard
from ripplecli.graph.stats import graph_stats
from ripplecli.model import Edge, MemoryDraft, NewMemory
from ripplecli.store.db import Store

PARAMS = GraphParams()
DAY = datetime(2023, 5, 8)


def cues(
    mid: int, persons=(), locations=(), time: tuple[datetime, datetime] | None = None, position: int = 0
) -> CueProfile:
    """A cue profile with only what a test cares about."""
    return CueProfile(mid, "c", "s1", position, frozenset(persons), frozenset(locations), time)


def one(_cue: str) -> float:
    """Unweighted cues: plain Jaccard."""
    return 1.0


def day(offset: float) -> tuple[datetime, datetime]:
    """A whole-day interval `offset` days after DAY."""
    start = DAY + timedelta(days=offset)
    return start, start + timedelta(hours=23, minutes=59, seconds=59)


@pytest.mark.parametrize(
    "a, b",
    [
        (cues(1), cues(2)),
        (cues(1, persons=["maya"]), cues(2, locations=["denver"])),
        (cues(1, locations=["denver"], time=day(0)), cues(2, persons=["maya"])),
    ],
)
def test_no_comparable_cue_gives_no_score(a, b):
    assert structural_score(a, b, one, PARAMS) is None


def test_score_averages_only_the_cue_types_both_have():
    a = cues(1, persons=["maya", "lena"], locations=["denver"], time=day(0))
    b = cues(2, persons=["maya"], time=day(0))
    expected = (0.5 * 0.5 + 0.3 * 1.0) / (0.5 + 0.3)
    assert structural_score(a, b, one, PARAMS) == pytest.approx(expected)


def test_idf_weighting_lets_rare_cues_dominate():
    a, b = frozenset({"maya", "alex"}), frozenset({"maya", "sam"})
    assert weighted_jaccard(a, b, one) == pytest.approx(1 / 3)
    rare_shared = {"maya": 3.0, "alex": 1.0, "sam": 1.0}
    assert weighted_jaccard(a, b, rare_shared.get) == pytest.approx(3 / 5)
    common_shared = {"maya": 0.01, "alex": 2.0, "sam": 2.0}
    assert weighted_jaccard(a, b, common_shared.get) < 0.01
    assert weighted_jaccard(frozenset(), frozenset(), one) == 0.0


@pytest.mark.parametrize("gap_days", [0.0, 1.0, 3.5, 7.0, 30.0])
def test_time_affinity_decays_with_the_gap(gap_days):
    a = (DAY, DAY + timedelta(hours=1))
    b_start = a[1] + timedelta(days=gap_days)
    b = (b_start, b_start + timedelta(hours=2))
    expected = math.exp(-gap_days / PARAMS.tau_days)
    assert time_affinity(a, b, PARAMS.tau_days) == pytest.approx(expected)
    assert time_affinity(b, a, PARAMS.tau_days) == pytest.approx(expected)


def test_overlapping_intervals_have_full_affinity():
    assert time_affinity(day(0), (DAY + timedelta(hours=20), DAY + timedelta(days=3)), 7.0) == 1.0
    only_time = structural_score(cues(1, time=day(0)), cues(2, time=day(7)), one, PARAMS)
    assert only_time == pytest.approx(math.exp(-(6 + 1 / 86400) / 7), rel=1e-9)


def _memory(persons, grounded: bool) -> MemoryCues:
    """Stored cues of a memory in a chat between Alex and Sam."""
    start, end = day(0)
    return MemoryCues(1, "c", "s1", 0, persons, ["harbor grill"], start, end, grounded)


def test_paper_profile_keeps_every_cue():
    paper = profile(_memory(["alex", "maya"], grounded=False), {"alex", "sam"}, paper=True)
    assert paper.persons == {"alex", "maya"} and paper.locations == {"harbor grill"} and paper.time == day(0)


def test_discriminative_profile_drops_speakers_and_session_dates():
    plain = profile(_memory(["alex", "maya"], grounded=False), {"alex", "sam"}, paper=False)
    assert plain.persons == {"maya"} and plain.time is None
    grounded = profile(_memory(["alex"], grounded=True), {"alex", "sam"}, paper=False)
    assert grounded.persons == frozenset() and grounded.time == day(0)


def test_speakers_alone_link_in_paper_mode_but_not_discriminative():
    a, b = _memory(["alex", "sam"], grounded=False), _memory(["alex", "sam"], grounded=False)
    b.locations = []
    speakers = {"alex", "sam"}
    assert structural_score(profile(a, speakers, True), profile(b, speakers, True), one, PARAMS) == 1.0
    assert structural_score(profile(a, speakers, False), profile(b, speakers, False), one, PARAMS) is None


def test_keep_strongest_threshold_is_inclusive_and_ordered():
    scored = [(1, 0.59), (2, 0.60), (3, 0.95), (4, 0.80), (5, 0.80)]
    assert keep_strongest(scored, 0.60, 6, Counter()) == [(3, 0.95), (4, 0.80), (5, 0.80), (2, 0.60)]


def test_keep_strongest_caps_and_skips_full_nodes():
    scored = [(i, 1.0 - i / 100) for i in range(1, 11)]
    assert [i for i, _ in keep_strongest(scored, 0.5, 3, Counter())] == [1, 2, 3]
    full = Counter({1: 3, 3: 5})
    assert [i for i, _ in keep_strongest(scored, 0.5, 3, full)] == [2, 4, 5]


REPEATED = [("Ana", "We ate pizza with Luigi in Rome again"), ("Ben", "We ate pizza with Luigi in Rome again")]


def _ingest(path: Path, settings, files: list[Path]) -> Store:
    """Ingest files into a new store and hand back its (still open) store."""
    memory = new_memory(path, settings)
    for file in files:
        memory.ingest(file)
    return memory.store


def _degrees(store: Store, channel: str) -> Counter[int]:
    """Degree of every node in one channel."""
    rows = store.con.execute("SELECT src, dst FROM edges WHERE channel = ?", [channel]).fetchall()
    return Counter(node for pair in rows for node in pair)


def test_caps_hold_incrementally_across_batches(tmp_path, fake_settings, fake_extractor):
    files = [
        write_chat(tmp_path / f"{n}.json", [session(1, REPEATED * 6), session(2, REPEATED * 4)], f"conv-{n}")
        for n in range(3)
    ]
    store = _ingest(tmp_path / "store", fake_settings, files)
    try:
        for channel, cap in (("semantic", PARAMS.semantic_cap), ("structural", PARAMS.structural_cap)):
            degrees = _degrees(store, channel)
            assert degrees and max(degrees.values()) == cap
        edges = store.con.execute("SELECT src, dst, weight, channel FROM edges").fetchall()
        assert all(src < dst for src, dst, _, _ in edges)
        pairs = Counter((src, dst, channel) for src, dst, _, channel in edges)
        assert max(pairs.values()) == 1
    finally:
        store.close()


def test_edges_point_older_to_newer_and_respect_thresholds(tmp_path, fake_settings, fake_extractor):
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2), session(3, CHAT_3 + CHAT_1)])
    store = _ingest(tmp_path / "store", fake_settings, [chat])
    try:
        rows = store.con.execute("SELECT src, dst, channel, weight FROM edges").fetchall()
    finally:
        store.close()
    assert {channel for *_, channel, _ in rows} >= {"semantic", "contiguity"}
    assert all(src < dst for src, dst, _, _ in rows)
    assert all(w >= PARAMS.semantic_threshold for _, _, c, w in rows if c == "semantic")
    assert all(w >= PARAMS.structural_threshold for _, _, c, w in rows if c == "structural")


def test_contiguity_links_consecutive_memories_of_one_session_only(tmp_path, fake_settings, fake_extractor):
    first = write_chat(tmp_path / "a.json", [session(1, CHAT_1), session(2, CHAT_2)], "a")
    second = write_chat(tmp_path / "b.json", [session(1, CHAT_3)], "b")
    store = _ingest(tmp_path / "store", fake_settings, [first, second])
    try:
        place = {
            mid: (conv, sess, pos)
            for mid, conv, sess, pos in store.con.execute(
                "SELECT memory_id, conversation_id, session_id, position FROM memories"
            ).fetchall()
        }
        chain = store.con.execute("SELECT src, dst, weight FROM edges WHERE channel = 'contiguity'").fetchall()
    finally:
        store.close()
    assert len(chain) == (3 - 1) + (4 - 1) + (2 - 1)
    for src, dst, weight in chain:
        assert place[src][:2] == place[dst][:2] and place[dst][2] == place[src][2] + 1 and weight == 1.0


def _hand_built(path: Path) -> Store:
    """Six memories: a semantic path 1-2-3, a structural pair 4-5 (also contiguity), and 6 alone."""
    store = Store.open(path)
    sessions = ["s1", "s1", "s1", "s2", "s2", "s3"]
    drafts = [
        MemoryDraft(f"memory {i}", [], time_start=DAY, time_end=DAY + timedelta(days=i - 1), extractor="hand")
        for i in range(1, 7)
    ]
    memories = [
        NewMemory(i, "c", session, i - 1, DAY, None, [], draft)
        for i, (session, draft) in enumerate(zip(sessions, drafts, strict=True), start=1)
    ]
    store.add_memories(memories, run_id=1)
    links = [(1, 2, "semantic", 0.9), (2, 3, "semantic", 0.88), (4, 5, "structural", 0.7), (4, 5, "contiguity", 1.0)]
    store.add_edges([Edge(*link) for link in links])
    return store


def test_graph_stats_on_a_hand_built_store(tmp_path):
    store = _hand_built(tmp_path / "store")
    try:
        stats = graph_stats(store)
    finally:
        store.close()
    assert stats["memories"] == 6 and stats["isolated"] == 1
    assert stats["components"] == 3 and stats["largest_component"] == 3
    assert stats["degree_histogram"] == {
        "0": 1, "1": 4, "2": 1, "3-4": 0, "5-9": 0, "10-19": 0, "20-49": 0, "50+": 0,
    }  # fmt: skip
    assert stats["all"] == {"edges": 4, "mean_degree": 1.0, "max_degree": 2, "mean_two_hop": round(8 / 6, 2)}
    assert stats["channels"]["semantic"] == {"edges": 2, "mean_degree": 0.667, "max_degree": 2, "mean_two_hop": 1.0}
    assert stats["channels"]["structural"]["mean_two_hop"] == round(2 / 6, 2)
    assert stats["time_span"] == [DAY.isoformat(), (DAY + timedelta(days=5)).isoformat()]
    assert stats["two_hop_sample"] == 6 and stats["bytes_on_disk"] > 0


def test_graph_stats_of_an_empty_store(tmp_path):
    store = Store.open(tmp_path / "store")
    try:
        stats = graph_stats(store)
    finally:
        store.close()
    assert stats["memories"] == 0 and stats["components"] == 0 and stats["all"]["mean_degree"] == 0.0
    assert stats["time_span"] == [None, None] and stats["channels"] == {}
