"""Where a store may be written, the modes ripple sets, and one line for a folder it cannot use (issue 31)."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from chats import CHAT_1, CHAT_2, new_memory, one_error_line, run, session, write_chat

from ripplecli.errors import ModelError, StoreError
from ripplecli.store.db import Store
from ripplecli.store.layout import DB_FILE, LEXICAL_DIR, RECALL_DIR, RECALL_STAMP

REPO = Path(__file__).resolve().parent.parent
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(autouse=True)
def usual_umask():
    """The usual default umask: a file created without care would be world-readable."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def fake_defaults(monkeypatch, fake_settings, fake_extractor):
    """A store the CLI creates is built with the fake encoder and extractor (no model loads if one is made)."""
    monkeypatch.setattr("ripplecli.api.settings_of", lambda recorded: fake_settings)


def modes(folder: Path) -> dict[str, int]:
    """Permission bits of the folder and everything under it, by relative path."""
    found = {".": stat.S_IMODE(folder.stat().st_mode)}
    for path in folder.rglob("*"):
        found[str(path.relative_to(folder))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def project(folder: Path) -> Path:
    """A project folder: an executable script, sources, a git repository."""
    for name, mode, text in (
        ("bin/run.sh", 0o755, "#!/bin/sh\necho hi\n"),
        ("src/main.py", 0o644, "print('hi')\n"),
        (".git/HEAD", 0o644, "ref: refs/heads/main\n"),
        ("README.md", 0o644, "# proj\n"),
    ):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(mode)
    for sub in (folder, folder / "bin", folder / "src", folder / ".git"):
        sub.chmod(0o755)
    return folder


def chat(tmp_path: Path) -> Path:
    """A small chat file outside every store folder."""
    return write_chat(tmp_path / "chat.json", [session(1, CHAT_1)])


# --- where a new store may go ------------------------------------------------------------------
def test_ingest_into_a_project_folder_is_refused_and_leaves_it_as_it_was(tmp_path, fake_defaults):
    proj = project(tmp_path / "proj")
    before = modes(proj)
    result = run("ingest", str(chat(tmp_path)), "--store", str(proj))
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "holds other files (.git/, README.md, bin/, …)" in line and f"e.g. {proj / 'ripple'}" in line
    assert modes(proj) == before  # nothing written, no mode changed
    assert (proj / "bin" / "run.sh").stat().st_mode & stat.S_IXUSR


def test_the_folder_a_refusal_suggests_takes_the_store(tmp_path, fake_defaults):
    proj = project(tmp_path / "proj")
    before = modes(proj)
    result = run("ingest", str(chat(tmp_path)), "--store", str(proj / "ripple"))
    assert result.exit_code == 0, result.output
    assert {k: v for k, v in modes(proj).items() if not k.startswith("ripple")} == before


def test_the_parent_of_a_store_is_refused_naming_the_store_inside(tmp_path, fake_defaults):
    parent = tmp_path / "parent"
    assert run("ingest", str(chat(tmp_path)), "--store", str(parent / "ripple")).exit_code == 0
    before = modes(parent)
    written = run("ingest", str(chat(tmp_path)), "--store", str(parent))
    assert written.exit_code == 2
    assert f"{parent / 'ripple'} holds one; give that folder" in one_error_line(written)
    asked = run("ask", "hiking", "--store", str(parent))
    assert asked.exit_code == 2
    assert f"no ripple store here, but {parent / 'ripple'} holds one" in one_error_line(asked)
    assert modes(parent) == before and not (parent / DB_FILE).exists()


def test_a_store_inside_another_stores_folder_is_refused(tmp_path):
    Store.open(tmp_path / "store").close()
    with pytest.raises(StoreError, match="inside the ripple store"):
        Store.open(tmp_path / "store" / "nested")
    assert not (tmp_path / "store" / "nested").exists()


@pytest.mark.parametrize("entries", [(), (".DS_Store",), (".DS_Store", "Thumbs.db"), (".ripple.duckdb.4242.tmp",)])
def test_a_new_store_goes_into_an_empty_folder(tmp_path, entries):
    """Empty: nothing but a desktop's marker files, or the temp database of a first ingest that was killed."""
    folder = tmp_path / "empty"
    folder.mkdir()
    for name in entries:
        (folder / name).write_text("x")
    Store.open(folder).close()
    assert (folder / DB_FILE).is_file()
    assert ".DS_Store" not in entries or (folder / ".DS_Store").stat().st_mode & 0o044  # a marker keeps its mode


@pytest.mark.parametrize("name", [".env", ".git", "notes.txt"])
def test_any_other_entry_makes_a_folder_someone_elses(tmp_path, name):
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / name).write_text("x")
    with pytest.raises(StoreError, match=f"holds other files \\({name}\\)"):
        Store.open(folder)
    assert sorted(p.name for p in folder.iterdir()) == [name]


def test_the_data_home_follows_the_same_rule(tmp_path, monkeypatch, fake_defaults):
    home = project(tmp_path / "home")
    monkeypatch.setenv("RIPPLE_HOME", str(home))
    result = run("ingest", str(chat(tmp_path)))
    assert result.exit_code == 2 and "holds other files" in one_error_line(result)
    assert not (home / DB_FILE).exists()


# --- a writer touches only ripple's files ----------------------------------------------------------
def test_a_store_an_older_ripple_made_among_other_files_keeps_working_and_leaves_them_alone(
    tmp_path, fake_settings, fake_extractor
):
    store = tmp_path / "store"
    with new_memory(store, fake_settings) as memory:
        memory.ingest(chat(tmp_path))
    project(store)  # what an older ripple allowed: the store made in a project folder
    (store / ".draft.tmp").write_text("the user's own temp file")  # dot-named like a leftover, but not ripple's
    (store / ".draft.tmp").chmod(0o644)
    store.chmod(0o700)
    own = ("ripple.duckdb", "vectors.hnsw", "lexical", "recall")
    neighbours = {k: v for k, v in modes(store).items() if not k.startswith(own)}
    more = write_chat(tmp_path / "more.json", [session(2, CHAT_2)])
    assert run("ingest", str(more), "--store", str(store)).exit_code == 0
    assert run("doctor", "--repair", "--store", str(store)).exit_code == 0
    assert run("forget", "m1", "--yes", "--store", str(store)).exit_code == 0
    after = modes(store)
    assert {k: after.get(k) for k in neighbours} == neighbours
    ripples = {k: v for k, v in after.items() if k not in neighbours}
    assert ripples and all(v == (0o700 if (store / k).is_dir() else 0o600) for k, v in ripples.items()), ripples


def test_a_killed_writers_derived_files_are_private_before_its_close(tmp_path, fake_settings, fake_extractor):
    """A writer killed after saving an index, before its close tidies up, leaves files no one else can read."""
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat(tmp_path))
        store = memory.store
        store.save_recall_arrays()
        store.refresh_lexical_index()
        written = {
            **{f"{RECALL_DIR}/{k}": v for k, v in modes(store.path / RECALL_DIR).items()},
            **{f"{LEXICAL_DIR}/{k}": v for k, v in modes(store.path / LEXICAL_DIR).items()},
        }
    assert {f"{RECALL_DIR}/recall.bin", f"{RECALL_DIR}/{RECALL_STAMP}", f"{LEXICAL_DIR}/ids.npy"} <= set(written)
    wrong = {k: oct(v) for k, v in written.items() if v != (0o700 if k.endswith(("/.", "bm25s")) else 0o600)}
    assert not wrong, wrong


# --- one line for a folder ripple cannot use -------------------------------------------------------
def test_ripple_home_under_a_file_is_one_line_for_every_command(tmp_path, monkeypatch, fake_defaults):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("RIPPLE_HOME", str(tmp_path / "file" / "home"))
    export = tmp_path / "export.jsonl"
    export.write_text('{"kind": "header"}\n')
    for command in (
        ["ingest", str(chat(tmp_path))],
        ["import", str(export)],
        ["mcp"],
        ["ask", "hiking"],
        ["doctor"],
        ["doctor", "--repair"],
        ["export"],
    ):
        result = run(*command)
        assert result.exit_code == 2, (command, result.output)
        line = one_error_line(result)
        assert str(tmp_path / "file" / "home") in line, command
    for command in (["ingest", str(chat(tmp_path))], ["mcp"]):
        assert f"{tmp_path / 'file'} is a file, not a folder" in one_error_line(run(*command))


def test_a_store_path_under_a_file_is_one_line(tmp_path, fake_defaults):
    (tmp_path / "file").write_text("not a folder")
    result = run("ingest", str(chat(tmp_path)), "--store", str(tmp_path / "file" / "store"))
    assert result.exit_code == 2
    assert "is a file, not a folder" in one_error_line(result)


def refuse_writes_under(folder: Path, monkeypatch) -> None:
    """Make `folder` behave as if on a read-only disk (root ignores modes, so a chmod would not do): creating,
    chmod-ing or asking for write access under it fails with EROFS."""
    inside = str(folder)

    def under(path) -> bool:
        return os.fspath(path).startswith(inside)

    def erofs(path):
        return OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

    real_open, real_mkdir, real_chmod, real_access = os.open, os.mkdir, os.chmod, os.access

    def open_(path, flags, *args, **kwargs):
        if flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR) and under(path):
            raise erofs(path)
        return real_open(path, flags, *args, **kwargs)

    def mkdir(path, *args, **kwargs):
        if under(path):
            raise erofs(path)
        return real_mkdir(path, *args, **kwargs)

    def chmod(path, *args, **kwargs):
        if under(path):
            raise erofs(path)
        return real_chmod(path, *args, **kwargs)

    def access(path, mode, *args, **kwargs):
        return False if mode & os.W_OK and under(path) else real_access(path, mode, *args, **kwargs)

    for name, patched in (("open", open_), ("mkdir", mkdir), ("chmod", chmod), ("access", access)):
        monkeypatch.setattr(os, name, patched)


@pytest.mark.parametrize("existing", [False, True])
def test_a_new_store_on_a_read_only_disk_is_one_line(tmp_path, monkeypatch, fake_defaults, existing):
    disk = tmp_path / "disk"
    disk.mkdir()
    if existing:
        (disk / "store").mkdir()
    source = chat(tmp_path)
    refuse_writes_under(disk, monkeypatch)
    result = run("ingest", str(source), "--store", str(disk / "store"))
    assert result.exit_code == 2
    assert "the file system is read-only" in one_error_line(result)
    assert sorted(p.name for p in disk.rglob("*")) == (["store"] if existing else [])


def test_an_existing_store_on_a_read_only_disk_is_read_but_not_written(tmp_path, monkeypatch, store):
    refuse_writes_under(store, monkeypatch)
    before = modes(store)
    written = run("ingest", str(write_chat(tmp_path / "more.json", [session(3, CHAT_2)])), "--store", str(store))
    assert written.exit_code == 2
    assert "cannot write to it" in one_error_line(written)
    repaired = run("doctor", "--repair", "--store", str(store))
    assert repaired.exit_code == 2 and "cannot write to it" in one_error_line(repaired)
    assert run("doctor", "--store", str(store)).exit_code == 0
    assert modes(store) == before


def test_export_to_a_read_only_disk_is_one_line(tmp_path, monkeypatch, store):
    disk = tmp_path / "disk"
    disk.mkdir()
    refuse_writes_under(disk, monkeypatch)
    result = run("export", "--out", str(disk / "out.jsonl"), "--store", str(store))
    assert result.exit_code == 2
    assert "--out" in one_error_line(result) and "the file system is read-only" in one_error_line(result)


@pytest.mark.skipif(AS_ROOT, reason="root ignores modes; the read-only cases above stand in")
def test_a_folder_without_write_permission_is_one_line(tmp_path, fake_defaults):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        result = run("ingest", str(chat(tmp_path)), "--store", str(locked / "store"))
        assert result.exit_code == 2 and "permission denied" in one_error_line(result)
    finally:
        locked.chmod(0o700)


REAL_READ_ONLY = """
set -e
mount -t tmpfs -o ro,size=1m tmpfs "$1/empty"
mount --bind "$1/store" "$1/store"
mount -o remount,ro,bind "$1/store"
set +e
logs="$1/logs"
shift
n=0
for command in "$@"; do
  n=$((n + 1))
  sh -c "$command" > "$logs/$n.log" 2>&1
  echo "exit $?"
done
"""


def test_a_real_read_only_file_system(tmp_path, store):
    """A read-only tmpfs and a read-only bind of a store, in a mount namespace of their own (skipped where the
    system allows none)."""
    unshare = shutil.which("unshare")
    if unshare is None or sys.platform != "linux":
        pytest.skip("no unshare(1): cannot mount a read-only file system here")
    probe = subprocess.run([unshare, "--mount", "--map-root-user", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace for this user: {probe.stderr.decode().strip()}")
    (tmp_path / "empty").mkdir()
    (tmp_path / "logs").mkdir()
    cli = f"{sys.executable} -m ripplecli.cli"
    source = write_chat(tmp_path / "more.json", [session(3, CHAT_2)])
    commands = [  # a new store in a new folder, in an empty one, then an existing store written and read
        f"{cli} ingest {source} --store {tmp_path / 'empty' / 'store'}",
        f"{cli} ingest {source} --store {tmp_path / 'empty'}",
        f"{cli} ingest {source} --store {store}",
        f"{cli} doctor --store {store}",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "RIPPLE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [unshare, "--mount", "--map-root-user", "sh", "-c", REAL_READ_ONLY, "sh", str(tmp_path), *commands],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if "mount:" in done.stderr:
        pytest.skip(f"cannot mount here: {done.stderr.strip()}")
    logs = [(tmp_path / "logs" / f"{n}.log").read_text() for n in range(1, len(commands) + 1)]
    assert done.stdout.splitlines() == ["exit 2", "exit 2", "exit 2", "exit 0"], (done.stderr, logs)
    for log, expected in zip(logs, ["cannot use it", "cannot use it", "cannot write to it"], strict=False):
        assert log.startswith("ripple: error: store ") and len(log.splitlines()) == 1, log
        assert f"{expected}: the file system is read-only" in log, log


# --- config and cache -------------------------------------------------------------------------------
def test_config_folders_ripple_makes_are_0700_and_the_file_0600(tmp_path, monkeypatch):
    path = tmp_path / "conf" / "ripple" / "config.json"
    monkeypatch.setenv("RIPPLE_CONFIG", str(path))
    assert run("config", "set", "me", "Ana").exit_code == 0
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_config_under_a_file_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("RIPPLE_CONFIG", str(tmp_path / "file" / "config.json"))
    result = run("config", "set", "me", "Ana")
    assert result.exit_code == 2
    assert "is a file, not a folder; set RIPPLE_CONFIG" in one_error_line(result)
    assert run("config", "show").exit_code == 0  # nothing can be set there, so nothing is


def test_a_config_on_a_read_only_disk_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("RIPPLE_CONFIG", str(tmp_path / "disk" / "config.json"))
    refuse_writes_under(tmp_path / "disk", monkeypatch)
    result = run("config", "set", "me", "Ana")
    assert result.exit_code == 2 and "the file system is read-only" in one_error_line(result)


def test_an_encoder_cache_under_a_file_is_one_line(tmp_path, monkeypatch):
    from ripplecli.runtime.encoders import model_dir
    from ripplecli.runtime.onnx_encoder import ensure_exported

    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("RIPPLE_CACHE", str(tmp_path / "file" / "cache"))
    expected = r"encoder cache .*: cannot write it: .* is a file, not a folder; set RIPPLE_CACHE"
    with pytest.raises(ModelError, match=expected):
        ensure_exported(model_dir("all-MiniLM-L6-v2"))
