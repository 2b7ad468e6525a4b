"""What recall reads on every question: read on demand for one ask, or loaded whole for many warm ones.

`RecallIndex.open` reads only what a question touches (a batch of keys per query, each answer kept), so a cold
ask costs the same in a small and a large store; `RecallIndex.load` reads every map in a handful of scans, so a
long-lived process (the MCP server, an evaluation) answers later questions without SQL round trips.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ripplecli.cues import canonical_name
from ripplecli.store import queries
from ripplecli.store.db import Store
from ripplecli.store.lookups import SqlReads
from ripplecli.store.reads import CUE_COLUMNS, KeyedReads


class StoreMap(Mapping):
    """A read-only map filled from the store on demand: missing keys are fetched in one batch and kept."""

    def __init__(
        self,
        fetch: Callable[[list[Any]], dict[Any, Any]],
        keys: Callable[[], list[Any]] | None = None,
        size: Callable[[], int] | None = None,
    ):
        self._fetch, self._keys, self._size = fetch, keys, size
        self._known: dict[Any, Any] = {}
        self._absent: set[Any] = set()
        self._all_keys: list[Any] | None = None
        self._count: int | None = None
        self.queries = 0  # batches fetched: what tests read to see that an ask stays local

    def prefetch(self, keys: Iterable[Hashable]) -> None:
        """Fetch every key not seen yet, in one query."""
        todo = self.missing(keys)
        if todo:
            self.fill(todo, self._fetch(todo))

    def missing(self, keys: Iterable[Hashable]) -> list[Any]:
        """The keys not read yet, in order, once each."""
        return [k for k in dict.fromkeys(keys) if k not in self._known and k not in self._absent]

    def fill(self, asked: list[Any], found: Mapping[Any, Any]) -> None:
        """Keep what one query found for `asked` (read here or, for maps read together, by the index)."""
        self.queries += 1
        self._known.update(found)
        self._absent.update(k for k in asked if k not in found)

    @property
    def fetched(self) -> int:
        """How many keys have been read from the store."""
        return len(self._known)

    def __getitem__(self, key: Any) -> Any:
        self.prefetch([key])
        if key in self._known:
            return self._known[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[Any]:
        if self._keys is None:
            raise TypeError("this store map reads by key only")
        if self._all_keys is None:
            self._all_keys = self._keys()
        return iter(self._all_keys)

    def __len__(self) -> int:
        if self._count is None:
            self._count = self._size() if self._size is not None else sum(1 for _ in self)
        return self._count


@dataclass
class RecallIndex:
    """In-memory maps of the store's cues, texts and contiguity links."""

    version: int
    texts: Mapping[int, str] = field(default_factory=dict)
    concepts_of: Mapping[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    holders: Mapping[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    persons_of: Mapping[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    person_holders: Mapping[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    locations_of: Mapping[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    location_holders: Mapping[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    forms: Mapping[str, str] = field(default_factory=dict)
    neighbours: Mapping[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    grounded_times: list[tuple[int, datetime, datetime]] = field(default_factory=list)
    speakers: set[str] = field(default_factory=set)
    speaker_of: Mapping[int, str] = field(default_factory=dict)
    owner: str | None = None  # the name the store owner's turns are stored under (most of them, if it changed)
    frequencies: Mapping[str, int] | None = None  # on-demand index: concept cue -> holder count, without the ids
    reads: KeyedReads | None = None  # on-demand index: where the maps read from
    placed: Mapping[int, tuple[str, datetime | None]] = field(default_factory=dict)  # memory -> conversation, said at
    # memory -> when it was said on the clock where it was said, for those said with a known zone (a loaded index;
    # for the others that is their said-at time)
    said_local: dict[int, datetime] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # conversation -> its export's title
    _said: tuple[list[datetime], list[int]] | None = field(default=None, repr=False)  # said_within's sorted copy

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
        index.said_local = dict(queries.zoned_said_times(store))
        index.speaker_of = {mid: canonical_name(name) for mid, name in queries.first_speakers(store)}
        _read_people(index, store)
        return index

    @classmethod
    def open(cls, store: Store) -> RecallIndex:
        """An index that reads from the store only the keys a question asks for (see the module docstring): from
        the arrays the last writer saved when they are current, else by SQL."""
        reads: KeyedReads = store.recall_arrays() or SqlReads(store)

        def of(table: str) -> StoreMap:
            return StoreMap(lambda ids: reads.cues_of(table, ids))

        def holders(table: str, listed: bool = False) -> StoreMap:
            keys = (lambda: reads.cue_values(table)) if listed else None
            return StoreMap(lambda values: reads.holders_of(table, values), keys)

        index = cls(
            version=store.version("memories"),
            texts=StoreMap(reads.restatements_of, size=lambda: reads.count),
            concepts_of=of("memory_cues"),
            holders=holders("memory_cues"),
            persons_of=of("memory_persons"),
            person_holders=holders("memory_persons", listed=True),
            locations_of=of("memory_locations"),
            location_holders=holders("memory_locations", listed=True),
            forms=StoreMap(reads.forms_of),
            neighbours=StoreMap(reads.contiguity_of),
            speaker_of=StoreMap(lambda ids: {m: canonical_name(n) for m, n in reads.first_speakers_of(ids).items()}),
            frequencies=StoreMap(reads.holder_counts),
            reads=reads,
            placed=StoreMap(reads.placed_of),
        )
        _read_people(index, store)
        return index

    @property
    def lazy(self) -> bool:
        """Whether the maps read from the store on demand."""
        return self.reads is not None

    def prefetch(self, ids: Iterable[int] = (), **maps: Iterable[Hashable]) -> None:
        """Read ahead in batches: every per-memory map for `ids`, and `name=keys` for named maps (eager: no-op).

        Maps of one table are read together: texts and placed in one query, the three cue maps in another."""
        if not self.lazy:
            return
        ids = list(ids)
        if ids:
            self._prefetch_rows(ids)
            for name in ("speaker_of", "neighbours"):
                maps.setdefault(name, ids)
        for name, keys in maps.items():
            mapping = getattr(self, name)
            if isinstance(mapping, StoreMap):
                mapping.prefetch(keys)

    def _prefetch_rows(self, ids: list[int]) -> None:
        """The texts, places and cue sets of `ids` not read yet: one query for the first two, one for the cues."""
        reads, texts, placed = self.reads, self.texts, self.placed
        if isinstance(texts, StoreMap) and isinstance(placed, StoreMap) and reads is not None:
            todo = list(dict.fromkeys([*texts.missing(ids), *placed.missing(ids)]))
            if todo:
                found_texts, found_placed = reads.memory_rows_of(todo)
                texts.fill(todo, found_texts)
                placed.fill(todo, found_placed)
        cue_maps = [m for m in (self.concepts_of, self.persons_of, self.locations_of) if isinstance(m, StoreMap)]
        if reads is not None and len(cue_maps) == len(CUE_COLUMNS):
            todo = list(dict.fromkeys(k for mapping in cue_maps for k in mapping.missing(ids)))
            if todo:
                found = reads.cue_sets_of(todo)
                for table, mapping in zip(CUE_COLUMNS, cue_maps, strict=True):  # the tables in map order
                    mapping.fill(todo, found[table])

    def cue_frequency(self, cue: str) -> int:
        """How many memories hold a concept cue."""
        if self.frequencies is not None:
            return self.frequencies.get(cue, 0)
        return len(self.holders.get(cue, ()))

    def said_offsets(self, ids: Iterable[int]) -> dict[int, timedelta]:
        """memory id -> the UTC offset where it was said, for those of `ids` said with a known zone."""
        if self.reads is not None:
            return {mid: timedelta(seconds=s) for mid, s in self.reads.said_offsets_of(list(ids)).items()}
        local, placed = self.said_local, self.placed
        return {mid: local[mid] - said for mid in ids if mid in local and (said := placed[mid][1]) is not None}

    def grounded_of(self, ids: Iterable[int]) -> dict[int, tuple[datetime, datetime]]:
        """memory id -> the time its text refers to, for those of `ids` whose text names one."""
        if self.reads is not None:
            return self.reads.grounded_of(list(ids))
        wanted = set(ids)
        return {mid: (start, end) for mid, start, end in self.grounded_times if mid in wanted}

    def grounded_within(self, start: datetime, end: datetime) -> list[int]:
        """Memories whose text names a time overlapping [start, end]."""
        if self.reads is not None:
            return self.reads.grounded_within(start, end)
        return [mid for mid, t0, t1 in self.grounded_times if t0 <= end and t1 >= start]

    def said_within(self, start: datetime, end: datetime) -> list[int]:
        """Memories said within [start, end] on the clock where they were said: days as the speakers lived them (a
        loaded index bisects its memories sorted by when they were said)."""
        if self.reads is not None:
            return self.reads.said_within(start, end)
        if self._said is None:
            local = self.said_local
            placed = ((local.get(mid, said), mid) for mid, (_, said) in self.placed.items())
            order = sorted((said, mid) for said, mid in placed if said is not None)
            self._said = ([said for said, _ in order], [mid for _, mid in order])
        times, ids = self._said
        return sorted(ids[bisect_left(times, start) : bisect_right(times, end)])


def _read_people(index: RecallIndex, store: Store) -> None:
    """The chats' speakers and titles, and the store owner's name: small, read whole by either kind of index."""
    speakers, index.titles, index.owner = store.people()
    index.speakers = {canonical_name(name) for name in speakers}
