"""Reading a store without opening its database: a cold ask's reads answered from what the last writer left.

Opening DuckDB cost a cold `ripple ask` ~60 ms of ~0.33 s (the engine's import, the connection, the schema, meta
and evidence queries). So a writer's close also records, beside recall's arrays (store/recall_arrays.py), the rest
of what an ask reads (the meta table, the schema version, the memory and vector counts, the chats' speakers,
titles and owner) and, once its connection is closed, the identity of the database file and of its WAL (size,
mtime, inode). A read-only open whose database file and WAL are still exactly as recorded, and which no other
process holds for writing (DuckDB's POSIX lock on the file, tested without taking it), reads that snapshot; its
connection opens only if a command asks for SQL. A store a writer holds is still reported busy: the open falls back
to DuckDB, which names the writer. Anything else (a changed file, a WAL, a stamp of another format or schema, a
platform whose lock this cannot test) opens the database as before.

The test takes no lock: taking one would tie it to this process's other descriptors of the file (closing any of
them drops all of a process's POSIX locks there, DuckDB's own included). So a writer may start while an ask reads
the snapshot; the ask then answers from the state before it, as if it had run a moment earlier.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ripplecli.errors import DISK_FULL_CODES
from ripplecli.files import replace_atomically
from ripplecli.store.layout import RECALL_STAMP
from ripplecli.store.seals import DamagedFile, read_sealed, sealed_json

if TYPE_CHECKING:
    from ripplecli.store.recall_arrays import RecallArrays

log = logging.getLogger(__name__)

READY_FILE = "ready.json"
FORMAT = 3  # 2: sealed (store/seals.py), as are the arrays it names; 3: counts passages
COUNTED = ("memories", "vectors", "passages")  # the row counts an ask reads

# struct flock by platform (native alignment, trailing padding included) and where its lock type sits in it.
FLOCK_LAYOUTS = {
    "linux": (struct.Struct("@hhqqi4x"), 0),
    "darwin": (struct.Struct("@qqihh"), 3),
}


@dataclass
class Snapshot:
    """What a read-only open reads instead of the database: the small facts, and recall's arrays when first used
    (mapping them needs numpy, which a command that shows one memory does not)."""

    folder: Path
    meta: dict[str, str]  # meta key -> its stored JSON text, as the meta table holds it
    schema: int
    counts: dict[str, int]
    speakers: list[str]
    titles: dict[str, str]
    owner: str | None
    files: list[list[int] | None]  # the identities of the database file and its WAL the stamp recorded
    arrays_stamp: dict[str, Any] = field(repr=False)  # their recall.json (layout included), read once by open()

    @classmethod
    def open(cls, folder: Path, db_file: Path, schema: int) -> Snapshot | None:
        """The snapshot in `folder` (the store's recall folder) when it still describes `db_file` and no writer holds
        that file; else None, and the caller opens the database. Raises DamagedFile when its stamp or the arrays'
        fails its seal."""
        ready = read_ready(folder)
        if ready is None or ready.get("format") != FORMAT or ready.get("schema") != schema:
            return None
        if ready.get("files") != _identities(db_file) or _writer_holds(db_file) is not False:
            return None
        arrays, sealed = read_sealed(folder / RECALL_STAMP)  # read here: recall_arrays would import numpy
        arrays = arrays if sealed and arrays else {}
        try:
            if arrays.get("version") != _memories_version(ready["meta"]):  # replaced since the stamp was read
                return None
            return cls(
                folder,
                dict(ready["meta"]),
                int(ready["schema"]),
                {name: int(ready["counts"][name]) for name in COUNTED},
                list(ready["speakers"]),
                dict(ready["titles"]),
                ready["owner"],
                ready["files"],
                arrays,
            )
        except (KeyError, TypeError, ValueError):
            return None

    def describes(self, db_file: Path) -> bool:
        """Whether the database file and its WAL are still as the stamp recorded (checked again when a snapshot
        store opens its connection after all: a writer may have come and gone meanwhile)."""
        return _identities(db_file) == self.files

    @cached_property
    def arrays(self) -> RecallArrays | None:
        """Recall's arrays (built from the memories version the meta names, as open() checked), mapped on first use;
        None if they cannot be read (the store then reads by SQL, saying so when a file is damaged)."""
        from ripplecli.store.recall_arrays import RecallArrays
        from ripplecli.store.seals import warn_damaged

        try:
            return RecallArrays.mapped(self.folder, self.arrays_stamp)
        except DamagedFile as damage:
            warn_damaged(damage, writable=False)
            return None


def read_ready(folder: Path) -> dict[str, Any] | None:
    """The snapshot's stamp, its seal checked; None when absent or of an older format (no seal). Raises DamagedFile
    when it fails its seal."""
    ready, sealed = read_sealed(folder / READY_FILE)
    return ready if sealed else None


def _memories_version(meta: dict[str, str]) -> int:
    """The memories version in a meta table's raw values (what `Store.version("memories")` reads)."""
    return int(json.loads(meta.get("memories_version", "0")))


def recorded_facts(store) -> dict[str, Any]:
    """What the snapshot records from a writer's open connection, once its derived indexes are current (the
    arrays then hold the memories version the meta names)."""
    speakers, titles, owner = store.people()
    return {
        "format": FORMAT,
        "meta": store.meta_table(),
        "schema": store.schema_version(),
        "counts": {name: store.count(name) for name in COUNTED},
        "speakers": speakers,
        "titles": titles,
        "owner": owner,
    }


def stamp(folder: Path, db_file: Path, recorded: dict[str, Any]) -> None:
    """Write the snapshot's stamp: `recorded` facts and the database file as it is now that no one writes it."""
    if not folder.is_dir():
        return
    ready = {**recorded, "files": _identities(db_file)}
    try:
        replace_atomically(folder / READY_FILE, lambda temp: temp.write_text(sealed_json(ready), encoding="utf-8"))
    except OSError as exc:  # a read-only folder: asks open the database (a full disk is said, as everywhere)
        if exc.errno in DISK_FULL_CODES:
            raise
        log.debug("could not write %s: %s", folder / READY_FILE, exc)


def _identities(db_file: Path) -> list[list[int] | None]:
    """(size, mtime in ns, inode) of the database file and of its WAL; None for one that is absent."""
    return [_identity(db_file), _identity(db_file.with_name(db_file.name + ".wal"))]


def _identity(path: Path) -> list[int] | None:
    """(size, mtime in ns, inode) of a file, or None."""
    try:
        info = path.stat()
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _writer_holds(db_file: Path) -> bool | None:
    """Whether another process holds the database file's POSIX write lock, as DuckDB's writers do (F_GETLK: asked,
    not taken); None when this platform's lock record is not one this knows."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return None
    layout = FLOCK_LAYOUTS.get(sys.platform)
    if layout is None:
        return None
    fields, type_at = layout
    try:
        handle = os.open(db_file, os.O_RDONLY)
    except OSError:
        return None
    try:
        request = fields.pack(*_flock_values(type_at, fcntl.F_RDLCK))
        answer = fcntl.fcntl(handle, fcntl.F_GETLK, request)
    except OSError:
        return None
    finally:
        os.close(handle)
    return fields.unpack(answer)[type_at] != fcntl.F_UNLCK


def _flock_values(type_at: int, lock_type: int) -> tuple[int, ...]:
    """A `struct flock` asking about a read lock over the whole file (start 0, length 0, from the file's start)."""
    if type_at == 0:  # Linux: type, whence, start, length, pid
        return (lock_type, os.SEEK_SET, 0, 0, 0)
    return (0, 0, 0, lock_type, os.SEEK_SET)  # BSD and macOS: start, length, pid, type, whence
