"""Errors a user can cause, each mapped to one clear line and an exit code by the CLI."""

from __future__ import annotations

import errno
import re


class RippleError(Exception):
    """Base for expected failures: the message is shown as one line, no traceback."""

    exit_code = 2


class InputError(RippleError):
    """A file, argument or question that ripple cannot use; nothing was written."""

    exit_code = 2


class StoreError(RippleError):
    """The store is missing, from a newer schema, or damaged."""

    exit_code = 2


class StoreBusyError(RippleError):
    """Another process holds the store."""

    exit_code = 3


class ModelError(RippleError):
    """A configured local model cannot be used."""

    exit_code = 2


class DownloadError(RippleError):
    """A model download failed (network, server or checksum); a partial file is kept only when it can resume."""

    exit_code = 2


class DiskFullError(RippleError):
    """The disk filled while ripple wrote: what was being written is dropped whole, the store is as it was before."""

    exit_code = 1


class DamagedStoreError(StoreError):
    """The database file fails DuckDB's own checks (a checksum, a cut file): its rows cannot all be read."""


DISK_FULL_CODES = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))  # no disk quotas on some systems
DISK_FULL_WORDS = ("No space left on device", "Disk quota exceeded")
DAMAGE_WORDS = ("Corrupt database file", "not a valid DuckDB database file", "Could not read enough bytes")
_TEMP_PART = re.compile(r"^\.(.+)\.[^.]+\.tmp$")  # files.replace_atomically's and replace_folder's temp names


def known_failure(exc: BaseException) -> RippleError | None:
    """The one-line error for a full disk under the store or a damaged database file, from the OSError or the
    DuckDB error that reported it (recognised by their words: the engine is not imported here); else None."""
    if isinstance(exc, RippleError):
        return exc
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_CODES:
        return _disk_full(f"writing {_written(exc.filename)}" if exc.filename else "writing")
    if type(exc).__module__ not in ("_duckdb", "duckdb"):
        return None
    message = str(exc)
    if any(words in message for words in DISK_FULL_WORDS):
        return _disk_full(_database_step(message))
    if any(words in message for words in DAMAGE_WORDS):
        first = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
        return DamagedStoreError(
            f"the store's database file is damaged ({first}); `ripple doctor` shows what is affected and "
            "`ripple export --salvage --out FILE` saves every row that can still be read"
        )
    return None


def _disk_full(what: str) -> DiskFullError:
    """The one line for a full disk: what was being written, and that running the same command again finishes."""
    return DiskFullError(f"disk full while {what}; nothing was lost; free space and run the same command again")


def _database_step(message: str) -> str:
    """What DuckDB was doing, from its message."""
    lowered = message.lower()
    if "compact" in lowered:  # Store.compact's fresh copy, which forget writes to scrub deleted text
        return "rewriting the database file"
    if "checkpoint" in lowered:
        return "checkpointing the database"
    if "commit" in lowered or ".wal" in lowered:
        return "committing to the database"
    return "writing the database"


def _written(filename: str | bytes | int) -> str:
    """The file being written, named as the user knows it: from the temp file or folder it was being written into
    (`files.replace_atomically`, `replace_folder`) by the name it was to replace."""
    parts = [part for part in str(filename).split("/") if part]
    for at, part in enumerate(parts):
        if _TEMP_PART.match(part):
            return "/".join([_TEMP_PART.sub(r"\1", part), *parts[at + 1 :]])
    return parts[-1] if parts else str(filename)
