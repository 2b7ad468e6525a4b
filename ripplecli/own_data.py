"""Own your data, the library face: list, search and show memories, forget, export/import, doctor.

`Memory` (ripplecli.api) inherits these methods; they live here to keep the store-management logic together.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ripplecli.config import GraphParams, Settings
from ripplecli.errors import DISK_FULL_CODES, InputError, StoreError, known_failure
from ripplecli.inputs import parse_memory_id

if TYPE_CHECKING:  # browsing, forgetting and writing files load when used, not on every ask (nor on `--help`)
    from ripplecli.protocols import Encoder
    from ripplecli.store.forget import ForgetPlan


class StoreUpkeep:
    """Inspect, remove, move and check what a store holds (mixed into `Memory`)."""

    path: Path
    store: Any
    settings: Settings
    _encoder: Encoder | None
    _recaller: Any
    encoder: Encoder  # Memory's (loaded on first use)

    # --- inspect ------------------------------------------------------------------------------
    def list_memories(
        self,
        *,
        person: str | None = None,
        session: str | None = None,
        conversation: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Memories by person, session, conversation and session date, in id order."""
        from ripplecli.store.browse import MemoryFilter, list_memories

        if limit is not None and limit < 1:
            raise InputError("--limit must be at least 1")
        selection = MemoryFilter(conversation=conversation, session=session, person=person, since=since, until=until)
        return list_memories(self.store, selection, limit)

    def search_memories(self, text: str, *, k: int = 10) -> list[dict[str, Any]]:
        """Memories matching a text, lexical (BM25) and dense (hnswlib) views fused by rank."""
        from ripplecli.store.browse import search_memories

        if k < 1:
            raise InputError("--k must be at least 1")
        return search_memories(self.store, lambda: self.encoder, text, k)

    def show(self, memory_id: int | str) -> dict[str, Any]:
        """One memory with its cues, source turns and edges in every channel."""
        from ripplecli.store.browse import show_memory

        return show_memory(self.store, parse_memory_id(memory_id))

    # --- forget -------------------------------------------------------------------------------
    def forget(
        self,
        *ids: int | str,
        conversation: str | None = None,
        session: str | None = None,
        person: str | None = None,
        before: datetime | None = None,
        keep_sources: bool = False,
        dry_run: bool = False,
    ) -> ForgetPlan:
        """Remove memories and everything derived from them so no file of the store still holds their text."""
        from ripplecli.store.browse import MemoryFilter
        from ripplecli.store.forget import forget, plan_forget

        selection = MemoryFilter(
            ids=tuple(parse_memory_id(i) for i in ids),
            conversation=conversation,
            session=session,
            person=person,
            before=before,
        )
        if selection.empty:
            raise InputError("say what to forget: memory ids, --conversation, --session, --person or --before")
        if dry_run:
            return plan_forget(self.store, selection, keep_sources)
        self._writable()
        plan = forget(self.store, selection, keep_sources)
        self._recaller = None
        return plan

    def _writable(self) -> None:
        """Changing a store needs it opened for writing."""
        if self.store.read_only:
            raise StoreError(f"store {self.path}: opened read-only; nothing can be changed")

    # --- export / import ----------------------------------------------------------------------
    def export(self, target: str | Path | TextIO | None = None, *, with_vectors: bool = False) -> int:
        """Write the store as one JSONL document (stdout when no target); returns the number of lines."""
        from ripplecli.store.portable import export_lines

        lines = export_lines(self.store, with_vectors)
        if target is None or not isinstance(target, str | Path):
            return _write_lines(lines, target or sys.stdout)
        return _write_file(Path(target), lines)

    @staticmethod
    def salvage(path: str | Path | None, target: str | Path | TextIO | None = None, *, with_vectors: bool = False):
        """Write every row a damaged store's database still gives as an export (stdout when no target), without
        opening the store itself (its schema or meta may be what is damaged); returns what was read and lost."""
        from ripplecli.config import data_home
        from ripplecli.store.db import DB_FILE, open_database
        from ripplecli.store.salvage import salvage

        folder = Path(path).expanduser() if path else data_home()
        if not (folder / DB_FILE).is_file():
            raise StoreError(f"store {folder}: no ripple store here")
        con = open_database(folder / DB_FILE)
        try:
            found = salvage(con, with_vectors)
        finally:
            con.close()
        if target is None or not isinstance(target, str | Path):
            _write_lines(found.lines, target or sys.stdout)
        else:
            _write_file(Path(target), found.lines)
        return found

    def import_(self, source: str | Path) -> dict[str, int]:
        """Restore an export into this (empty) store; vectors are re-encoded when the export has none."""
        from ripplecli.store.doctor import build_passages
        from ripplecli.store.portable import ensure_empty, import_records, read_document

        self._writable()
        ensure_empty(self.store)
        path = Path(source)
        header, records = read_document(_read_lines(path), path.name)
        self.settings = settings_of(header["meta"].get("settings"))
        self._encoder = None
        if not records["vector"] and records["memory"]:
            self._check_encoder(header["meta"].get("encoder_name"), path.name)
        import_records(self.store, header, records, lambda texts: self.encoder.encode(texts))
        build_passages(self.store, lambda: self.encoder)  # an export holds no passages: encoded again
        self.store.rebuild_vector_index()
        self.store.refresh_lexical_index()
        return {kind: len(rows) for kind, rows in records.items()}

    def _check_encoder(self, expected: str | None, label: str) -> None:
        """Re-encoding must use the encoder the store was built with, or recall would mix vector spaces."""
        name = self.encoder.name
        if expected is not None and name != expected:
            raise InputError(
                f"{label}: built with encoder {expected}, but {name} is what loads here; export with --with-vectors"
            )

    # --- doctor -------------------------------------------------------------------------------
    def doctor(self, *, repair: bool = False) -> dict[str, Any]:
        """Integrity checks; with `repair`, orphans dropped and derived indexes rebuilt from the tables first."""
        from ripplecli.store.doctor import diagnose, summary
        from ripplecli.store.doctor import repair as fix

        repaired: list[str] = []
        if repair:
            self._writable()
            repaired = fix(self.store, lambda: self.encoder)
            self._recaller = None
        return {**summary(diagnose(self.store)), "repaired": repaired, "store": str(self.path)}


def unopenable_report(path: str | Path | None, failure: StoreError) -> dict[str, Any]:
    """`doctor`'s report on a store whose database file DuckDB cannot open at all."""
    from ripplecli.config import data_home
    from ripplecli.store.doctor import unopenable

    return unopenable(Path(path).expanduser() if path else data_home(), failure)


def settings_of(recorded: dict[str, Any] | None) -> Settings:
    """Settings from their recorded dict (meta 'settings'), defaults when absent."""
    if recorded is None:
        return Settings()
    values = dict(recorded)
    graph = GraphParams(**values.pop("graph", {}))
    return Settings(**values, graph=graph)


def _read_lines(path: Path) -> Iterable[str]:
    """The export's lines; a missing or unreadable file is one clear line."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def _write_lines(lines: Iterable[str], stream: TextIO) -> int:
    """Lines onto an open stream."""
    count = 0
    for line in lines:
        stream.write(line)
        count += 1
    stream.flush()
    return count


def _write_file(path: Path, lines: Iterable[str]) -> int:
    """Into a 0600 temp file beside `path`, then renamed: an export holds private conversations."""
    from ripplecli.files import replace_atomically, unusable_because

    if path.is_dir():
        raise InputError(f"--out {path}: is a folder")
    if not path.parent.is_dir():
        raise InputError(f"--out {path}: folder {path.parent} does not exist")

    def write(temp: Path) -> int:
        with open(temp, "w", encoding="utf-8", newline="\n") as stream:
            return _write_lines(lines, stream)

    try:
        return replace_atomically(path, write)
    except OSError as exc:  # a full disk (one line, exit 1), a read-only disk, a folder of someone else's
        if exc.errno in DISK_FULL_CODES:
            raise known_failure(exc) or exc from None
        raise InputError(f"--out {path}: cannot write it: {unusable_because(path, exc)}") from None
