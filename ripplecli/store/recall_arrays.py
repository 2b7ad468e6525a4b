"""Recall's keyed reads from arrays saved beside the database and mapped into memory when an ask opens them.

A cold `ripple ask` is a new process whose recall reads a few dozen small batches (a question's cue holders, its
seeds' texts, cues and neighbours). DuckDB answers each in 1-3 ms on a 3K-memory store (5-8 ms at 100K): the
scans cost more than the lookups. So every writer also saves what those reads need as flat numpy arrays (ids,
texts in one UTF-8 blob, each cue table both ways as offsets into a value list, contiguity, times), and a
read-only ask maps them in and looks keys up by binary search: microseconds a batch, whatever the store's size.

The arrays are a derived cache like the vector and lexical indexes: stamped with the memories version they were
built from, rebuilt by every writer, and an ask whose stamp disagrees (or whose files are unreadable) reads from
DuckDB as before. Every read here answers exactly what its SQL twin in `lookups.SqlReads` answers.
"""

from __future__ import annotations

import json
import logging
import mmap
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path

import numpy as np

from ripplecli.files import read_json_object, replace_folder
from ripplecli.store.db import RECALL_STAMP
from ripplecli.store.lookups import CUE_COLUMNS, SourceRow

log = logging.getLogger(__name__)

META_FILE = RECALL_STAMP  # the stamp and where each array lies in the data file
DATA_FILE = "recall.bin"  # every array, one after the other
ALIGN = 8
FORMAT = 1
EPOCH = datetime(1970, 1, 1)
NO_TIME = np.iinfo(np.int64).min  # a NULL timestamp
ONE_MICROSECOND = timedelta(microseconds=1)


class Strings:
    """Strings kept in one UTF-8 blob, the i-th between offsets i and i+1; `find` bisects a sorted list."""

    def __init__(self, offsets: np.ndarray, blob: np.ndarray) -> None:
        self._offsets = memoryview(offsets)  # plain Python ints on indexing, far cheaper than numpy scalars
        self._blob = memoryview(blob)

    @staticmethod
    def pack(values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, blob) of `values`, in their order."""
        encoded = [value.encode("utf-8") for value in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(item) for item in encoded], out=offsets[1:])
        return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i: int) -> str:
        return str(self._bytes(i), "utf-8")

    def _bytes(self, i: int) -> memoryview:
        """The i-th string, encoded."""
        return self._blob[self._offsets[i] : self._offsets[i + 1]]

    def find(self, value: str) -> int:
        """The position of `value` in a list sorted by code point, or -1 (UTF-8 bytes sort in the same order)."""
        wanted = value.encode("utf-8")
        low, high = 0, len(self)
        while low < high:
            middle = (low + high) // 2
            if self._bytes(middle).tobytes() < wanted:
                low = middle + 1
            else:
                high = middle
        return low if low < len(self) and self._bytes(low) == wanted else -1


def _micros(moment: datetime | None) -> int:
    """A naive timestamp as microseconds since 1970 (NO_TIME for NULL)."""
    return NO_TIME if moment is None else (moment - EPOCH) // ONE_MICROSECOND


def _moment(micros: int) -> datetime | None:
    """The timestamp `_micros` saved."""
    return None if micros == NO_TIME else EPOCH + timedelta(microseconds=int(micros))


def _groups(keys: np.ndarray, values: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, values) with the values of key k between offsets k and k+1, in their given order."""
    order = np.argsort(keys, kind="stable")
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=count), out=offsets[1:])
    return offsets, values[order]


def build(store, folder: Path) -> None:
    """Write the arrays of the store's committed memories into `folder` (swapped in whole, like the lexical index)."""
    replace_folder(folder, lambda staging: _write(store, staging))


def _write(store, staging: Path) -> None:
    """Every array and the stamp, into a fresh folder."""
    con = store.con
    rows = con.execute(
        "SELECT memory_id, restatement, conversation_id, said_at, time_grounded AND time_start IS NOT NULL, "
        "time_start, time_end FROM memories ORDER BY memory_id"
    ).fetchall()
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    arrays: dict[str, np.ndarray] = {"ids": ids}
    _put_strings(arrays, "texts", [r[1] for r in rows])
    _put_codes(arrays, "conversation", [r[2] for r in rows])
    arrays["said_at"] = np.array([_micros(r[3]) for r in rows], dtype=np.int64)
    arrays["grounded"] = np.array([bool(r[4]) for r in rows], dtype=np.bool_)
    arrays["time_start"] = np.array([_micros(r[5]) for r in rows], dtype=np.int64)
    arrays["time_end"] = np.array([_micros(r[6]) for r in rows], dtype=np.int64)
    speakers = dict(
        con.execute(
            "SELECT p.memory_id, arg_min(s.speaker, s.position) FROM provenance p JOIN sources s USING (source_id) "
            "GROUP BY p.memory_id"
        ).fetchall()
    )
    _put_codes(arrays, "speaker", [speakers.get(int(mid)) for mid in ids])
    for table, column in CUE_COLUMNS.items():
        _put_cue_table(arrays, con, table, column, ids)
    forms = con.execute("SELECT form, min(cue) FROM cue_forms GROUP BY form ORDER BY form").fetchall()
    _put_strings(arrays, "forms", [form for form, _ in forms])
    _put_strings(arrays, "form_cues", [cue for _, cue in forms])
    edges = con.execute("SELECT src, dst FROM edges WHERE channel = 'contiguity' ORDER BY src, dst").fetchall()
    _put_neighbours(arrays, edges, ids)
    _put_sources(arrays, con, ids)
    layout: dict[str, tuple[str, int, int]] = {}
    with (staging / DATA_FILE).open("wb") as out:
        for name, array in arrays.items():
            out.write(b"\0" * (-out.tell() % ALIGN))
            layout[name] = (array.dtype.str, out.tell(), len(array))
            out.write(np.ascontiguousarray(array).tobytes())
        size = out.tell()
    stamp = {"format": FORMAT, "version": store.version("memories"), "count": len(ids), "size": size}
    (staging / META_FILE).write_text(json.dumps({**stamp, "arrays": layout}), encoding="utf-8")


def _put_strings(arrays: dict[str, np.ndarray], name: str, values: Sequence[str]) -> None:
    """A list of strings as two arrays."""
    arrays[f"{name}_offsets"], arrays[f"{name}_blob"] = Strings.pack(values)


def _put_codes(arrays: dict[str, np.ndarray], name: str, values: Sequence[str | None]) -> None:
    """A column of repeated strings as the distinct strings and, per row, a code into them (-1 for NULL)."""
    distinct = sorted({value for value in values if value is not None})
    code = {value: i for i, value in enumerate(distinct)}
    _put_strings(arrays, f"{name}_names", distinct)
    arrays[f"{name}_codes"] = np.array([code.get(v, -1) if v is not None else -1 for v in values], dtype=np.int32)


def _put_cue_table(arrays: dict[str, np.ndarray], con, table: str, column: str, ids: np.ndarray) -> None:
    """One cue table both ways: memory row -> value codes, value code -> holder ids (sorted), and for the
    listing of names and places, the values in the order memories first name them."""
    pairs = con.execute(f"SELECT memory_id, {column} FROM {table} ORDER BY memory_id, rowid").fetchall()
    values = sorted({value for _, value in pairs})
    code = {value: i for i, value in enumerate(values)}
    mids = np.array([mid for mid, _ in pairs], dtype=np.int64)
    codes = np.array([code[value] for _, value in pairs], dtype=np.int64)
    rows = np.searchsorted(ids, mids)
    known = rows < len(ids)
    known[known] = ids[rows[known]] == mids[known]  # a row of a missing memory holds, but no memory has it
    _put_strings(arrays, f"{table}_values", values)
    arrays[f"{table}_of_offsets"], arrays[f"{table}_of"] = _groups(rows[known], codes[known].astype(np.int32), len(ids))
    arrays[f"{table}_holders_offsets"], arrays[f"{table}_holders"] = _groups(codes, mids, len(values))
    order = con.execute(f"SELECT {column} FROM {table} GROUP BY {column} ORDER BY min(memory_id), min(rowid)")
    arrays[f"{table}_order"] = np.array([code[r[0]] for r in order.fetchall()], dtype=np.int32)


def _put_neighbours(arrays: dict[str, np.ndarray], edges: list[tuple[int, int]], ids: np.ndarray) -> None:
    """Each memory's contiguous memories (either direction), listed in the (src, dst) order of the edges, so a set
    built from them is filled in the order `SqlReads.contiguity_of` fills it."""
    rows: list[int] = []
    neighbours: list[int] = []
    position = {int(mid): row for row, mid in enumerate(ids)}
    for src, dst in edges:
        for own, other in ((src, dst), (dst, src)):
            if own in position:
                rows.append(position[own])
                neighbours.append(other)
    arrays["contiguity_offsets"], arrays["contiguity"] = _groups(
        np.array(rows, dtype=np.int64), np.array(neighbours, dtype=np.int64), len(ids)
    )


def _put_sources(arrays: dict[str, np.ndarray], con, ids: np.ndarray) -> None:
    """The source turns (the evidence's quotes): each turn's fields, each memory's turns in chat order, and each
    turn's other-speaker turn just before it in its session (what a short reply answers)."""
    turns = con.execute(
        "SELECT source_id, conversation_id, session_id, turn_id, speaker, text, session_ts, said_at, position "
        "FROM sources ORDER BY source_id"
    ).fetchall()
    _put_strings(arrays, "source_turn", [t[3] for t in turns])
    _put_codes(arrays, "source_session", [t[2] for t in turns])
    _put_codes(arrays, "source_speaker", [t[4] for t in turns])
    _put_strings(arrays, "source_text", [t[5] for t in turns])
    arrays["source_session_ts"] = np.array([_micros(t[6]) for t in turns], dtype=np.int64)
    arrays["source_said_at"] = np.array([_micros(t[7]) for t in turns], dtype=np.int64)
    arrays["source_position"] = np.array([t[8] for t in turns], dtype=np.int64)
    row_of = {t[0]: row for row, t in enumerate(turns)}
    placed: dict[tuple[str, str, int], list[int]] = {}
    for row, t in enumerate(turns):
        placed.setdefault((t[1], t[2], t[8]), []).append(row)
    before = [[r for r in placed.get((t[1], t[2], t[8] - 1), []) if turns[r][4] != t[4]] for t in turns]
    arrays["source_before_offsets"], arrays["source_before"] = _flat(before)
    position = {int(mid): row for row, mid in enumerate(ids)}
    links = con.execute("SELECT memory_id, source_id FROM provenance").fetchall()
    held: list[list[int]] = [[] for _ in ids]
    for mid, source in links:
        if mid in position and source in row_of:  # a link to a missing memory or turn joins nothing
            held[position[mid]].append(row_of[source])
    arrays["memory_sources_offsets"], arrays["memory_sources"] = _flat(
        [sorted(rows, key=lambda r: (turns[r][8], r)) for rows in held]
    )


def _flat(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, values) of a list of lists of row numbers."""
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(items) for items in lists], out=offsets[1:])
    return offsets, np.array([item for items in lists for item in items], dtype=np.int64)


def _view(data: mmap.mmap, kind: str, offset: int, length: int) -> np.ndarray:
    """One array of the data file, in place (numpy will not view zero items at the file's end: those are made)."""
    return np.frombuffer(data, dtype=np.dtype(kind), count=length, offset=offset) if length else np.empty(0, kind)


class RecallArrays:
    """The saved arrays, mapped read-only; the same reads as `lookups.SqlReads`, answered without SQL."""

    def __init__(self, folder: Path, stamp: dict) -> None:
        self.folder = folder
        self.version = int(stamp["version"])
        with (folder / DATA_FILE).open("rb") as handle:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)  # the map outlives the file handle
        if len(data) != stamp["size"]:
            raise ValueError(f"{folder / DATA_FILE}: {len(data)} bytes, the stamp says {stamp['size']}")
        self._arrays = {
            name: np.frombuffer(data, dtype=np.dtype(kind), count=length, offset=offset)
            if length
            else np.empty(0, kind)
            for name, (kind, offset, length) in stamp["arrays"].items()
        }
        self.ids = self._array("ids")
        if len(self.ids) != stamp["count"]:
            raise ValueError(f"{folder}: {len(self.ids)} ids, the stamp says {stamp['count']}")
        self._check_offsets()

    def _check_offsets(self) -> None:
        """Each offsets array ends where the array it indexes ends (a cheap guard against a mangled file)."""
        for name, offsets in self._arrays.items():
            if name.endswith("_offsets"):
                base = name.removesuffix("_offsets")  # a string list's blob, or a grouped array of the same name
                indexed = self._arrays[base + "_blob"] if base + "_blob" in self._arrays else self._arrays[base]
                if not len(offsets) or int(offsets[-1]) != len(indexed):
                    raise ValueError(f"{self.folder}: {name} does not match what it indexes")

    @classmethod
    def open(cls, folder: Path, version: int) -> RecallArrays | None:
        """The arrays saved in `folder` when they were built from memories version `version`; else None."""
        stamp = read_json_object(folder / META_FILE)
        if stamp is None or stamp.get("format") != FORMAT or stamp.get("version") != version:
            return None
        try:
            return cls(folder, stamp)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.debug("recall arrays in %s are unreadable (%s); reading from the database", folder, exc)
            return None

    def _array(self, name: str) -> np.ndarray:
        """One saved array."""
        return self._arrays[name]

    def _strings(self, name: str) -> Strings:
        """A saved list of strings."""
        return Strings(self._array(f"{name}_offsets"), self._array(f"{name}_blob"))

    @cached_property
    def texts(self) -> Strings:
        """Restatements, by row."""
        return self._strings("texts")

    @cached_property
    def forms(self) -> Strings:
        """Surface forms, sorted."""
        return self._strings("forms")

    @cached_property
    def form_cues(self) -> Strings:
        """The cue of each surface form."""
        return self._strings("form_cues")

    @cached_property
    def conversations(self) -> Strings:
        """Conversation ids, sorted; rows refer to them by code."""
        return self._strings("conversation_names")

    @cached_property
    def speakers(self) -> Strings:
        """First speakers' names, sorted; rows refer to them by code."""
        return self._strings("speaker_names")

    @cached_property
    def values(self) -> dict[str, Strings]:
        """cue table -> its distinct values, sorted."""
        return {table: self._strings(f"{table}_values") for table in CUE_COLUMNS}

    @property
    def count(self) -> int:
        """Number of memories."""
        return len(self.ids)

    def _rows(self, ids: Iterable[int]) -> list[tuple[int, int]]:
        """(memory id, row) of the given ids that are memories, in the order given."""
        wanted = np.fromiter(ids, dtype=np.int64)
        if not len(wanted) or not len(self.ids):
            return []
        rows = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        hit = self.ids[rows] == wanted
        return list(zip(wanted[hit].tolist(), rows[hit].tolist(), strict=True))

    def restatements_of(self, ids: Sequence[int]) -> dict[int, str]:
        """memory id -> restatement."""
        return {mid: self.texts[row] for mid, row in self._rows(ids)}

    def placed_of(self, ids: Sequence[int]) -> dict[int, tuple[str, datetime | None]]:
        """memory id -> (conversation, said at)."""
        return {mid: self._placed(row) for mid, row in self._rows(ids)}

    def _placed(self, row: int) -> tuple[str, datetime | None]:
        """(conversation, said at) of one row."""
        code, said = int(self._array("conversation_codes")[row]), int(self._array("said_at")[row])
        return self.conversations[code], _moment(said)

    def memory_rows_of(self, ids: Sequence[int]) -> tuple[dict[int, str], dict[int, tuple[str, datetime | None]]]:
        """memory id -> restatement, and memory id -> (conversation, said at)."""
        rows = self._rows(ids)
        return {mid: self.texts[row] for mid, row in rows}, {mid: self._placed(row) for mid, row in rows}

    def cues_of(self, table: str, ids: Sequence[int]) -> dict[int, set[str]]:
        """memory id -> its values in one cue table, for the ids that have any."""
        offsets, codes = self._array(f"{table}_of_offsets"), self._array(f"{table}_of")
        values = self.values[table]
        found: dict[int, set[str]] = {}
        for mid, row in self._rows(ids):
            held = codes[offsets[row] : offsets[row + 1]].tolist()
            if held:
                found[mid] = {values[code] for code in held}
        return found

    def cue_sets_of(self, ids: Sequence[int]) -> dict[str, dict[int, set[str]]]:
        """cue table -> memory id -> its values there."""
        return {table: self.cues_of(table, ids) for table in CUE_COLUMNS}

    def holders_of(self, table: str, values: Sequence[str]) -> dict[str, list[int]]:
        """value -> the memories holding it (sorted ids), for the values some memory holds."""
        offsets, holders = self._array(f"{table}_holders_offsets"), self._array(f"{table}_holders")
        vocabulary = self.values[table]
        found: dict[str, list[int]] = {}
        for value in dict.fromkeys(values):
            code = vocabulary.find(value)
            if code >= 0:
                found[value] = sorted(holders[offsets[code] : offsets[code + 1]].tolist())
        return found

    def holder_counts(self, values: Sequence[str]) -> dict[str, int]:
        """concept cue -> how many memories hold it."""
        offsets, vocabulary = self._array("memory_cues_holders_offsets"), self.values["memory_cues"]
        found: dict[str, int] = {}
        for value in dict.fromkeys(values):
            code = vocabulary.find(value)
            if code >= 0:
                found[value] = int(offsets[code + 1] - offsets[code])
        return found

    def cue_values(self, table: str) -> list[str]:
        """Every distinct value of a cue table, in the order memories first name them."""
        vocabulary = self.values[table]
        return [vocabulary[code] for code in self._array(f"{table}_order").tolist()]

    def forms_of(self, forms: Sequence[str]) -> dict[str, str]:
        """Surface form -> the cue it stands for."""
        found: dict[str, str] = {}
        for form in dict.fromkeys(forms):
            at = self.forms.find(form)
            if at >= 0:
                found[form] = self.form_cues[at]
        return found

    def contiguity_of(self, ids: Sequence[int]) -> dict[int, set[int]]:
        """memory id -> the memories contiguous with it, for the ids that have any."""
        offsets, neighbours = self._array("contiguity_offsets"), self._array("contiguity")
        found: dict[int, set[int]] = {}
        for mid, row in self._rows(ids):
            listed = neighbours[offsets[row] : offsets[row + 1]].tolist()
            if listed:
                found[mid] = set(listed)
        return found

    def first_speakers_of(self, ids: Sequence[int]) -> dict[int, str]:
        """memory id -> the speaker of its first source turn."""
        codes = self._array("speaker_codes")
        coded = ((mid, int(codes[row])) for mid, row in self._rows(ids))
        return {mid: self.speakers[code] for mid, code in coded if code >= 0}

    def grounded_of(self, ids: Sequence[int]) -> dict[int, tuple[datetime, datetime]]:
        """memory id -> (start, end) of the time its text names, for those that name one."""
        grounded, starts, ends = self._array("grounded"), self._array("time_start"), self._array("time_end")
        return {
            mid: (_moment(int(starts[row])), _moment(int(ends[row])))  # type: ignore[misc]
            for mid, row in self._rows(ids)
            if grounded[row]
        }

    def grounded_within(self, start: datetime, end: datetime) -> list[int]:
        """Memories whose text names a time overlapping [start, end], by id (a NULL end overlaps nothing)."""
        ends = self._array("time_end")
        hit = self._array("grounded") & (self._array("time_start") <= _micros(end)) & (ends >= _micros(start))
        return self.ids[hit & (ends != NO_TIME)].tolist()

    def sources_of(self, ids: Sequence[int]) -> list[SourceRow]:
        """(memory id, turn id, session id, speaker, text, session time, said at, position) of the memories'
        source turns, in chat order."""
        offsets, held = self._array("memory_sources_offsets"), self._array("memory_sources")
        found = [(mid, turn) for mid, row in self._rows(ids) for turn in held[offsets[row] : offsets[row + 1]].tolist()]
        return [(mid, *self._turn(turn)) for mid, turn in sorted(found, key=lambda pair: self._position(pair[1]))]

    def previous_turns_of(self, ids: Sequence[int]) -> list[tuple[int, str, str, str, str]]:
        """(memory id, its turn's text, and turn id, speaker and text of the other speaker's turn just before it),
        for each source turn of the memories, last turn first."""
        offsets, held = self._array("memory_sources_offsets"), self._array("memory_sources")
        before_offsets, before = self._array("source_before_offsets"), self._array("source_before")
        texts, turn_ids = self._strings("source_text"), self._strings("source_turn")
        found = [
            (mid, turn, previous)
            for mid, row in self._rows(ids)
            for turn in held[offsets[row] : offsets[row + 1]].tolist()
            for previous in before[before_offsets[turn] : before_offsets[turn + 1]].tolist()
        ]
        found.sort(key=lambda item: -self._position(item[1]))
        return [
            (mid, texts[turn], turn_ids[previous], self._source_speaker(previous), texts[previous])
            for mid, turn, previous in found
        ]

    def _position(self, turn: int) -> int:
        """A source turn's position in its chat."""
        return int(self._array("source_position")[turn])

    def _source_speaker(self, turn: int) -> str:
        """Who said a source turn."""
        return self._strings("source_speaker_names")[int(self._array("source_speaker_codes")[turn])]

    def _turn(self, turn: int) -> tuple[str, str, str, str, datetime | None, datetime | None, int]:
        """(turn id, session id, speaker, text, session time, said at, position) of one source turn."""
        session = self._strings("source_session_names")[int(self._array("source_session_codes")[turn])]
        return (
            self._strings("source_turn")[turn],
            session,
            self._source_speaker(turn),
            self._strings("source_text")[turn],
            _moment(int(self._array("source_session_ts")[turn])),
            _moment(int(self._array("source_said_at")[turn])),
            self._position(turn),
        )

    def said_within(self, start: datetime, end: datetime) -> list[int]:
        """Memories said within [start, end], by id."""
        said = self._array("said_at")
        return self.ids[(said != NO_TIME) & (said >= _micros(start)) & (said <= _micros(end))].tolist()
