"""Nothing leaves the machine and nothing is written outside ripple's folders, watched by strace through the real
encoder and spaCy: an MCP session that lives past onnxruntime's telemetry timers, and an ingest.

Why strace: onnxruntime's telemetry is C++ (a thread that resolves mobile.events.data.microsoft.com from ~10 s after
the library loads, and a SQLite queue under ~/.cache/Microsoft). A patched socket module or Python's audit hooks
(`sys.addaudithook`) see only Python's own calls; strace sees every system call of the process, its threads and its
children. CI runs as root and scripts/setup.sh installs strace there when it is missing; elsewhere the test is
skipped when strace cannot run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SAMPLE_CHATS
from mcp_raw import RawClient

pytestmark = pytest.mark.slow

SESSION_SECONDS = 30  # onnxruntime 1.32 looked the host up at +10, +14, +19 and +28 s after it loaded
COPIES = 3  # the sample chats ingested this many times over (new conversation ids): an ingest of ~560 turns
WRITES = "open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,truncate"
NETWORK = "socket,connect,bind,sendto,sendmsg,sendmmsg"
PSEUDO = ("/dev/", "/proc/", "/sys/")  # no storage: /dev/null, a thread's name in /proc
WRITE_FLAGS = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND")
QUOTED = re.compile(r'(?:(\d+)<([^>]*)>, )?"((?:[^"\\]|\\.)*)"')  # an optional dirfd shown by -y, then a path
RESOLVER = ("/etc/resolv.conf", "/etc/hosts", "/etc/gai.conf")


def strace_works() -> bool:
    """strace is installed and may trace here (a container can forbid ptrace)."""
    if shutil.which("strace") is None:
        return False
    done = subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=openat", "true"], capture_output=True)
    return done.returncode == 0


needs_strace = pytest.mark.skipif(not strace_works(), reason="strace is not installed or may not trace here")


def traced(command: list[str], trace_dir: Path) -> list[str]:
    """`command` under strace: the traced calls of every process and thread, one file each (no split lines)."""
    trace_dir.mkdir()
    calls, output = f"trace={WRITES},{NETWORK}", str(trace_dir / "t")
    return ["strace", "-f", "-ff", "-qq", "-y", "--seccomp-bpf", "-e", calls, "-o", output, "--", *command]


def trace_lines(trace_dir: Path) -> list[str]:
    """Every traced call, from every process and thread."""
    return [line for path in sorted(trace_dir.iterdir()) for line in path.read_text(errors="replace").splitlines()]


def network_use(lines: list[str]) -> list[str]:
    """Calls that reach for the network: an IP (or any non-local) socket, any connect or bind, a message sent to
    an address, the resolver's files. asyncio's own wake-up pair is a socketpair(), which is not traced."""
    return [line for line in lines if _reaches_out(line.split("(", 1)[0], line)]


def _reaches_out(call: str, line: str) -> bool:
    """Whether one traced call reaches for the network (see network_use)."""
    return (
        (call == "socket" and not line.startswith("socket(AF_UNIX"))
        or call in ("connect", "bind")
        or (call in ("sendto", "sendmsg", "sendmmsg") and "sa_family=" in line)
        or any(f'"{path}"' in line for path in RESOLVER)
    )


def written_paths(lines: list[str], cwd: Path) -> list[str]:
    """Every path a call created, wrote, renamed to or linked to (attempts too: a failed write is still a try)."""
    written = []
    for line in lines:
        call = line.split("(", 1)[0]
        if call in ("open", "openat") and not WRITE_FLAGS.search(line):
            continue
        if call not in WRITES.split(","):
            continue
        paths = [_absolute(match, cwd) for match in QUOTED.finditer(line.split(") = ")[0])]
        if call.startswith(("rename", "link", "symlink")):
            paths = paths[-1:]  # the new name; symlink's first argument is only what the link says
        written += paths[:1]
    return written


def _absolute(match: re.Match[str], cwd: Path) -> str:
    """A traced path made absolute: against the directory descriptor -y showed, else the working directory."""
    directory, path = match.group(2), match.group(3)
    return os.path.normpath(os.path.join(directory or str(cwd), path))


def outside(paths: list[str], allowed: list[Path]) -> list[str]:
    """The paths under none of the allowed folders (nor a pseudo-filesystem)."""
    roots = [str(folder) + os.sep for folder in allowed]
    return sorted({p for p in paths if not p.startswith(PSEUDO) and not any((p + os.sep).startswith(r) for r in roots)})


@pytest.fixture(scope="module")
def exported(shared_cache: Path) -> Path:
    """The encoder exported to ONNX beforehand, untraced: the one-time export runs torch, which looks up the user's
    name (getpass, through glibc's nscd socket) and probes the temp folder; the traced runs are the everyday ones."""
    script = "from ripplecli.runtime.onnx_encoder import OnnxEncoder; OnnxEncoder('all-MiniLM-L6-v2')"
    env = {**os.environ, "RIPPLE_CACHE": str(shared_cache)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return shared_cache


@pytest.fixture
def clean_home(tmp_path: Path, exported: Path) -> tuple[dict[str, str], list[Path]]:
    """An environment with a fresh home (so a library's dot-folder there is seen), and the folders ripple documents:
    the store folders under tmp_path/stores, $RIPPLE_CACHE and ripple's config folder."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ORT_", "RIPPLE_CONFIG"))}
    env.update(HOME=str(home), RIPPLE_CACHE=str(exported), PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    return env, [tmp_path / "stores", exported, home / ".config" / "ripple"]


def ripple(*args: str) -> list[str]:
    """The ripple command, run from this interpreter."""
    return [sys.executable, "-m", "ripplecli.cli", *args]


def assert_private(trace_dir: Path, cwd: Path, allowed: list[Path], store: Path, home: Path) -> None:
    """No network use and no file outside the allowed folders; onnxruntime's queue was never made."""
    lines = trace_lines(trace_dir)
    written = written_paths(lines, cwd)
    assert any(path.startswith(f"{store}{os.sep}") for path in written), "the trace shows no write into the store"
    reached = network_use(lines)
    assert not reached, "\n".join(["the network was reached for:", *reached[:10]])
    strays = outside(written, allowed)
    assert not strays, "\n".join(["files written outside ripple's folders:", *strays[:20]])
    assert not (home / ".cache" / "Microsoft").exists()


@needs_strace
def test_a_long_mcp_session_sends_nothing_and_writes_only_the_store(tmp_path: Path, clean_home) -> None:
    """`ripple mcp` with the encoder and spaCy loaded, remembering and recalling, alive SESSION_SECONDS after."""
    env, allowed = clean_home
    store = tmp_path / "stores" / "mcp"
    command = traced(ripple("mcp", "--store", str(store)), tmp_path / "trace-mcp")
    client = RawClient(command, env=env, cwd=tmp_path)
    try:
        client.start()
        written = client.call_tool(1, "remember", {"speaker": "Alex", "text": "Maya loves the oyster bar."})
        assert written["memory_ids"] == [1], written  # the warm-up loaded the encoder and spaCy first
        loaded = time.monotonic()
        recalled = client.call_tool(2, "recall", {"question": "What does Maya love?"})
        assert recalled["evidence"][0]["memory_id"] == 1, recalled
        while time.monotonic() - loaded < SESSION_SECONDS:  # the process must outlive onnxruntime's timers
            time.sleep(5)
            assert client.call_tool(3, "stats")["memories"] == 1
    finally:
        assert client.close() == 0
    assert_private(tmp_path / "trace-mcp", tmp_path, allowed, store, Path(env["HOME"]))


@needs_strace
def test_an_ingest_sends_nothing_and_writes_only_the_store(tmp_path: Path, clean_home) -> None:
    """`ripple ingest` of a few hundred turns through the real encoder and spaCy."""
    env, allowed = clean_home
    chats = []
    for copy in range(COPIES):
        for path in sorted(SAMPLE_CHATS.glob("*.json")):
            chat = json.loads(path.read_text(encoding="utf-8"))
            chat["conversation_id"] = f"{chat['conversation_id']}-{copy}"
            chats.append(tmp_path / f"{copy}-{path.name}")
            chats[-1].write_text(json.dumps(chat), encoding="utf-8")
    store = tmp_path / "stores" / "ingest"
    command = traced(ripple("ingest", *map(str, chats), "--store", str(store), "--json"), tmp_path / "trace-ingest")
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert sum(report["memories"] for report in json.loads(done.stdout)) > 0
    assert_private(tmp_path / "trace-ingest", tmp_path, allowed, store, Path(env["HOME"]))
