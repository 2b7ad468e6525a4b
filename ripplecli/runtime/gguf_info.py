"""GGUF header facts (architecture, context length, chat template, completeness) read without loading weights.

gguf.GGUFReader maps every field, including a 50K-entry tokenizer vocabulary, which takes seconds; `ripple models`
scans many files, so this reads the header sequentially and skips arrays, using the gguf package's type tables.
"""

from __future__ import annotations

import os
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ripplecli.errors import ModelError

MAGIC = b"GGUF"
MAX_COUNT = 1 << 24  # more tensors or keys than this is a corrupt header, not a model
DEFAULT_ALIGNMENT = 32
KEPT_KEYS = ("general.architecture", "general.name", "general.alignment", "tokenizer.chat_template")
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
MEMORY_HEADROOM = 1.2  # weights plus KV cache and compute buffers for a modest context


@dataclass
class GGUFInfo:
    """What `ripple models` shows and what the loader checks before handing a file to llama.cpp."""

    path: str
    size: int
    architecture: str | None
    name: str | None
    context_length: int | None
    chat_template: bool
    tensors: int
    expected_size: int

    @property
    def complete(self) -> bool:
        """False when the file ends before its last tensor's data (an interrupted download)."""
        return self.size >= self.expected_size

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready facts, with completeness spelled out."""
        return {**asdict(self), "complete": self.complete}


class _Header:
    """Sequential little-endian reads over the header, failing as a corrupt file rather than a crash."""

    def __init__(self, handle: BinaryIO, path: Path):
        self.handle = handle
        self.path = path

    def unpack(self, fmt: str) -> Any:
        """One scalar."""
        size = struct.calcsize(fmt)
        data = self.handle.read(size)
        if len(data) < size:
            raise ModelError(f"model {self.path}: truncated GGUF header")
        return struct.unpack(fmt, data)[0]

    def string(self, keep: bool = True) -> str:
        """A length-prefixed UTF-8 string (skipped when not needed)."""
        length = self.unpack("<Q")
        if length > MAX_COUNT * 64:
            raise ModelError(f"model {self.path}: corrupt GGUF header (string of {length} bytes)")
        if not keep:
            self.handle.seek(length, os.SEEK_CUR)
            return ""
        return self.handle.read(length).decode("utf-8", errors="replace")

    def value(self, kind: int, keep: bool) -> Any:
        """A metadata value of GGUF type `kind`; arrays are skipped item by item."""
        if kind in SCALARS:
            return self.unpack(SCALARS[kind])
        if kind == STRING:
            return self.string(keep)
        if kind == ARRAY:
            item_kind, count = self.unpack("<I"), self.unpack("<Q")
            self._check_count(count)
            if item_kind in SCALARS:
                self.handle.seek(struct.calcsize(SCALARS[item_kind]) * count, os.SEEK_CUR)
            else:
                for _ in range(count):
                    self.value(item_kind, keep=False)
            return None
        raise ModelError(f"model {self.path}: corrupt GGUF header (value type {kind})")

    def _check_count(self, count: int) -> None:
        """Guard against reading garbage as a count."""
        if count > MAX_COUNT * 4:
            raise ModelError(f"model {self.path}: corrupt GGUF header (count {count})")


def read_info(path: str | Path) -> GGUFInfo:
    """Header facts of a GGUF file; a missing, foreign or corrupt file is a ModelError naming it."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ModelError(f"model {path}: no such file")
    size = path.stat().st_size
    with path.open("rb") as handle:
        if handle.read(4) != MAGIC:
            raise ModelError(f"model {path}: not a GGUF file")
        header = _Header(handle, path)
        version = header.unpack("<I")
        if version < 2:
            raise ModelError(f"model {path}: GGUF version {version} is too old for llama.cpp")
        tensor_count, kv_count = header.unpack("<Q"), header.unpack("<Q")
        if tensor_count > MAX_COUNT or kv_count > MAX_COUNT:
            raise ModelError(f"model {path}: corrupt GGUF header")
        meta = _metadata(header, kv_count)
        data_end = _tensor_data_end(header, tensor_count)
        alignment = int(meta.get("general.alignment") or DEFAULT_ALIGNMENT)
        data_start = -(-handle.tell() // alignment) * alignment
    arch = meta.get("general.architecture")
    return GGUFInfo(
        path=str(path),
        size=size,
        architecture=arch,
        name=meta.get("general.name"),
        context_length=meta.get(f"{arch}.context_length") if arch else None,
        chat_template=bool(meta.get("tokenizer.chat_template")),
        tensors=tensor_count,
        expected_size=data_start + data_end,
    )


def _metadata(header: _Header, kv_count: int) -> dict[str, Any]:
    """The few keys ripple reads; everything else is skipped."""
    meta: dict[str, Any] = {}
    for _ in range(kv_count):
        key = header.string()
        kind = header.unpack("<I")
        wanted = key in KEPT_KEYS or key.endswith(".context_length")
        value = header.value(kind, keep=wanted)
        if wanted:
            meta[key] = value
    return meta


def _tensor_data_end(header: _Header, tensor_count: int) -> int:
    """Offset (within the data section) where the last tensor's bytes end."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    end = 0
    for _ in range(tensor_count):
        header.string(keep=False)
        dims = [header.unpack("<Q") for _ in range(header.unpack("<I"))]
        kind, offset = header.unpack("<I"), header.unpack("<Q")
        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
        except (ValueError, KeyError):
            raise ModelError(f"model {header.path}: unknown tensor type {kind}") from None
        elements = 1
        for dim in dims:
            elements *= dim
        end = max(end, offset + elements // block * type_size)
    return end


def free_memory() -> int:
    """Bytes of memory available now (MemAvailable on Linux; free pages elsewhere)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62  # unknown: do not refuse


def check_instruct(path: str | Path) -> GGUFInfo:
    """Refuse, with one line naming the file, a model that cannot be used for instructions here."""
    info = read_info(path)
    if not info.complete:
        raise ModelError(
            f"model {info.path}: truncated ({gib(info.size)} of {gib(info.expected_size)}); download it again"
        )
    if not info.chat_template:
        raise ModelError(
            f"model {info.path}: no chat template in its metadata (a base model?); use an instruction-tuned GGUF"
        )
    needed, available = int(info.size * MEMORY_HEADROOM), free_memory()
    if needed > available:
        raise ModelError(f"model {info.path}: needs about {gib(needed)} of memory but only {gib(available)} is free")
    return info


def gib(size: int) -> str:
    """A byte count for people."""
    return f"{size / 2**30:.2f} GiB" if size >= 2**30 else f"{size / 2**20:.0f} MiB"
