"""Privacy: nothing goes over the network, the store folder is 0700 and every file in it 0600."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from chats import CHAT_1, CHAT_2, SECRET_CHAT, new_memory, run, session, write_chat

REPO = Path(__file__).resolve().parent.parent
TINY = Path(__file__).parent / "fixtures" / "eval" / "locomo-tiny.json"


def modes(folder: Path) -> dict[str, int]:
    """Permission bits of the folder and of everything under it."""
    found = {".": stat.S_IMODE(folder.stat().st_mode)}
    for path in folder.rglob("*"):
        found[str(path.relative_to(folder))] = stat.S_IMODE(path.stat().st_mode)
    return found


def assert_private(folder: Path) -> None:
    """Folders 0700, files 0600, whatever the umask."""
    wrong = {
        name: oct(mode)
        for name, mode in modes(folder).items()
        if mode != (0o700 if (folder / name).is_dir() else 0o600)
    }
    assert not wrong, wrong


def test_every_file_of_the_store_is_private_through_every_command(tmp_path, fake_settings, fake_extractor):
    old_umask = os.umask(0o022)  # the usual default: new files would be world-readable
    try:
        chat = write_chat(tmp_path / "chat.json", [session(1, CHAT_1), session(2, CHAT_2)])
        with new_memory(tmp_path / "store", fake_settings) as memory:
            memory.ingest(chat)
        store = str(tmp_path / "store")
        assert_private(tmp_path / "store")
        more = write_chat(tmp_path / "more.json", [session(3, SECRET_CHAT)])
        for command in (
            ["ingest", str(more)],
            ["ask", "hiking in Denver"],
            ["forget", "m1", "--yes"],
            ["doctor", "--repair"],
            ["export", "--out", str(tmp_path / "out.jsonl")],
        ):
            assert run(*command, "--store", store).exit_code == 0, command
            assert_private(tmp_path / "store")
        assert stat.S_IMODE((tmp_path / "out.jsonl").stat().st_mode) == 0o600
        assert run("import", str(tmp_path / "out.jsonl"), "--store", str(tmp_path / "copy")).exit_code == 0
        assert_private(tmp_path / "copy")
    finally:
        os.umask(old_umask)


def test_the_offline_switches_are_set_before_hugging_face_is_imported(tmp_path):
    script = (
        "import sys\n"
        "from ripplecli.api import Memory\n"
        "Memory(sys.argv[1]).close()\n"
        "import huggingface_hub.constants as c, transformers.utils.hub as h\n"
        "print(c.HF_HUB_OFFLINE, h.is_offline_mode())\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "s")], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


ENTRY_POINTS = [
    "ripplecli.cli",
    "ripplecli.api",
    "ripplecli.mcp_server",
    "ripplecli.eval.runner",
    "ripplecli.runtime.onnx_session",
    "ripplecli.runtime.onnx_encoder",
]


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_onnxruntime_telemetry_is_off_before_it_can_be_imported(module):
    """onnxruntime reads ORT_DISABLE_TELEMETRY once, at its import: whichever ripple module a program imports first
    sets it, whatever the environment said (test_telemetry.py watches the real thing under strace)."""
    script = f"import sys, os, {module}\nprint('onnxruntime' in sys.modules, os.environ.get('ORT_DISABLE_TELEMETRY'))"
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "0"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[1] == "1"


def test_onnxruntime_imported_before_ripple_is_warned_about():
    script = "import onnxruntime, ripplecli"
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "set ORT_DISABLE_TELEMETRY=1 before importing it" in done.stderr


def test_the_readme_promises_no_network_and_no_logs_elsewhere():
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "Nothing is sent anywhere" in readme and "nothing is logged outside the store folder" in readme


class NoNetwork(Exception):
    """Raised by the patched socket constructor."""


@pytest.mark.slow
def test_ingest_ask_and_eval_with_sockets_blocked(tmp_path, monkeypatch):
    """The real encoder, spaCy and the evaluation harness, with every socket creation refused."""

    def refuse(*args, **kwargs):
        raise NoNetwork(f"socket{args} attempted")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    store = str(tmp_path / "store")
    ingested = run("ingest", str(TINY), "--store", store, "--json")
    assert ingested.exit_code == 0, ingested.output
    assert json.loads(ingested.stdout)[0]["memories"] > 0
    asked = run("ask", "What breed is Nora's dog?", "--store", store, "--json")
    assert asked.exit_code == 0, asked.output
    assert any("whippet" in e["restatement"] for e in json.loads(asked.stdout)["evidence"])
    evaluated = run("eval", "locomo", str(TINY), "--out", str(tmp_path / "eval"), "--modes", "ripple,dense")
    assert evaluated.exit_code == 0, evaluated.output
    assert (tmp_path / "eval" / "report.json").is_file()
    assert_private(tmp_path / "store")
