"""Download one model file over HTTP(S): resumable from a `.part` file, sha256-checked as it streams, owner-only.

The only ripple module that opens a network connection, and only when a person runs `ripple models pull`. Plain
urllib: no new dependency, and it is not switched off by the HF_HUB_OFFLINE that ripple sets for its encoders. A
`Range: bytes=N-` request continues a partial file; a server that answers 200 instead of 206 sends the whole file,
which then replaces the partial one. Nothing reaches the final name before its sha256 matches.
"""

from __future__ import annotations

import errno
import hashlib
import http.client
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ripplecli.errors import DownloadError
from ripplecli.files import private_file
from ripplecli.runtime.gguf_info import gib
from ripplecli.version import __version__

HUB_URL = "https://huggingface.co"
HUB_ENV = "RIPPLE_HUB_URL"  # another hub or mirror with the same /{repo}/resolve/main/{file} paths (tests: a local one)
CHUNK = 1 << 20
TIMEOUT = 30.0  # seconds without a byte before the download counts as cut off
NETWORK_ERRORS = (OSError, http.client.HTTPException)  # urllib.error.URLError is an OSError

Progress = Callable[[int, int], None]  # (bytes on disk, bytes in all)


@dataclass
class Download:
    """What one pull fetched: the file in place, its checksum, and how much came over the network this time."""

    path: str
    size: int
    sha256: str
    fetched: int
    resumed_from: int


def hub_url() -> str:
    """The hub's base URL: $RIPPLE_HUB_URL, else Hugging Face."""
    return (os.environ.get(HUB_ENV) or HUB_URL).rstrip("/")


def resolve_url(repo: str, file: str) -> str:
    """The hub's download URL of one file of a repository's main branch."""
    return f"{hub_url()}/{urllib.parse.quote(repo)}/resolve/main/{urllib.parse.quote(file)}"


def partial_path(dest: Path) -> Path:
    """Where the bytes of an unfinished download wait."""
    return dest.with_name(dest.name + ".part")


def private_folder(folder: Path) -> None:
    """Create `folder` and any missing parent owner-only (0700); folders that exist keep their mode."""
    missing = [path for path in (folder, *folder.parents) if not path.exists()]
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))


def download(url: str, dest: Path, size: int, sha256: str, progress: Progress | None = None) -> Download:
    """Fetch `url` into `dest`, continuing `dest.part` if an earlier pull was cut off; the file lands only when its
    size and sha256 match. A cut-off keeps the part for the next pull; a mismatch deletes it."""
    part = partial_path(dest)
    try:
        private_folder(dest.parent)
        have = _usable_part(part, size)
        _check_space(dest.parent, size - have)
        response, start = _open(url, have)
        with response:
            digest = _hash_of(part, start)
            fetched = _stream(response, part, start, size, digest, progress)
    except OSError as exc:  # the local side: a folder that cannot be made, a full disk (network errors are caught)
        raise DownloadError(f"cannot write the model into {dest.parent}: {exc.strerror or exc}") from None
    if start + fetched < size:
        raise DownloadError(
            f"{url}: cut off after {gib(start + fetched)} of {gib(size)}; run the same pull again to resume"
        )
    if digest.hexdigest() != sha256:
        part.unlink(missing_ok=True)
        raise DownloadError(
            f"{url}: sha256 {digest.hexdigest()[:16]}… is not the expected {sha256[:16]}…; deleted, nothing installed"
        )
    os.replace(part, dest)
    return Download(str(dest), size, sha256, fetched, start)


def _usable_part(part: Path, size: int) -> int:
    """Bytes of an earlier pull to continue from (a part as large as the whole file failed its check: restart)."""
    if not part.is_file():
        return 0
    have = part.stat().st_size
    if have >= size:
        part.unlink()
        return 0
    return have


def _check_space(folder: Path, needed: int) -> None:
    """Refuse before the first byte when the disk cannot hold the rest of the file."""
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise DownloadError(f"{folder}: needs {gib(needed)} free for the model, only {gib(free)} is")


def _open(url: str, have: int) -> tuple[http.client.HTTPResponse, int]:
    """The response and the offset its body starts at: `have` when the server honours the range, else 0."""
    headers = {"User-Agent": f"ripple/{__version__}", "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and have:  # the part is not a prefix of what the server has now: start over
            return _open(url, 0)
        raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except NETWORK_ERRORS as exc:
        raise DownloadError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
    if response.status == 200:
        return response, 0
    start = _range_start(response.headers.get("Content-Range", ""))
    if response.status != 206 or start != have:
        response.close()
        raise DownloadError(f"{url}: unexpected answer (HTTP {response.status}, range {start}, asked from {have})")
    return response, start


def _range_start(content_range: str) -> int | None:
    """The first byte of a 206 answer: `bytes 100-199/200` -> 100."""
    unit, _, spec = content_range.partition(" ")
    first = spec.split("-", 1)[0]
    return int(first) if unit == "bytes" and first.isdigit() else None


def _hash_of(part: Path, start: int) -> Any:
    """A sha256 fed with the part's first `start` bytes (what the download continues)."""
    if not start:
        return hashlib.sha256()
    with part.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256")


def _stream(response: BinaryIO, part: Path, start: int, size: int, digest: Any, progress: Progress | None) -> int:
    """Append the body to the part (from scratch when `start` is 0), hashing as it goes; bytes written."""
    handle = private_file(part, "ab" if start else "wb")
    fetched = 0
    with handle:
        os.fchmod(handle.fileno(), 0o600)  # whatever the umask, and a part left by another ripple
        while True:
            try:
                block = response.read(CHUNK)
            except NETWORK_ERRORS:
                break  # cut off: what arrived stays for the next pull
            if not block:
                break
            if start + fetched + len(block) > size:
                handle.close()
                part.unlink(missing_ok=True)
                raise DownloadError(f"{part.name}: the server sent more than the {size} bytes expected; deleted")
            handle.write(block)
            digest.update(block)
            fetched += len(block)
            if progress is not None:
                progress(start + fetched, size)
        handle.flush()
        os.fsync(handle.fileno())
    return fetched
