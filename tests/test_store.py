"""The store: recorded migrations, refusal of newer schemas, private files, the single-writer lock, derived indexes."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest
from chats import CHAT_1, CHAT_2, counts, new_memory, session, write_chat
from typer.testing import CliRunner

from ripplecli.api import Memory
from ripplecli.cli import app
from ripplecli.errors import StoreBusyError, StoreError
from ripplecli.store import schema
from ripplecli.store.db import DB_FILE, LEXICAL_DIR, VECTOR_FILE, Store
from ripplecli.store.lexical import META_FILE


@pytest.fixture
def filled(tmp_path, fake_settings, fake_extractor) -> Path:
    """A store with two sessions ingested through the fake encoder and extractor."""
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2)])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
    return tmp_path / "store"


def test_new_store_records_its_migrations(tmp_path):
    store = Store.open(tmp_path / "store")
    rows = store.con.execute("SELECT version, name, applied FROM schema_migrations ORDER BY version").fetchall()
    store.close()
    assert [r[0] for r in rows] == [v for v, _, _ in schema.MIGRATIONS]
    assert rows[-1][0] == schema.LATEST_VERSION and all(r[1] and r[2] for r in rows)


def test_reopening_applies_nothing_twice(tmp_path):
    Store.open(tmp_path / "store").close()
    store = Store.open(tmp_path / "store")
    assert schema.migrate(store.con) == []
    assert store.count("schema_migrations") == len(schema.MIGRATIONS)
    store.close()


def test_failing_migration_rolls_back_entirely(tmp_path, monkeypatch):
    Store.open(tmp_path / "store").close()

    def broken(con):
        con.execute("CREATE TABLE half_done (x INTEGER)")
        raise RuntimeError("migration step failed")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, (99, "broken", broken)])
    monkeypatch.setattr(schema, "LATEST_VERSION", 99)
    with pytest.raises(RuntimeError, match="migration step failed"):
        Store.open(tmp_path / "store")
    monkeypatch.undo()
    store = Store.open(tmp_path / "store")
    tables = {r[0] for r in store.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert "half_done" not in tables
    assert schema.current_version(store.con) == schema.LATEST_VERSION
    store.close()


def _mark_newer(path: Path) -> None:
    """Pretend a future ripple migrated this store."""
    store = Store.open(path)
    store.con.execute("INSERT INTO schema_migrations VALUES (?, 'from the future', now()::TIMESTAMP)", [500])
    store.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_newer_schema_is_refused(tmp_path, read_only):
    _mark_newer(tmp_path / "store")
    with pytest.raises(StoreError, match=r"schema version 500 is newer than this ripple"):
        Store.open(tmp_path / "store", read_only=read_only)


def test_newer_schema_is_exit_2_on_the_cli(tmp_path):
    _mark_newer(tmp_path / "store")
    for args in (["graph", "stats"], ["ask", "anything"]):
        result = CliRunner().invoke(app, [*args, "--store", str(tmp_path / "store")])
        assert result.exit_code == 2, result.output
        assert "newer" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_store_files_are_private(tmp_path):
    Store.open(tmp_path / "deep" / "store").close()
    folder = tmp_path / "deep" / "store"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / DB_FILE).stat().st_mode) == 0o600


def test_open_without_create_does_not_make_a_folder(tmp_path):
    with pytest.raises(StoreError, match="no ripple store here"):
        Store.open(tmp_path / "missing", create=False)
    assert not (tmp_path / "missing").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="not a folder"):
        Store.open(tmp_path / "file")


def test_second_writer_is_told_who_holds_the_store(held_store):
    path, holder = held_store
    with pytest.raises(StoreBusyError, match=rf"is in use by process {holder.pid}$"):
        Store.open(path)


def test_busy_store_is_exit_3_on_the_cli(held_store, tmp_path):
    path, holder = held_store
    chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1)])
    result = CliRunner().invoke(app, ["ingest", str(chat), "--store", str(path)])
    assert result.exit_code == 3
    assert result.stderr.strip() == f"ripple: error: store {path} is in use by process {holder.pid}"


def _vector_meta(path: Path) -> dict:
    """The sidecar of the saved hnswlib index."""
    return json.loads((path / (VECTOR_FILE + ".meta.json")).read_text())


def test_ingest_saves_the_vector_index_with_a_matching_sidecar(filled):
    meta = _vector_meta(filled)
    with Memory(filled, read_only=True) as memory:
        assert meta["count"] == memory.store.count("vectors") == 7
        assert meta["version"] == memory.store.version("vectors")
    assert not [p.name for p in filled.iterdir() if p.name.endswith(".tmp")]


def _truncate(path: Path) -> None:
    """Damage the index file."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _bump_sidecar(path: Path, key: str) -> None:
    """Make the sidecar disagree with the database."""
    meta_path = path.with_name(path.name + ".meta.json")
    meta = json.loads(meta_path.read_text())
    meta[key] += 5
    meta_path.write_text(json.dumps(meta))


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.unlink(),
        _truncate,
        lambda p: p.with_name(p.name + ".meta.json").unlink(),
        lambda p: _bump_sidecar(p, "count"),
        lambda p: _bump_sidecar(p, "version"),
    ],
    ids=["deleted", "truncated", "no-sidecar", "sidecar-count", "sidecar-version"],
)
def test_damaged_vector_index_is_rebuilt_on_open(filled, damage, caplog):
    damage(filled / VECTOR_FILE)
    with caplog.at_level(logging.WARNING, logger="ripplecli"), Memory(filled) as memory:
        index = memory.store.vector_index()
        assert index.count == 7
        expected = memory.store.version("vectors")
        hits = memory.recall("hiking with Maya in Denver", k=3, mode="dense").evidence
    assert "rebuilding" in caplog.text
    assert hits and "hiking" in hits[0].restatement
    assert _vector_meta(filled)["count"] == 7 and _vector_meta(filled)["version"] == expected


def test_read_only_open_rebuilds_in_memory_without_writing(filled):
    (filled / VECTOR_FILE).unlink()
    with Memory(filled, read_only=True) as memory:
        assert memory.recall("Lena job Monday", k=2, mode="dense").evidence
    assert not (filled / VECTOR_FILE).exists()


@pytest.mark.parametrize("damage", ["version", "deleted"])
def test_stale_lexical_index_is_rebuilt(filled, damage):
    folder = filled / LEXICAL_DIR
    if damage == "deleted":
        for file in sorted(folder.rglob("*"), reverse=True):
            file.unlink() if file.is_file() else file.rmdir()
        folder.rmdir()
    else:
        meta = json.loads((folder / META_FILE).read_text())
        (folder / META_FILE).write_text(json.dumps({**meta, "version": meta["version"] - 1}))
    with Memory(filled) as memory:
        hits = memory.recall("commute Boulder", k=3, mode="lexical").evidence
        version = memory.store.version("memories")
    assert hits and "Boulder" in hits[0].restatement
    assert json.loads((folder / META_FILE).read_text())["version"] == version


def test_lexical_index_follows_a_new_ingest(filled, tmp_path, fake_settings, fake_extractor):
    more = write_chat(tmp_path / "more.json", [session(3, [("Ana", "We adopted a parrot named Kiwi.")])], "other")
    with Memory(filled) as memory:
        memory.ingest(more)
        hits = memory.recall("parrot", k=3, mode="lexical").evidence
        assert counts(memory)["memories"] == 8
    assert hits and "parrot" in hits[0].restatement
    assert os.path.isdir(filled / LEXICAL_DIR)
