"""What recall reads on every question, loaded once per store version so warm recall makes no SQL round trips."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from ripplecli.cues import canonical_name
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

    @property
    def count(self) -> int:
        """Number of memories."""
        return len(self.texts)

    @classmethod
    def load(cls, store: Store) -> RecallIndex:
        """Read everything recall needs in a handful of scans."""
        index = cls(version=store.version("memories"))
        con = store.con
        index.texts = dict(con.execute("SELECT memory_id, restatement FROM memories").fetchall())
        pairs = {
            "memory_cues": (index.concepts_of, index.holders),
            "memory_persons": (index.persons_of, index.person_holders),
            "memory_locations": (index.locations_of, index.location_holders),
        }
        for table, (of, holders) in pairs.items():
            for mid, value in con.execute(f"SELECT * FROM {table} ORDER BY memory_id").fetchall():
                of[mid].add(value)
                holders[value].append(mid)
        index.forms = dict(con.execute("SELECT form, min(cue) FROM cue_forms GROUP BY form").fetchall())
        for src, dst in con.execute("SELECT src, dst FROM edges WHERE channel = 'contiguity'").fetchall():
            index.neighbours[src].add(dst)
            index.neighbours[dst].add(src)
        index.grounded_times = con.execute(
            "SELECT memory_id, time_start, time_end FROM memories WHERE time_grounded AND time_start IS NOT NULL"
        ).fetchall()
        rows = con.execute("SELECT DISTINCT unnest(speakers) FROM conversations").fetchall()
        index.speakers = {canonical_name(r[0]) for r in rows}
        first_speaker = (
            "SELECT p.memory_id, arg_min(s.speaker, s.position) FROM provenance p "
            "JOIN sources s USING (source_id) GROUP BY p.memory_id"
        )
        index.speaker_of = {mid: canonical_name(name) for mid, name in con.execute(first_speaker).fetchall()}
        owner = con.execute(
            "SELECT speaker FROM sources WHERE role = 'owner' GROUP BY speaker ORDER BY count(*) DESC, speaker LIMIT 1"
        ).fetchone()
        index.owner = owner[0] if owner else None
        return index

    def cue_frequency(self, cue: str) -> int:
        """How many memories hold a concept cue."""
        return len(self.holders.get(cue, ()))
