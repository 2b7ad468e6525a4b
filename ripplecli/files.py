"""Small file helpers every layer shares: atomic replacement, tolerant JSON sidecars, terminal-safe JSON."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

T = TypeVar("T")


def replace_atomically(target: Path, write: Callable[[Path], T]) -> T:
    """Let `write` fill a private (0600) temp file beside `target`, then move it over `target`.

    A crash leaves the old file or the new one, never half of one, and no temp file survives."""
    with replacing(target) as (temp,):
        return write(temp)


@contextmanager
def replacing(*targets: Path) -> Iterator[list[Path]]:
    """Private (0600) temp files beside each target, for the block to fill; moved over their targets one after the
    other once it ends without error. A failure while any of them is written (a full disk: every write is made
    before any file is replaced) leaves every target as it was, and no temp file survives."""
    temps: list[Path] = []
    try:
        for target in targets:
            handle, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            os.close(handle)
            temps.append(Path(temp_name))
        with _naming(targets[0] if targets else None):
            yield temps
        for temp, target in zip(temps, targets, strict=True):
            os.replace(temp, target)
    finally:
        for temp in temps:
            if temp.exists():
                temp.unlink()


def replace_folder(target: Path, write: Callable[[Path], T]) -> T:
    """Let `write` fill a fresh temp folder beside `target`, then swap it in for `target` (a derived index).

    A crash leaves the old folder or the new one (and a dot-named temp folder that `Store` clears on its next
    writable open), never a folder half written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        with _naming(target):
            result = write(staging)
        if target.exists():  # rename cannot replace a folder: move the old one aside first
            retired = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
            os.rename(target, retired / target.name)
            os.rename(staging, target)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.rename(staging, target)
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def private_file(path: Path, mode: str = "wb", encoding: str | None = None) -> IO[Any]:
    """Open a new file for writing, created owner-only (0600, whatever the umask) rather than chmod-ed afterwards:
    what a writer killed meanwhile leaves holds private conversations too."""
    return open(path, mode, encoding=encoding, opener=_owner_only)


def write_private_text(path: Path, text: str) -> None:
    """Write `text` (UTF-8) into a new owner-only file."""
    with private_file(path, "w", encoding="utf-8") as out:
        out.write(text)


def _owner_only(name: str, flags: int) -> int:
    """open()'s opener creating the file 0600."""
    return os.open(name, flags, 0o600)


@contextmanager
def _naming(target: Path | None) -> Iterator[None]:
    """An OSError from a write to an open stream names no file (a full disk's, say): name the one it was for."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and target is not None:
            raise OSError(exc.errno, exc.strerror, str(target)) from exc
        raise


def mapped_array(path: Path) -> Any:
    """A saved .npy array mapped read-only, as a plain ndarray view (numpy's memmap class costs on every index): a
    one-shot ask reads the few rows it needs, not the file. A zero-length array, which numpy will not map, is read."""
    import numpy as np

    try:
        return np.load(path, mmap_mode="r", allow_pickle=False).view(np.ndarray)
    except ValueError:
        return np.load(path, allow_pickle=False)


def read_json_object(path: Path) -> dict | None:
    """A JSON object from disk, or None when absent, unreadable or not an object (sidecars and memos)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


_C1 = re.compile("[\x7f-\x9f]")


def escape_c1(dumped: str) -> str:
    """JSON text with DEL and the C1 controls as \\u escapes (json.dumps escapes only the C0 ones): printed on a
    terminal, a JSON document must not be able to drive it."""
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


def unusable_because(path: Path, exc: OSError) -> str:
    """Why the file system refused to let ripple make or write `path`, in words that say what to fix."""
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        blocker = next((above for above in (path, *path.parents) if above.exists() and not above.is_dir()), None)
        if blocker is not None:
            return f"{blocker} is a file, not a folder"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied on {exc.filename}" if exc.filename else "permission denied"
    return exc.strerror or str(exc)
