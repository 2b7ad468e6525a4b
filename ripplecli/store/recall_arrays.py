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

import logging
import mmap
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from ripplecli.files import private_file, replace_folder, write_private_text
from ripplecli.store.layout import RECALL_STAMP
from ripplecli.store.reads import CUE_COLUMNS, SourceRow
from ripplecli.store.schema import SAID_WALL_CLOCK
from ripplecli.store.seals import check_folder, read_sealed, seal_folder, sealed_json

log = logging.getLogger(__name__)

META_FILE = RECALL_STAMP  # the stamp and where each array lies in the data file
DATA_FILE = "recall.bin"  # every array, one after the other
ALIGN = 8
# 2: said_local (said on the clock where it was said); 3: said offsets; 4: the stamp seals itself and the data
# file (store/seals.py)
FORMAT = 4
EPOCH = datetime(1970, 1, 1)
NO_TIME = np.iinfo(np.int64).min  # a NULL timestamp
NO_OFFSET = np.iinfo(np.int32).min  # a NULL said_offset (the zone is unknown)
ONE_MICROSECOND = timedelta(microseconds=1)


class Strings:
    """Strings kept in one UTF-8 blob, the i-th between offsets i and i+1; `find` bisects a sorted list."""

    def __init__(self, offsets: np.ndarray, blob: np.ndarray) -> None:
        self._offsets = offsets.data  # a memoryview: plain Python ints on indexing, far cheaper than numpy scalars
        self._blob = blob.data

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

    def found(self, values: Sequence[str]) -> list[tuple[str, int]]:
        """(value, position) of each distinct value in this sorted list, in the order given; absent ones left out."""
        positions = ((value, self.find(value)) for value in dict.fromkeys(values))
        return [(value, at) for value, at in positions if at >= 0]


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
    """Every array and the stamp, into a fresh folder. Columns come from DuckDB as numpy arrays and are grouped with
    numpy: at 100K memories a build costs ~1 s of a writer's close, not the ~2 s rows read one tuple at a time did."""
    con = store.con
    memories = _columns(
        con,
        f"SELECT memory_id, restatement, conversation_id, {_us('said_at')} AS said_at, "
        f"{_us(SAID_WALL_CLOCK)} AS said_local, {_offset('said_offset')} AS said_offset, "
        f"time_grounded AND time_start IS NOT NULL AS grounded, {_us('time_start')} AS time_start, "
        f"{_us('time_end')} AS time_end FROM memories ORDER BY memory_id",
    )
    ids = memories["memory_id"].astype(np.int64)
    arrays: dict[str, np.ndarray] = {"ids": ids}
    _put_strings(arrays, "texts", memories["restatement"].tolist())
    _put_codes(arrays, "conversation", memories["conversation_id"])
    for name in ("said_at", "said_local", "time_start", "time_end"):
        arrays[name] = memories[name].astype(np.int64)
    arrays["said_offset"] = memories["said_offset"].astype(np.int32)
    arrays["grounded"] = memories["grounded"].astype(np.bool_)
    first = _columns(
        con,
        "SELECT p.memory_id, arg_min(s.speaker, s.position) AS speaker FROM provenance p JOIN sources s "
        "USING (source_id) GROUP BY p.memory_id",
    )
    rows, known = _rows_of(ids, first["memory_id"])
    _put_codes(arrays, "speaker", first["speaker"][known], rows[known], len(ids))
    for table, column in CUE_COLUMNS.items():
        _put_cue_table(arrays, con, table, column, ids)
    forms = _columns(con, "SELECT form, min(cue) AS cue FROM cue_forms GROUP BY form ORDER BY form")
    _put_strings(arrays, "forms", forms["form"].tolist())
    _put_strings(arrays, "form_cues", forms["cue"].tolist())
    _put_neighbours(arrays, con, ids)
    _put_sources(arrays, con, ids)
    layout: dict[str, tuple[str, int, int]] = {}
    with private_file(staging / DATA_FILE) as out:
        for name, array in arrays.items():
            out.write(b"\0" * (-out.tell() % ALIGN))
            layout[name] = (array.dtype.str, out.tell(), len(array))
            out.write(np.ascontiguousarray(array).tobytes())
        size = out.tell()
    stamp = {"format": FORMAT, "version": store.version("memories"), "count": len(ids), "size": size}
    write_private_text(staging / META_FILE, sealed_json({**stamp, "arrays": layout, "files": seal_folder(staging)}))


def _us(column: str) -> str:
    """SQL for a timestamp column as microseconds since 1970, NO_TIME for NULL (what `_micros` computes)."""
    return f"coalesce(epoch_us({column}), {NO_TIME})"


def _offset(column: str) -> str:
    """SQL for a said_offset column, NO_OFFSET for NULL."""
    return f"coalesce({column}, {NO_OFFSET})"


def _columns(con, sql: str) -> dict[str, np.ndarray]:
    """A query's columns as numpy arrays (strings as object arrays; the queries leave no NULL in them)."""
    return {name: np.asarray(values) for name, values in con.execute(sql).fetchnumpy().items()}


def _rows_of(ids: np.ndarray, mids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row of each memory id in `ids` (sorted), and which of them are memories at all."""
    mids = mids.astype(np.int64)
    rows = np.searchsorted(ids, mids)
    known = rows < len(ids)
    known[known] = ids[rows[known]] == mids[known]  # a row of a missing memory holds, but no memory has it
    return rows, known


def _distinct(values: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The distinct strings of a column, sorted by code point, and each row's position among them (hashing the few
    distinct values: numpy's unique compares Python strings one pair at a time, ~1 s for 100K memories' cues)."""
    column = values.tolist()
    distinct = sorted(set(column))
    code = {value: i for i, value in enumerate(distinct)}
    return distinct, np.fromiter((code[value] for value in column), dtype=np.int64, count=len(column))


def _put_strings(arrays: dict[str, np.ndarray], name: str, values: Sequence[str]) -> None:
    """A list of strings as two arrays."""
    arrays[f"{name}_offsets"], arrays[f"{name}_blob"] = Strings.pack(values)


def _put_codes(
    arrays: dict[str, np.ndarray],
    name: str,
    values: np.ndarray,
    rows: np.ndarray | None = None,
    count: int | None = None,
) -> None:
    """A column of repeated strings as the distinct strings (sorted) and, per row, a code into them; given `rows`,
    the values belong to those rows of `count`, and the others get -1 (NULL)."""
    distinct, codes = _distinct(values)
    _put_strings(arrays, f"{name}_names", distinct)
    if rows is None:
        arrays[f"{name}_codes"] = codes.astype(np.int32)
        return
    placed = np.full(count or 0, -1, dtype=np.int32)
    placed[rows] = codes
    arrays[f"{name}_codes"] = placed


def _put_cue_table(arrays: dict[str, np.ndarray], con, table: str, column: str, ids: np.ndarray) -> None:
    """One cue table both ways: memory row -> value codes, value code -> holder ids (sorted), and for the
    listing of names and places, the values in the order memories first name them."""
    pairs = _columns(con, f"SELECT memory_id, {column} AS value FROM {table} ORDER BY memory_id, rowid")
    mids = pairs["memory_id"].astype(np.int64)
    values, codes = _distinct(pairs["value"])
    rows, known = _rows_of(ids, mids)
    _put_strings(arrays, f"{table}_values", values)
    arrays[f"{table}_of_offsets"], arrays[f"{table}_of"] = _groups(rows[known], codes[known].astype(np.int32), len(ids))
    arrays[f"{table}_holders_offsets"], arrays[f"{table}_holders"] = _groups(codes, mids, len(values))
    order = _columns(
        con, f"SELECT {column} AS value FROM {table} GROUP BY {column} ORDER BY min(memory_id), min(rowid)"
    )
    code = {value: i for i, value in enumerate(values)}
    arrays[f"{table}_order"] = np.array([code[value] for value in order["value"].tolist()], dtype=np.int32)


def _put_neighbours(arrays: dict[str, np.ndarray], con, ids: np.ndarray) -> None:
    """Each memory's contiguous memories (either direction), listed in the (src, dst) order of the edges, so a set
    built from them is filled in the order `SqlReads.contiguity_of` fills it."""
    edges = _columns(con, "SELECT src, dst FROM edges WHERE channel = 'contiguity' ORDER BY src, dst")
    src, dst = edges["src"].astype(np.int64), edges["dst"].astype(np.int64)
    owners = np.column_stack([src, dst]).ravel()  # each edge twice, as the SQL read meets it: from src, then dst
    others = np.column_stack([dst, src]).ravel()
    rows, known = _rows_of(ids, owners)
    arrays["contiguity_offsets"], arrays["contiguity"] = _groups(rows[known], others[known], len(ids))


def _put_sources(arrays: dict[str, np.ndarray], con, ids: np.ndarray) -> None:
    """The source turns (the evidence's quotes): each turn's fields, each memory's turns in chat order, and each
    turn's other-speaker turn just before it in its session (what a short reply answers)."""
    turns = _columns(
        con,
        f"SELECT source_id, session_id, turn_id, speaker, text, {_us('session_ts')} AS session_ts, "
        f"{_us('said_at')} AS said_at, position, {_offset('said_offset')} AS said_offset FROM sources "
        "ORDER BY source_id",
    )
    source_ids = turns["source_id"].astype(np.int64)
    _put_strings(arrays, "source_turn", turns["turn_id"].tolist())
    _put_codes(arrays, "source_session", turns["session_id"])
    _put_codes(arrays, "source_speaker", turns["speaker"])
    _put_strings(arrays, "source_text", turns["text"].tolist())
    for name in ("session_ts", "said_at", "position"):
        arrays[f"source_{name}"] = turns[name].astype(np.int64)
    arrays["source_said_offset"] = turns["said_offset"].astype(np.int32)
    before = _columns(  # the join queries.previous_turns makes, for every turn
        con,
        "SELECT s.source_id AS turn, prev.source_id AS previous FROM sources s JOIN sources prev "
        "ON prev.conversation_id = s.conversation_id AND prev.session_id = s.session_id "
        "AND prev.position = s.position - 1 AND prev.speaker <> s.speaker ORDER BY s.source_id, prev.source_id",
    )
    turn_rows, previous_rows = (np.searchsorted(source_ids, before[c].astype(np.int64)) for c in ("turn", "previous"))
    arrays["source_before_offsets"], arrays["source_before"] = _groups(turn_rows, previous_rows, len(source_ids))
    links = _columns(  # the join queries.memory_sources makes, each memory's turns in chat order
        con,
        "SELECT p.memory_id, p.source_id FROM provenance p JOIN sources s USING (source_id) "
        "ORDER BY p.memory_id, s.position, p.source_id",
    )
    rows, known = _rows_of(ids, links["memory_id"])
    held = np.searchsorted(source_ids, links["source_id"].astype(np.int64))
    arrays["memory_sources_offsets"], arrays["memory_sources"] = _groups(rows[known], held[known], len(ids))


def read_stamp(folder: Path) -> dict | None:
    """The arrays' stamp (recall.json), its seal checked; None when absent or of an older format (no seal). Raises
    DamagedFile when it fails its seal."""
    stamp, sealed = read_sealed(folder / META_FILE)
    return stamp if sealed else None


def _view(data: mmap.mmap, kind: str, offset: int, length: int) -> np.ndarray:
    """One array of the data file, in place (numpy will not view zero items at the file's end: those are made)."""
    return np.frombuffer(data, dtype=np.dtype(kind), count=length, offset=offset) if length else np.empty(0, kind)


class RecallArrays:
    """The saved arrays, mapped read-only; the same reads as `lookups.SqlReads`, answered without SQL."""

    def __init__(self, folder: Path, stamp: dict) -> None:
        self.folder = folder
        with (folder / DATA_FILE).open("rb") as handle:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)  # the map outlives the file handle
        if len(data) != stamp["size"]:
            raise ValueError(f"{folder / DATA_FILE}: {len(data)} bytes, the stamp says {stamp['size']}")
        self._arrays = {name: _view(data, *where) for name, where in stamp["arrays"].items()}
        self._string_lists: dict[str, Strings] = {}
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
    def open(cls, folder: Path, version: int, whole: bool = False) -> RecallArrays | None:
        """The arrays saved in `folder` when they were built from memories version `version`; else None. Raises
        DamagedFile when the stamp or the data file fails its seal (every chunk with `whole`)."""
        stamp = read_stamp(folder)
        if stamp is None or stamp.get("version") != version:
            return None
        return cls.mapped(folder, stamp, whole)

    @classmethod
    def mapped(cls, folder: Path, stamp: dict, whole: bool = False) -> RecallArrays | None:
        """The arrays `stamp` (their recall.json, already read) describes, mapped; None when they are of another
        format or unreadable. Raises DamagedFile when the data file fails its seal."""
        if stamp.get("format") != FORMAT:
            return None
        check_folder(folder, stamp.get("files"), whole)
        try:
            return cls(folder, stamp)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.debug("recall arrays in %s are unreadable (%s); reading from the database", folder, exc)
            return None

    def _array(self, name: str) -> np.ndarray:
        """One saved array."""
        return self._arrays[name]

    def _strings(self, name: str) -> Strings:
        """A saved list of strings (texts, forms, a cue table's values, ...), made once."""
        if name not in self._string_lists:
            self._string_lists[name] = Strings(self._array(f"{name}_offsets"), self._array(f"{name}_blob"))
        return self._string_lists[name]

    def _coded(self, name: str, row: int) -> str:
        """The string a row's code names in a coded column (`_put_codes`)."""
        return self._strings(f"{name}_names")[int(self._array(f"{name}_codes")[row])]

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
        texts = self._strings("texts")
        return {mid: texts[row] for mid, row in self._rows(ids)}

    def placed_of(self, ids: Sequence[int]) -> dict[int, tuple[str, datetime | None]]:
        """memory id -> (conversation, said at)."""
        return {mid: self._placed(row) for mid, row in self._rows(ids)}

    def _placed(self, row: int) -> tuple[str, datetime | None]:
        """(conversation, said at) of one row."""
        return self._coded("conversation", row), _moment(int(self._array("said_at")[row]))

    def said_offsets_of(self, ids: Sequence[int]) -> dict[int, int]:
        """memory id -> the UTC offset (seconds) where it was said, for those said with a zone."""
        offsets = self._array("said_offset")
        return {mid: int(offsets[row]) for mid, row in self._rows(ids) if offsets[row] != NO_OFFSET}

    def memory_rows_of(self, ids: Sequence[int]) -> tuple[dict[int, str], dict[int, tuple[str, datetime | None]]]:
        """memory id -> restatement, and memory id -> (conversation, said at)."""
        rows, texts = self._rows(ids), self._strings("texts")
        return {mid: texts[row] for mid, row in rows}, {mid: self._placed(row) for mid, row in rows}

    def cues_of(self, table: str, ids: Sequence[int]) -> dict[int, set[str]]:
        """memory id -> its values in one cue table, for the ids that have any."""
        offsets, codes = self._array(f"{table}_of_offsets"), self._array(f"{table}_of")
        values = self._strings(f"{table}_values")
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
        found = self._strings(f"{table}_values").found(values)
        return {value: sorted(holders[offsets[code] : offsets[code + 1]].tolist()) for value, code in found}

    def holder_counts(self, values: Sequence[str]) -> dict[str, int]:
        """concept cue -> how many memories hold it."""
        offsets = self._array("memory_cues_holders_offsets")
        found = self._strings("memory_cues_values").found(values)
        return {value: int(offsets[code + 1] - offsets[code]) for value, code in found}

    def cue_values(self, table: str) -> list[str]:
        """Every distinct value of a cue table, in the order memories first name them."""
        vocabulary = self._strings(f"{table}_values")
        return [vocabulary[code] for code in self._array(f"{table}_order").tolist()]

    def forms_of(self, forms: Sequence[str]) -> dict[str, str]:
        """Surface form -> the cue it stands for."""
        cues = self._strings("form_cues")
        return {form: cues[at] for form, at in self._strings("forms").found(forms)}

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
        return {mid: self._coded("speaker", row) for mid, row in self._rows(ids) if codes[row] >= 0}

    def grounded_of(self, ids: Sequence[int]) -> dict[int, tuple[datetime, datetime]]:
        """memory id -> (start, end) of the time its text names, for those that name one."""
        grounded, starts, ends = self._array("grounded"), self._array("time_start"), self._array("time_end")
        return {
            mid: (_moment(int(starts[row])), _moment(int(ends[row])))  # type: ignore[misc]  # grounded: both set
            for mid, row in self._rows(ids)
            if grounded[row]
        }

    def grounded_within(self, start: datetime, end: datetime) -> list[int]:
        """Memories whose text names a time overlapping [start, end], by id (a NULL end overlaps nothing)."""
        ends = self._array("time_end")
        hit = self._array("grounded") & (self._array("time_start") <= _micros(end)) & (ends >= _micros(start))
        return self.ids[hit & (ends != NO_TIME)].tolist()

    def sources_of(self, ids: Sequence[int]) -> list[SourceRow]:
        """(memory id, turn id, session id, speaker, text, session time, said at, position, said offset) of the
        memories' source turns, in chat order."""
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
            (mid, texts[turn], turn_ids[previous], self._coded("source_speaker", previous), texts[previous])
            for mid, turn, previous in found
        ]

    def _position(self, turn: int) -> int:
        """A source turn's position in its chat."""
        return int(self._array("source_position")[turn])

    def _turn(self, turn: int) -> tuple[str, str, str, str, datetime | None, datetime | None, int, int | None]:
        """(turn id, session id, speaker, text, session time, said at, position, said offset) of one source turn."""
        offset = int(self._array("source_said_offset")[turn])
        return (
            self._strings("source_turn")[turn],
            self._coded("source_session", turn),
            self._coded("source_speaker", turn),
            self._strings("source_text")[turn],
            _moment(int(self._array("source_session_ts")[turn])),
            _moment(int(self._array("source_said_at")[turn])),
            self._position(turn),
            None if offset == NO_OFFSET else offset,
        )

    def said_within(self, start: datetime, end: datetime) -> list[int]:
        """Memories said within [start, end] on the clock where they were said, by id."""
        said = self._array("said_local")
        return self.ids[(said != NO_TIME) & (said >= _micros(start)) & (said <= _micros(end))].tolist()
