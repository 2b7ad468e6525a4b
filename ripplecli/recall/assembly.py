"""Assembly: how seeds, the activation ranking and new support become one ranked evidence list (docs/method.md).

Every constant here was measured on the LoCoMo dev split; see docs/evaluation.md, "LoCoMo recall by mode".
"""

from __future__ import annotations

from collections.abc import Mapping

from ripplecli.recall.views import Ranked, ViewHits, rrf
from ripplecli.store.db import Store
from ripplecli.trace import Support

SEED_DEPTH = {"dense": 10, "lexical": 5, "cue": 5}  # the LoCoMo setting of the paper
PROVENANCE_WEIGHT = {"dense": 1.0, "lexical": 0.75, "cue": 0.9, "expansion": 0.85}  # paper's π weights
SEED_POOL = sum(SEED_DEPTH.values())  # C0: the union, filled to 20 by fusion when the views overlap
SEED_DEPTH["session"] = 5  # the session view's first hop (modes with `sessions`); the pool stays 20
SEED_FUSION_K = 5.0  # RRF constant ordering the three views (measured best of 5/20/60 on dev)
SUPPORT_FUSION_K = 10.0  # RRF constant merging support into the seed ranking below the protected head
PROTECTED_HEAD = 8  # the best seeds keep their places: support enters below them (dev: K=10 +1.6 pts)
# CABLE support ranks after the rest: as a peer channel it displaced activation support (dev: 2 questions lost).
# So does a kind of memory that only a model planner judged missing ("place" for "What outdoor activities does
# John enjoy?"): as a peer channel it displaced the rules' support (1.5B, 16 held-out questions: one lost at K = 10).
PLANNED_KIND = "planned kind"
TRAILING_CHANNELS = ("antecedent", "antecedent-nosub", PLANNED_KIND)
SUPPORT_WEIGHT = 0.5  # RRF weight of new support against the ranked seeds below the head
CENTRALITY_WEIGHT = 1.0  # RRF weight of the activation ranking when it reorders the seeds (dev: K=10 +4.6 pts)
CENTRALITY_FUSION_K = 10.0
# Memories said by someone other than the one chat speaker a question names rank as if found 5x further down:
# 96 % of the dev evidence turns of such questions (678 of 760) are that speaker's own. Dev full@30 .789 -> .813,
# @10 .670 -> .695; sending them all below the speaker's (a hard partition) measured the same on LoCoMo but buried
# the other speaker's recommendation under small talk in the sample chats.
FOCUS_DEMOTION = 5.0
# A question naming a day in full ("What did Maria plan to do later on the evening of 7 July, 2023?") asks about
# what was said that day: memories said on other days rank as if found 5x further down, as for the focus speaker
# (tuning conversations, full @10 / @30: 2 and 5 +1 / +1 and +2 / +2, 10 as 5, the day's memories first +3 / +2;
# the gentler 5 keeps evidence said on other days within reach).
DAY_DEMOTION = 5.0
DAY_SHARE = 0.2  # a "day" holding more than this share of the store (a one-day chat) focuses nothing
# A question about a time relative to its date ("What did Alex do yesterday?", read against --as-of) wants what was
# said or told of then. When that is at most RELATIVE_FEW memories they all come first (RELATIVE_DEMOTION: the rest
# ranks as if found 100x further down), since a question that says little but its time ranks the rest by chance; a
# time holding more demotes the rest by DAY_DEMOTION, so its content still chooses and a loosely used "last year"
# keeps other memories within reach. Applied after the speaker share, which would reorder it again. Chosen, then
# checked on LoCoMo's 8 dev questions with such words (they name the evidence's own time, not the question date, so
# they cannot tune it): gold rank at K = 30 before -> after 2->1 7->1 3->4 1->1 1->3 4->1 8->2 1->1; demoting by 5
# alone ranked Alex's bicycle chain below older memories for "What did Alex do yesterday?" (tests/test_timezones.py),
# and by 100 alone lost conv-41's "road trip last year" behind 55 memories of that year.
RELATIVE_FEW = 10
RELATIVE_DEMOTION = 100.0
# The named speaker's own memories nearest the question by its vector get a share of the list (modes with `share`):
# on the tuning conversations most multi-hop evidence still missed was that speaker's, worded apart from the cues
# and outranked by the other views' stronger hits. Their ranking is fused in at a quarter weight, and below the
# first SHARE_FROM places every other place is theirs (tuning: multi-hop full@30 .486 -> .541, K = 10 .708 -> .726).
SHARE_WEIGHT = 0.25  # RRF weight of the speaker's dense ranking against the assembled ranking (0.25 > 0.35 > 0.5)
SHARE_FUSION_K = 30.0  # its RRF constant (30 > 20 at K = 10)
SHARE_FROM = 15  # below this place, the speaker's dense ranking takes every other place (10, 12, 15, 20 measured)


# RRF weight of the session view against each memory view (tuning conversations: 0.25 > 0.5 > 1.0, where 1.0 lost
# 8 points of multi-hop full@30: a session's weaker turns crowd out the question's best matches)
SESSION_VIEW_WEIGHT = 0.25


def fuse_views(views: list[ViewHits]) -> dict[int, float]:
    """RRF score of every memory any view returned."""
    return rrf([(v.ranked, SESSION_VIEW_WEIGHT if v.view == "session" else 1.0) for v in views], SEED_FUSION_K)


def seed_ranking(views: list[ViewHits], fused: dict[int, float] | None = None) -> list[int]:
    """The three-view union (dense 10, lexical 5, cue 5) ordered by fused rank, then filled by fusion."""
    fused = fuse_views(views) if fused is None else fused
    order = sorted(fused, key=lambda m: (-fused[m], m))
    union = set(seed_set(views))
    return [m for m in order if m in union] + [m for m in order if m not in union]


def rerank(base: list[int], centrality: Ranked) -> list[int]:
    """Fuse the seed ranking with the activation ranking: memories central to the question's cues rise."""
    fused = rrf([([(m, 0.0) for m in base], 1.0), (centrality, CENTRALITY_WEIGHT)], CENTRALITY_FUSION_K)
    return sorted(fused, key=lambda m: (-fused[m], m))


def merge_support(base: list[int], growth: list[Support]) -> list[int]:
    """Keep the protected head of the seed ranking; below it, fuse the rest with the support by rank."""
    head = base[:PROTECTED_HEAD]
    taken = set(head)
    per_channel: dict[str, Ranked] = {}
    for s in growth:
        if s.memory_id not in taken:
            per_channel.setdefault(s.channel, []).append((s.memory_id, s.score))
    trailing = [m for channel in TRAILING_CHANNELS for m, _ in per_channel.pop(channel, [])]
    support = rrf([(ranked, 1.0) for ranked in per_channel.values()], SUPPORT_FUSION_K)
    ordered = sorted(support, key=lambda m: (-support[m], m))
    support_ranked = [(m, 0.0) for m in dict.fromkeys([*ordered, *trailing])]
    tail = rrf([([(m, 0.0) for m in base[PROTECTED_HEAD:]], 1.0), (support_ranked, SUPPORT_WEIGHT)], SUPPORT_FUSION_K)
    return head + sorted(tail, key=lambda m: (-tail[m], m))


def focus_speaker(persons: list[str], speakers: set[str], focus: str | None = None) -> str | None:
    """The chat speaker the question is about: the one it names, or the one its words point to (`focus`: "I")."""
    if focus is not None:
        return focus
    named = [p for p in persons if p in speakers]
    return named[0] if len(named) == 1 else None


def speaker_first(ranked: list[int], speaker_of: Mapping[int, str], speaker: str) -> list[int]:
    """The speaker's own memories keep their rank; everyone else's rank as if FOCUS_DEMOTION times further down."""
    place = {m: (i + 1) * (1.0 if speaker_of.get(m) == speaker else FOCUS_DEMOTION) for i, m in enumerate(ranked)}
    return sorted(ranked, key=lambda m: place[m])


def said_first(ranked: list[int], said: set[int], demotion: float = DAY_DEMOTION) -> list[int]:
    """Memories said on the question's day keep their rank; the rest rank as if `demotion` times further down."""
    place = {m: (i + 1) * (1.0 if m in said else demotion) for i, m in enumerate(ranked)}
    return sorted(ranked, key=lambda m: place[m])


def speaker_share(ranked: list[int], own: list[int]) -> tuple[list[int], list[int]]:
    """Give the speaker's memories nearest the question (`own`, best first) a share of the ranking.

    Returns the new ranking and those of `own` it moved up, from below the first 2·SHARE_FROM places into them."""
    if not own:
        return ranked, []
    fused = rrf([([(m, 0.0) for m in ranked], 1.0), ([(m, 0.0) for m in own], SHARE_WEIGHT)], SHARE_FUSION_K)
    order = sorted(fused, key=lambda m: (-fused[m], m))
    out = order[:SHARE_FROM]
    placed = set(out)
    sources = [order[SHARE_FROM:], list(own)]  # slices are copies: popping them leaves `order` whole
    turn = 0
    while any(sources):
        source = sources[turn % 2] or sources[(turn + 1) % 2]
        m = source.pop(0)
        if m not in placed:
            out.append(m)
            placed.add(m)
            turn += 1
    window = 2 * SHARE_FROM
    before = {m: i for i, m in enumerate(ranked)}
    moved = [m for m in out[:window] if before.get(m, window) >= window]
    return out, moved


def seed_set(views: list[ViewHits]) -> list[int]:
    """C0: the union of each view's top hits (dense 10, lexical 5, cue 5)."""
    return list(dict.fromkeys(mid for v in views for mid, _ in v.top(SEED_DEPTH[v.view])))


def order_by_paper_rho(store: Store, seeds: list[int], fused, growth: list[Support], vector) -> list[int]:
    """The paper's ρ(m) = 1.25·a(q,m) + π(m) + 0.05·I_anchor(m) over seeds and support."""
    ids = list(dict.fromkeys([*seeds, *(s.memory_id for s in growth)]))
    if not ids:
        return []
    sims = store.vector_index().get_vectors(ids) @ vector
    low, high = float(sims.min()), float(sims.max())
    a = {m: (float(s) - low) / (high - low) if high > low else 1.0 for m, s in zip(ids, sims, strict=True)}
    pi = dict.fromkeys(ids, 0.0)
    for rank, mid in enumerate(sorted(seeds, key=lambda m: -fused.get(m, 0.0)), start=1):
        pi[mid] += PROVENANCE_WEIGHT["dense"] / (5 + rank)
    for rank, s in enumerate(growth, start=1):
        pi[s.memory_id] += PROVENANCE_WEIGHT["expansion"] / (5 + rank)
    anchors = {s.path[0] for s in growth if s.path}
    rho = {m: 1.25 * a[m] + pi[m] + 0.05 * (m in anchors) for m in ids}
    ranked = sorted(ids, key=lambda m: (-rho[m], m))
    taken = set(ids)
    rest = sorted((m for m in fused if m not in taken), key=lambda m: (-fused[m], m))
    return ranked + rest
