"""Where a store may be made, and one line for a folder ripple cannot use.

A new store goes only into a new folder, an empty one, or one that holds nothing but ripple's own files (a killed
first ingest leaves its temp database): never into a folder holding other files, whose modes a writer would change
and among which its files would mix. "Empty" ignores the marker files a desktop drops into every folder it shows
(`.DS_Store`, `.localized`, `Thumbs.db`, `desktop.ini`); any other entry, dotfiles such as `.git` or `.env`
included, is someone's work.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from ripplecli.errors import StoreError
from ripplecli.files import unusable_because
from ripplecli.store.layout import DB_FILE, is_own

DESKTOP_MARKERS = frozenset({".DS_Store", ".localized", "Thumbs.db", "desktop.ini"})
SHOWN_ENTRIES = 3  # a refusal names this many of the folder's entries
SUGGESTED_CHILD = "ripple"  # the folder a refusal suggests inside the one refused
FIXES = {  # what to do, by what the file system said
    errno.ENOTDIR: "; give a folder's path",
    errno.EROFS: "; give a folder on a writable disk",
    errno.EACCES: "; give a folder you can write",
    errno.EPERM: "; give a folder you can write",
}


def check_new_store(path: Path) -> None:
    """Refuse to create a store at `path` unless it is a new folder, an empty one or one holding only ripple's
    files; not inside another store's folder either. Nothing is written."""
    host = _store_around(path)
    if host is not None:
        raise StoreError(f"store {path}: inside the ripple store {host}; give a folder outside it")
    if not path.is_dir():
        return
    others = sorted(entry for entry in path.iterdir() if not is_own(entry.name) and entry.name not in DESKTOP_MARKERS)
    inner = _store_inside(others)
    if inner is not None:
        raise StoreError(f"store {path}: not a ripple store itself, but {inner} holds one; give that folder")
    if others:
        shown = ", ".join(entry.name + ("/" if entry.is_dir() else "") for entry in others[:SHOWN_ENTRIES])
        more = ", …" if len(others) > SHOWN_ENTRIES else ""
        suggestion = path / SUGGESTED_CHILD
        example = "" if suggestion.exists() else f", e.g. {suggestion}"
        raise StoreError(
            f"store {path}: the folder holds other files ({shown}{more}); give an empty or new folder{example}"
        )


def no_store_here(path: Path) -> StoreError:
    """The error for a read of a folder with no store, naming the store inside it when there is one."""
    inner = _store_inside(sorted(path.iterdir())) if path.is_dir() else None
    if inner is not None:
        return StoreError(f"store {path}: no ripple store here, but {inner} holds one; give that folder")
    return StoreError(f"store {path}: no ripple store here (run `ripple ingest` first)")


def check_writable(path: Path) -> None:
    """Refuse to open an existing store for writing in a folder this process cannot write (DuckDB would open the
    database, then fail mid-command on its WAL or a derived index)."""
    if not os.access(path, os.W_OK | os.X_OK):
        why = _why_not_writable(path)
        raise StoreError(f"store {path}: cannot write to it: {why}; commands that only read it still work")


def folder_error(path: Path, exc: OSError) -> StoreError:
    """One line for what the file system refused while a store was opened or made at `path`."""
    fix = FIXES.get(exc.errno or 0, "")
    return StoreError(f"store {path}: cannot use it: {unusable_because(path, exc)}{fix}")


def _store_around(path: Path) -> Path | None:
    """The store folder `path` lies inside, if any."""
    return next((above for above in path.absolute().parents if (above / DB_FILE).is_file()), None)


def _store_inside(entries: list[Path]) -> Path | None:
    """The first of `entries` that is a store folder."""
    return next((entry for entry in entries if _holds_store(entry)), None)


def _holds_store(folder: Path) -> bool:
    """Whether `folder` is a store folder (False for one this process may not look into)."""
    try:
        return (folder / DB_FILE).is_file()
    except OSError:
        return False


def _why_not_writable(path: Path) -> str:
    """Read-only file system, or permission denied."""
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows)
        read_only = False
    return "the file system is read-only" if read_only else "permission denied"
