"""What recall reads on every question, loaded once per store version so warm recall makes no SQL round trips."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from ripplecli.cues import canonical_name
from ripplecli.store import queries
from ripplecli.store.db import Store


@dataclass
class RecallIndex:
    """In-memory maps of the store's cues, texts and contiguity links."""

    version: int
    texts: dict[int, str] = field(default_factory=dict)
    concepts_of: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    holders: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    persons_of: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    person_holders: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    locations_of: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    location_holders: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    forms: dict[str, str] = field(default_factory=dict)
    neighbours: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    grounded_times: list[tuple[int, datetime, datetime]] = field(default_factory=list)
    speakers: set[str] = field(default_factory=set)
    speaker_of: dict[int, str] = field(default_factory=dict)
    owner: str | None = None  # the name the store owner's turns are stored under (most of them, if it changed)
    placed: dict[int, tuple[str, datetime | None]] = field(default_factory=dict)  # memory -> conversation, said at
    titles: dict[str, str] = field(default_factory=dict)  # conversation -> its export's title

    @property
    def count(self) -> int:
        """Number of memories."""
        return len(self.texts)

    @classmethod
    def load(cls, store: Store) -> RecallIndex:
        """Read everything recall needs in a handful of scans."""
        index = cls(version=store.version("memories"))
        rows = queries.placed_restatements(store)
        index.texts = {mid: text for mid, text, _, _ in rows}
        index.placed = {mid: (conversation, said) for mid, _, conversation, said in rows}
        index.titles = queries.conversation_titles(store)
        pairs = {
            "memory_cues": (index.concepts_of, index.holders),
            "memory_persons": (index.persons_of, index.person_holders),
            "memory_locations": (index.locations_of, index.location_holders),
        }
        for table, (of, holders) in pairs.items():
            for mid, value in queries.cue_pairs(store, table):
                of[mid].add(value)
                holders[value].append(mid)
        index.forms = queries.cue_forms(store)
        for src, dst in queries.edge_pairs(store, "contiguity"):
            index.neighbours[src].add(dst)
            index.neighbours[dst].add(src)
        index.grounded_times = queries.grounded_times(store)
        index.speakers = {canonical_name(name) for name in queries.chat_speakers(store)}
        index.speaker_of = {mid: canonical_name(name) for mid, name in queries.first_speakers(store)}
        index.owner = queries.owner_speaker(store)
        return index

    def cue_frequency(self, cue: str) -> int:
        """How many memories hold a concept cue."""
        return len(self.holders.get(cue, ()))
