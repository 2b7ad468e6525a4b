"""Derived files that are damaged never give different evidence or a crash: seals checked on open, doctor, repair."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from chats import run
from conftest import SAMPLE_CHATS, use_fake_extractor

from ripplecli.api import Memory
from ripplecli.config import Settings
from ripplecli.registry import ENCODERS
from ripplecli.store import seals
from ripplecli.store.db import RECALL_DIR, VECTOR_FILE, Store
from ripplecli.store.doctor import check_lexical_index, check_recall_arrays, check_vector_index
from ripplecli.store.vectors import HnswIndex

AS_OF = datetime(2026, 6, 1)
QUESTION = "Should Alex take Maya to Harbor Grill?"
SEARCH = "dinner at the harbor"

# file of the store -> the doctor check that must flag its damage
DERIVED_FILES = {
    "vectors.hnsw": "vector index",
    "vectors.hnsw.meta.json": "vector index",
    "vectors.hnsw.links.npy": "vector index",
    "vectors.hnsw.links.json": "vector index",
    "lexical/ripple.json": "lexical index",
    "lexical/ids.npy": "lexical index",
    "lexical/bm25s/data.csc.index.npy": "lexical index",
    "lexical/bm25s/indptr.csc.index.npy": "lexical index",
    "lexical/bm25s/vocab.index.json": "lexical index",
    "recall/recall.json": "recall arrays",
    "recall/recall.bin": "recall arrays",
    "recall/ready.json": "snapshot",
}


def damage(path: Path, how: str) -> None:
    """Flip bytes (at the header or the middle) or cut the file, keeping its modification time."""
    info = path.stat()
    data = bytearray(path.read_bytes())
    if how == "empty":
        data = bytearray()
    elif how == "half":
        data = data[: len(data) // 2]
    else:
        at = 10 if how == "flip header" else len(data) // 2
        for i in range(at, min(at + 4, len(data))):
            data[i] ^= 0x55
    path.write_bytes(bytes(data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


@pytest.fixture(scope="module")
def base_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample chats in a store built once with the fake encoder and extractor (each test damages a copy)."""
    path = tmp_path_factory.mktemp("integrity") / "store"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(ENCODERS, "fake", "conftest:FakeEncoder")
        use_fake_extractor(patch)
        memory = Memory(path)
        memory.configure(Settings(encoder_backend="fake", encoder_model="fake"))
        for chat in sorted(SAMPLE_CHATS.glob("*.json")):
            memory.ingest(chat)
        memory.close()
    return path


def evidence(path: Path) -> tuple[str, str]:
    """What a read-only ask and `memories search` return."""
    with Memory(path, read_only=True, create=False) as memory:
        result = memory.recall(QUESTION, k=10, as_of=AS_OF)
        return repr(result.evidence), repr(memory.search_memories(SEARCH, k=10))


@pytest.fixture(scope="module")
def expected(base_store: Path) -> tuple[str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(ENCODERS, "fake", "conftest:FakeEncoder")
        return evidence(base_store)


@pytest.fixture
def copy(base_store: Path, tmp_path: Path, fake_settings) -> Path:
    """A fresh copy of the base store (fake encoder registered)."""
    shutil.copytree(base_store, tmp_path / "copy")
    return tmp_path / "copy"


def doctor(path: Path, *extra: str) -> tuple[int, dict[str, tuple[str, str]]]:
    """Exit code and (status, detail) per check."""
    result = run("doctor", "--store", str(path), "--json", *extra)
    report = json.loads(result.stdout)
    return result.exit_code, {c["check"]: (c["status"], c["detail"]) for c in report["checks"]}


@pytest.mark.parametrize("how", ["flip header", "flip middle", "half", "empty"])
@pytest.mark.parametrize("name", DERIVED_FILES)
def test_a_damaged_derived_file_gives_the_same_evidence_is_flagged_and_repaired(copy, expected, name, how, caplog):
    damage(copy / name, how)
    with caplog.at_level(logging.WARNING, logger="ripplecli"):
        assert evidence(copy) == expected
    assert Path(name).name in caplog.text and "damaged" in caplog.text  # the command says so, on stderr
    code, checks = doctor(copy)
    assert code == 1 and checks[DERIVED_FILES[name]][0] == "problem", checks
    assert Path(name).name in checks[DERIVED_FILES[name]][1]
    code, checks = doctor(copy, "--repair")
    assert code == 0 and {status for status, _ in checks.values()} == {"ok"}, checks
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ripplecli"):
        assert evidence(copy) == expected
    assert "damaged" not in caplog.text
    assert doctor(copy)[0] == 0


@pytest.mark.parametrize("name", ["vectors.hnsw.links.npy", "lexical/ids.npy", "recall/recall.bin"])
def test_an_ask_on_an_emptied_file_answers_through_the_cli(copy, name):
    before = run("ask", QUESTION, "--no-answer", "--json", "--store", str(copy))
    (copy / name).write_bytes(b"")
    after = run("ask", QUESTION, "--no-answer", "--json", "--store", str(copy))
    assert after.exit_code == 0, after.output
    ids = [[e["memory_id"] for e in json.loads(done.stdout)["evidence"]] for done in (before, after)]
    assert ids[0] == ids[1]


def test_a_writer_rebuilds_a_damaged_file_it_did_not_otherwise_touch(copy, caplog):
    damage(copy / "recall" / "recall.bin", "flip middle")
    damage(copy / VECTOR_FILE, "flip middle")
    with caplog.at_level(logging.WARNING, logger="ripplecli"):
        Store.open(copy, create=False).close()
    assert "damaged" in caplog.text
    code, checks = doctor(copy)
    assert code == 0 and {status for status, _ in checks.values()} == {"ok"}, checks


def _as_an_older_ripple_wrote_it(path: Path, drop: tuple[str, ...], **changes) -> None:
    """A sidecar without its seal (and the checksums it records), as ripple wrote them before issue 31."""
    document, _ = seals.read_sealed(path)
    path.write_text(json.dumps({**{k: v for k, v in document.items() if k not in drop}, **changes}))


def test_a_store_an_older_ripple_saved_is_read_as_before_and_sealed_by_the_next_writer(copy, expected, caplog):
    _as_an_older_ripple_wrote_it(copy / "vectors.hnsw.meta.json", ("file",))
    _as_an_older_ripple_wrote_it(copy / "vectors.hnsw.links.json", ("links",))
    _as_an_older_ripple_wrote_it(copy / "lexical" / "ripple.json", ("files",))
    _as_an_older_ripple_wrote_it(copy / "recall" / "recall.json", ("files",), format=1)
    _as_an_older_ripple_wrote_it(copy / "recall" / "ready.json", (), format=1)
    with caplog.at_level(logging.WARNING, logger="ripplecli"):
        assert evidence(copy) == expected
    assert "damaged" not in caplog.text
    code, checks = doctor(copy)
    stale = {name for name, (status, _) in checks.items() if status == "stale"}
    assert code == 0 and stale == {"vector index", "lexical index", "recall arrays", "snapshot"}, checks
    assert "older ripple" in checks["vector index"][1] and "older ripple" in checks["lexical index"][1]
    Store.open(copy, create=False).close()
    code, checks = doctor(copy)
    assert code == 0 and {status for status, _ in checks.values()} == {"ok"}, checks
    assert seals.read_sealed(copy / "vectors.hnsw.links.json")[1] and evidence(copy) == expected


def test_a_whole_check_finds_a_flip_the_open_budget_skips(tmp_path, monkeypatch):
    monkeypatch.setattr(seals, "CHUNK", 16)
    monkeypatch.setattr(seals, "OPEN_CHECK_BYTES", 64)
    path = tmp_path / "big.bin"
    path.write_bytes(bytes(range(256)) * 4)
    seal = seals.seal_file(path)
    damage(path, "flip middle")  # byte 512: chunk 32 of 64, which the budget's four evenly spaced chunks skip
    seals.check_file(path, seal)
    with pytest.raises(seals.DamagedFile, match="checksum mismatch at byte 512"):
        seals.check_file(path, seal, whole=True)


def test_a_sidecar_edited_behind_ripples_back_fails_its_own_seal(tmp_path):
    path = tmp_path / "meta.json"
    path.write_text(seals.sealed_json({"count": 3, "version": 2}))
    assert seals.read_sealed(path) == ({"count": 3, "version": 2}, True)
    path.write_text(path.read_text().replace('"count": 3', '"count": 4'))
    with pytest.raises(seals.DamagedFile, match="checksum mismatch"):
        seals.read_sealed(path)
    path.write_text(json.dumps({"count": 3}))  # written by an older ripple: no seal
    assert seals.read_sealed(path) == ({"count": 3}, False)


# --- doctor's detail lines ------------------------------------------------------------------------------------
SELF_CONTRADICTION = re.compile(r"\bversion (\d+) < store \1\b|\b(\d+) vectors? in hnswlib, \2 in the store\b")


def test_doctor_details_never_contradict_themselves(copy):
    store = Store.open(copy, create=False)
    try:
        ids, vectors = store.all_vectors()
        other = HnswIndex(copy / VECTOR_FILE, store.encoder_dim)
        other.rebuild([i + 1000 for i in ids], vectors)  # as many vectors, other ids
        other.save(store.version("vectors"))
        detail = check_vector_index(store).detail
        assert not SELF_CONTRADICTION.search(detail) and "ids" in detail, detail
        (copy / RECALL_DIR / "recall.bin").write_bytes(b"")
        (copy / "lexical" / "ids.npy").write_bytes(b"")
        for check in (check_recall_arrays, check_lexical_index):
            found = check(store)
            assert found.status == "problem" and not SELF_CONTRADICTION.search(found.detail), found
    finally:
        store.closed = True  # nothing to heal: the test damaged the files on purpose
        store.con.close()


def test_the_vector_index_check_reads_every_chunk(copy, monkeypatch):
    monkeypatch.setattr(seals, "CHUNK", 4096)
    monkeypatch.setattr(seals, "OPEN_CHECK_BYTES", 3 * 4096)
    store = Store.open(copy, create=False)
    store.rebuild_vector_index()  # sealed in 4 KiB chunks
    store.close()
    data = np.fromfile(copy / VECTOR_FILE, dtype=np.uint8)
    assert len(data) > 10 * 4096
    damage(copy / VECTOR_FILE, "flip middle")
    code, checks = doctor(copy)
    assert code == 1 and checks["vector index"][0] == "problem" and "checksum mismatch" in checks["vector index"][1]


def test_checking_the_snapshot_s_seals_imports_no_numpy(copy):
    """A command that shows one memory reads the snapshot and needs no numpy: checking seals must not load it."""
    Store.open(copy, create=False).close()  # the copy's own snapshot (a snapshot names the file by inode)
    code = (
        "import sys\nfrom ripplecli.store.db import Store\n"
        f"store = Store.open({str(copy)!r}, create=False, read_only=True)\n"
        "print(store.snapshot is not None, 'numpy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]
