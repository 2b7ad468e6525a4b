"""The files of a zip or export folder, listed with their sizes before any is read: a zip's members are unpacked
from the archive one at a time (never the whole zip in memory), a zip inside a folder is read as part of it, and
the sizes a zip's directory declares are checked against MAX_BUNDLE_BYTES before anything is unpacked."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from ripplecli.errors import InputError
from ripplecli.formats.detect import HELP
from ripplecli.formats.stream import UNPACK_ERRORS, Source, unpack_error
from ripplecli.formats.text import TEXT_SUFFIXES

READABLE_SUFFIXES = TEXT_SUFFIXES | {".json"}
MAX_BUNDLE_BYTES = 2 << 30  # chat files in one zip or folder; more is a mistake (or a zip bomb)


@dataclass(frozen=True)
class Member:
    """One file of a zip or folder: the format it was read as, or (format None) why it was passed over."""

    path: str
    format: str | None = None
    passed_over: str = ""


@dataclass(frozen=True)
class Entry:
    """A chat file of a zip or folder, not read yet: its path in it ("export.zip/conversations.json" for a zip in a
    folder), its size (a zip's as its directory declares it), where its bytes are, and when it was changed."""

    path: str
    size: int
    source: Source
    modified: datetime | None

    def read(self, container: str) -> bytes:
        """The whole file (a small one, or one that cannot be streamed)."""
        return self.source.read_bytes(member_name(container, self.path))

    def head(self, container: str, size: int = 4096) -> bytes:
        """The file's first bytes, to tell JSON from text without reading it."""
        return self.source.read_head(member_name(container, self.path), size)


def read_entries(entries: list[Entry], container: str) -> dict[str, tuple[bytes, object]]:
    """Every entry's bytes and time, each zip opened once (a Slack export's zip holds thousands of small files)."""
    found: dict[str, tuple[bytes, object]] = {}
    archives: dict[Path, zipfile.ZipFile] = {}
    try:
        for entry in entries:
            path, member = entry.source.path, entry.source.member
            if not member:
                found[entry.path] = (entry.read(container), entry.modified)
                continue
            try:
                archive = archives.get(path) or archives.setdefault(path, zipfile.ZipFile(path))
                found[entry.path] = (archive.read(member), entry.modified)
            except UNPACK_ERRORS as err:
                raise unpack_error(member_name(container, entry.path), err) from None
    finally:
        for archive in archives.values():
            archive.close()
    return found


def member_name(container: str, path: str) -> str:
    """How a file inside a zip or folder is named in messages: "export.zip: conversations.json"."""
    return f"{container}: {path}"


def bundle_entries(path: Path, name: str, is_folder: bool, passed: list[Member]) -> list[Entry]:
    """The chat files of a folder or zip, their total size checked; the others go to `passed`."""
    entries = folder_entries(path, name, passed) if is_folder else zip_entries(path, name, "", passed)
    if sum(entry.size for entry in entries) > MAX_BUNDLE_BYTES:
        raise InputError(f"{name}: holds more than {MAX_BUNDLE_BYTES >> 20:,} MB of chat files")
    return entries


def zip_entries(path: Path, name: str, prefix: str, passed: list[Member]) -> list[Entry]:
    """The readable members of the zip at `path` (their paths after `prefix`), from its directory alone."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = [info for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, ValueError, EOFError, OSError) as err:
        raise InputError(f"{name}: is not a readable zip ({err})") from None
    entries = []
    for info in infos:
        if not is_chat_member(info.filename):
            passed.append(passed_over(prefix + info.filename))
            continue
        entries.append(Entry(prefix + info.filename, info.file_size, Source(path, info.filename), _zip_time(info)))
    return entries


def folder_entries(folder: Path, name: str, passed: list[Member]) -> list[Entry]:
    """The readable files under an export folder, and the chat files of each zip in it."""
    from ripplecli.formats.days import from_epoch

    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if not any(is_read_file(p.relative_to(folder).as_posix()) for p in files):
        raise InputError(f"{name}: is a directory without chat files (.json, .txt, .md, or a .zip of them); {HELP}")
    entries = []
    for path in files:
        relative = path.relative_to(folder).as_posix()
        if is_read_file(relative) and not is_chat_member(relative):  # a zip in the folder (an export as downloaded)
            entries += zip_entries(path, member_name(name, relative), relative + "/", passed)
        elif is_chat_member(relative):
            entries.append(Entry(relative, path.stat().st_size, Source(path), from_epoch(int(path.stat().st_mtime))))
        else:
            passed.append(passed_over(relative))
    return entries


def is_chat_member(relative: str) -> bool:
    """Whether a file in a zip or folder is one ripple reads: a chat suffix, and no hidden or macOS-metadata part."""
    return PurePosixPath(relative).suffix.lower() in READABLE_SUFFIXES and not _hidden(relative)


def is_read_file(relative: str) -> bool:
    """Whether a file of an export folder is read: a chat file, or a zip of them."""
    return is_chat_member(relative) or (PurePosixPath(relative).suffix.lower() == ".zip" and not _hidden(relative))


def passed_over(relative: str) -> Member:
    """A file of a zip or folder that is not read at all: hidden (or macOS metadata), or not .json/.txt/.md."""
    return Member(relative, None, "hidden" if _hidden(relative) else "not .json, .txt or .md")


def _hidden(relative: str) -> bool:
    """A hidden file or folder on the path, or macOS metadata."""
    return any(part.startswith((".", "__MACOSX")) for part in PurePosixPath(relative).parts)


def _zip_time(info: zipfile.ZipInfo) -> datetime | None:
    """A member's modification time as the zip records it (naive, as a folder's files get it)."""
    try:
        return datetime(*info.date_time)
    except ValueError:
        return None
