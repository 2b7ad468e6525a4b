"""`ripple models pull / use / list` and the one-time tip, against a real HTTP server on 127.0.0.1 standing in for
the hub (Range requests, redirects, cut-offs, corrupted bodies): nothing is fetched from the internet."""

from __future__ import annotations

import hashlib
import json
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from chats import CHAT_1, new_memory, one_error_line, run, session, write_chat

from ripplecli import model_catalog
from ripplecli.local_models import load_config, set_config
from ripplecli.model_catalog import CatalogEntry

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
HUB_REPO = "ripple-test/Tiny-Instruct-GGUF"
HUB_FILE = "tiny-instruct-q4_k_m.gguf"
CUT_AT = 150_000


def instruct_gguf(path: Path, chat_template: bool = True) -> Path:
    """A ~400 KB GGUF with a complete header and tensor data, and a chat template unless told otherwise."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-instruct")
    writer.add_context_length(2048)
    if chat_template:
        writer.add_chat_template(TEMPLATE)
    writer.add_tensor("w", np.arange(100_000, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


class Hub:
    """What the stand-in hub serves and how it misbehaves; it records each request's path and Range header."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.seen: list[tuple[str, str | None]] = []
        self.cut_after: int | None = None  # the next answer stops after this many body bytes (once)
        self.ignore_range = False  # answer 200 with the whole file whatever Range says
        self.corrupt = False  # flip one byte of every body
        self.redirect = False  # /resolve/ answers 302 to /cdn/, as huggingface.co does

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        """Serve one GET."""
        asked = handler.headers.get("Range")
        self.seen.append((handler.path, asked))
        if self.redirect and "/resolve/main/" in handler.path:
            handler.send_response(302)
            handler.send_header("Location", "/cdn/" + handler.path.rsplit("/", 1)[1])
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        body = self.files.get(handler.path.replace("/cdn/", f"/{HUB_REPO}/resolve/main/"))
        if body is None:
            handler.send_error(404)
            return
        start = int(re.fullmatch(r"bytes=(\d+)-", asked)[1]) if asked and not self.ignore_range else 0
        if start >= len(body):
            handler.send_response(416)
            handler.send_header("Content-Range", f"bytes */{len(body)}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(206 if start else 200)
        if start:
            handler.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        payload = bytearray(body[start:])
        if self.corrupt:
            payload[len(payload) // 2] ^= 0xFF
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        if self.cut_after is not None:
            payload, self.cut_after = payload[: self.cut_after], None
        handler.wfile.write(payload)


@pytest.fixture
def model_file(tmp_path) -> Path:
    """The file the hub serves."""
    return instruct_gguf(tmp_path / "served.gguf")


@pytest.fixture
def hub(model_file, monkeypatch) -> Iterator[Hub]:
    """A threading HTTP server on 127.0.0.1 serving the tiny model at the hub's resolve path, $RIPPLE_HUB_URL
    pointing at it, and a catalogue entry `tiny` for it."""
    state = Hub({f"/{HUB_REPO}/resolve/main/{HUB_FILE}": model_file.read_bytes()})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.answer(self)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("RIPPLE_HUB_URL", f"http://127.0.0.1:{server.server_port}/")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    data = model_file.read_bytes()
    entry = CatalogEntry(
        name="tiny",
        repo=HUB_REPO,
        file=HUB_FILE,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        licence="Apache-2.0",
        architecture="llama",
        chat_format="ChatML",
    )
    monkeypatch.setitem(model_catalog.CATALOGUE, "tiny", entry)
    yield state
    server.shutdown()
    server.server_close()


def models_dir(tmp_path: Path) -> Path:
    """$RIPPLE_MODELS as conftest sets it."""
    return tmp_path / "ripple-models"


def pulled(tmp_path: Path) -> Path:
    return models_dir(tmp_path) / HUB_FILE


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- pull ----------------------------------------------------------------------------------------
def test_a_pull_installs_the_file_private_checked_and_sets_it_as_the_model(hub, model_file, tmp_path, monkeypatch):
    monkeypatch.setattr("ripplecli.cli.models.watched_stderr", lambda: True)  # the progress bar runs too
    result = run("models", "pull", "tiny")
    assert result.exit_code == 0, result.output
    path = pulled(tmp_path)
    assert path.read_bytes() == model_file.read_bytes()
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert not (path.parent / f"{HUB_FILE}.part").exists()
    assert load_config()["model.path"] == str(path)
    assert "downloaded, sha256 ok" in result.stdout and f"model.path = {path}" in result.stdout
    assert hub.seen == [(f"/{HUB_REPO}/resolve/main/{HUB_FILE}", None)]


def test_a_second_pull_checks_the_file_and_fetches_nothing(hub, tmp_path):
    assert run("models", "pull", "tiny").exit_code == 0
    again = run("models", "pull", "tiny", "--json")
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["fetched"] == 0 and report["path"] == str(pulled(tmp_path))
    assert len(hub.seen) == 1


def test_a_cut_off_pull_resumes_with_a_range_request(hub, model_file, tmp_path):
    hub.redirect = True  # the hub's resolve URL redirects to its CDN: the Range header must survive it
    hub.cut_after = CUT_AT
    cut = run("models", "pull", "tiny")
    assert cut.exit_code == 2
    assert "cut off" in one_error_line(cut) and "again to resume" in one_error_line(cut)
    part = models_dir(tmp_path) / f"{HUB_FILE}.part"
    assert part.stat().st_size == CUT_AT and mode(part) == 0o600
    assert not pulled(tmp_path).exists() and "model.path" not in load_config()
    resumed = run("models", "pull", "tiny", "--json")
    assert resumed.exit_code == 0, resumed.output
    report = json.loads(resumed.stdout)
    assert report["resumed_from"] == CUT_AT and report["fetched"] == len(model_file.read_bytes()) - CUT_AT
    assert (f"/cdn/{HUB_FILE}", f"bytes={CUT_AT}-") in hub.seen
    assert pulled(tmp_path).read_bytes() == model_file.read_bytes() and not part.exists()
    assert load_config()["model.path"] == str(pulled(tmp_path))


def test_a_corrupted_download_is_refused_and_nothing_changes(hub, tmp_path):
    set_config("model.path", str(tmp_path / "mine.gguf"))
    hub.corrupt = True
    result = run("models", "pull", "tiny")
    assert result.exit_code == 2 and "sha256" in one_error_line(result) and "nothing installed" in result.stderr
    assert not models_dir(tmp_path).joinpath(HUB_FILE).exists()
    assert not models_dir(tmp_path).joinpath(f"{HUB_FILE}.part").exists()
    assert load_config()["model.path"] == str(tmp_path / "mine.gguf")


def test_a_server_that_ignores_range_restarts_the_file_cleanly(hub, model_file, tmp_path):
    part = models_dir(tmp_path) / f"{HUB_FILE}.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"stale bytes of some other file" * 1000)
    hub.ignore_range = True
    result = run("models", "pull", "tiny", "--json")
    assert result.exit_code == 0, result.output
    assert hub.seen[0][1] == f"bytes={30 * 1000}-"  # asked to resume, was sent the whole file with a 200
    report = json.loads(result.stdout)
    assert report["resumed_from"] == 0 and report["fetched"] == report["size"]
    assert pulled(tmp_path).read_bytes() == model_file.read_bytes()


def test_a_part_as_long_as_the_file_starts_over(hub, model_file, tmp_path):
    part = models_dir(tmp_path) / f"{HUB_FILE}.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"x" * len(model_file.read_bytes()))  # a pull killed between its last byte and its check
    assert run("models", "pull", "tiny").exit_code == 0
    assert hub.seen[0][1] is None and pulled(tmp_path).read_bytes() == model_file.read_bytes()


def test_unknown_names_and_missing_files_are_one_line(hub, tmp_path, monkeypatch):
    unknown = run("models", "pull", "gpt-17")
    assert unknown.exit_code == 2 and "no model 'gpt-17' in the catalogue" in one_error_line(unknown)
    monkeypatch.setitem(
        model_catalog.CATALOGUE, "gone", CatalogEntry("gone", HUB_REPO, "gone.gguf", 10, "0" * 64, "MIT", "x", "y")
    )
    missing = run("models", "pull", "gone")
    assert missing.exit_code == 2 and "HTTP 404" in one_error_line(missing)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("RIPPLE_MODELS", str(blocked))
    unwritable = run("models", "pull", "tiny")
    assert unwritable.exit_code == 2 and str(blocked) in one_error_line(unwritable)
    assert len(hub.seen) == 1  # refused before asking the hub
    monkeypatch.setenv("RIPPLE_MODELS", str(models_dir(tmp_path)))
    monkeypatch.setenv("RIPPLE_HUB_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    unreachable = run("models", "pull", "tiny")
    assert unreachable.exit_code == 2 and "cannot reach" in one_error_line(unreachable)
    assert "model.path" not in load_config()


# --- use -----------------------------------------------------------------------------------------
def test_use_takes_a_pulled_name_a_path_or_a_found_name(hub, tmp_path, monkeypatch):
    early = run("models", "use", "tiny")
    assert early.exit_code == 2 and "not pulled yet: run `ripple models pull tiny`" in one_error_line(early)
    assert run("models", "pull", "tiny").exit_code == 0
    set_config("model.path", None)
    by_name = run("models", "use", "tiny", "--json")
    assert by_name.exit_code == 0, by_name.output
    assert json.loads(by_name.stdout)["source"] == "catalogue"
    assert load_config()["model.path"] == str(pulled(tmp_path))

    own = instruct_gguf(tmp_path / "own.gguf")
    assert run("models", "use", str(own)).exit_code == 0
    assert load_config()["model.path"] == str(own)

    ollama = tmp_path / "ollama"
    monkeypatch.setenv("OLLAMA_MODELS", str(ollama))
    digest = "sha256:" + "cd" * 32
    (ollama / "blobs").mkdir(parents=True)
    instruct_gguf(ollama / "blobs" / digest.replace(":", "-"))
    manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "tiny-chat" / "latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": digest}]}))
    found = run("models", "use", "tiny-chat:latest")
    assert found.exit_code == 0, found.output
    assert load_config()["model.path"] == str(ollama / "blobs" / digest.replace(":", "-"))

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "models").mkdir(parents=True)
    chat = instruct_gguf(tmp_path / "home" / "models" / "chat-model.gguf")
    by_file_name = run("models", "use", "chat-model.gguf")  # not in the working folder: ~/models has it
    assert by_file_name.exit_code == 0, by_file_name.output
    assert load_config()["model.path"] == str(chat)


def test_models_lists_lm_studio_folders_and_use_takes_their_files(tmp_path, monkeypatch):
    """LM Studio keeps models as <publisher>/<repo>/<file>.gguf under ~/.lmstudio/models (older versions under
    ~/.cache/lm-studio/models): both are listed, and `use` takes a file's name as it is listed."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "no-ollama"))
    new = home / ".lmstudio" / "models" / "lmstudio-community" / "Qwen2.5-Instruct-GGUF"
    old = home / ".cache" / "lm-studio" / "models" / "bartowski" / "Phi-Instruct-GGUF"
    new.mkdir(parents=True)
    old.mkdir(parents=True)
    instruct_gguf(new / "qwen-instruct-q4_k_m.gguf")
    instruct_gguf(old / "phi-instruct-q4_k_m.gguf")
    listed = run("models", "--json")
    assert listed.exit_code == 0, listed.output
    found = {m["name"]: m for m in json.loads(listed.stdout)["models"]}
    assert found["qwen-instruct-q4_k_m.gguf"]["source"] == found["phi-instruct-q4_k_m.gguf"]["source"] == "lm studio"
    assert found["qwen-instruct-q4_k_m.gguf"]["info"]["chat_template"]
    chosen = run("models", "use", "phi-instruct-q4_k_m.gguf", "--json")
    assert chosen.exit_code == 0, chosen.output
    assert json.loads(chosen.stdout)["source"] == "lm studio"
    assert load_config()["model.path"] == str(old / "phi-instruct-q4_k_m.gguf")


def test_use_refuses_a_file_that_is_no_instruct_gguf(tmp_path):
    set_config("model.path", str(tmp_path / "mine.gguf"))
    junk = tmp_path / "junk.gguf"
    junk.write_text("hello")
    bad = run("models", "use", str(junk))
    assert bad.exit_code == 2 and "not a GGUF file" in one_error_line(bad)
    base = run("models", "use", str(instruct_gguf(tmp_path / "base.gguf", chat_template=False)))
    assert base.exit_code == 2 and "no chat template" in one_error_line(base)
    nothing = run("models", "use", "no-such-model")
    assert nothing.exit_code == 2 and "no model 'no-such-model'" in one_error_line(nothing)
    assert load_config()["model.path"] == str(tmp_path / "mine.gguf")


# --- list ----------------------------------------------------------------------------------------
def test_models_lists_the_catalogue_with_figures_and_what_is_installed(hub, tmp_path):
    before = json.loads(run("models", "--json").stdout)
    rows = {e["name"]: e for e in before["catalogue"]}
    assert rows["qwen2.5-coder-1.5b"]["default"] and rows["qwen2.5-coder-1.5b"]["f1"] == pytest.approx(0.434)
    assert rows["qwen2.5-coder-0.5b"]["f1"] == pytest.approx(0.296) and rows["tiny"]["f1"] is None
    assert not rows["tiny"]["installed"]
    assert before["configured"] is None and before["models_dir"] == str(models_dir(tmp_path))
    assert run("models", "pull", "tiny").exit_code == 0
    after = run("models", "list", "--json")
    data = json.loads(after.stdout)
    assert {e["name"]: e for e in data["catalogue"]}["tiny"]["installed"]
    assert data["configured"]["usable"] and any(m["path"] == str(pulled(tmp_path)) for m in data["models"])
    table = run("models")
    assert table.exit_code == 0 and "qwen2.5-coder-1.5b *" in table.stdout and "0.434" in table.stdout
    assert "not measured yet" in table.stdout and "usable" in table.stdout


def test_models_counts_the_configured_catalogue_model_installed_where_it_lies(hub, model_file, tmp_path):
    elsewhere = tmp_path / "elsewhere" / HUB_FILE
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(model_file.read_bytes())
    assert not json.loads(run("models", "--json").stdout)["catalogue"][-1]["configured"]
    assert run("models", "use", str(elsewhere)).exit_code == 0
    rows = {e["name"]: e for e in json.loads(run("models", "--json").stdout)["catalogue"]}
    assert rows["tiny"]["installed"] and rows["tiny"]["configured"] and rows["tiny"]["path"] == str(elsewhere)
    assert not rows["qwen2.5-coder-1.5b"]["configured"]
    assert "yes, in use" in run("models").stdout


# --- the one-time tip ----------------------------------------------------------------------------
TIP = "ripple models pull (1.1 GB, once)"


@pytest.fixture
def store(tmp_path, fake_settings) -> str:
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write_chat(tmp_path / "chat.json", [session(1, CHAT_1)]))
    return str(tmp_path / "store")


def test_the_first_ask_without_a_model_says_how_to_get_one_once(store, isolated_config, monkeypatch):
    unseen = run("ask", "Who went hiking in Denver?", "--store", store)
    assert unseen.exit_code == 0 and TIP not in unseen.stderr  # nobody watches stderr: kept for a person
    monkeypatch.setattr("ripplecli.cli.ask.watched_stderr", lambda: True)
    as_json = run("ask", "Who went hiking in Denver?", "--store", store, "--json")
    assert as_json.exit_code == 0 and TIP not in as_json.output
    typed = run("ask", "Who went hiking in Denver?", "--store", store, "--answer", "typed")
    assert TIP not in typed.output  # a chosen answerer: no advice
    first = run("ask", "Who went hiking in Denver?", "--store", store)
    assert first.exit_code == 0 and first.stderr.strip().splitlines()[-1].startswith("tip: answers are better")
    assert TIP in first.stderr and TIP not in first.stdout
    second = run("ask", "Who went hiking in Denver?", "--store", store)
    assert second.exit_code == 0 and TIP not in second.output
    assert (isolated_config.parent / "state.json").is_file()  # remembered beside the config, never in the store
    assert not list(Path(store).rglob("state.json"))


def test_no_tip_once_a_model_is_configured(tmp_path):
    assert model_catalog.model_tip() is not None
    set_config("model.path", str(tmp_path / "m.gguf"))
    assert model_catalog.model_tip() is None
    set_config("model.path", None)
    model_catalog.tip_shown()
    assert model_catalog.model_tip() is None


# --- only `pull` touches the network -------------------------------------------------------------
NETWORK = re.compile(r"^\s*(import|from)\s+(urllib\.request|http\.client|socket|requests|httpx|urllib3)\b", re.M)


def test_only_the_pull_module_imports_network_code():
    users = {
        str(path.relative_to(REPO))
        for path in (REPO / "ripplecli").rglob("*.py")
        if NETWORK.search(path.read_text(encoding="utf-8"))
    }
    assert users == {"ripplecli/runtime/model_pull.py"}


def test_help_and_listing_never_import_the_download_code(tmp_path):
    code = (
        "import contextlib, sys, ripplecli.cli\n"
        "for args in (['--help'], ['models', '--help'], ['models', 'pull', '--help'], ['models', 'list']):\n"
        "    with contextlib.suppress(SystemExit):\n"
        "        ripplecli.cli.app(args)\n"
        "print('ripplecli.runtime.model_pull' in sys.modules, 'urllib.request' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split()[-2:] == ["False", "False"]


def test_default_models_folder_is_not_inside_the_default_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A pulled model must not sit in the default store folder: a new store there would refuse other files."""
    import platformdirs

    from ripplecli.config import data_home, models_home

    monkeypatch.delenv("RIPPLE_HOME", raising=False)
    monkeypatch.delenv("RIPPLE_MODELS", raising=False)
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda name: str(tmp_path / "share" / name))
    assert not models_home().is_relative_to(data_home())


def test_json_given_before_the_subcommand_is_honoured(hub, tmp_path):
    """`ripple models --json list` (and pull/use) writes JSON as `ripple models list --json` does."""
    listed = run("models", "--json", "list")
    assert listed.exit_code == 0 and "catalogue" in json.loads(listed.stdout)
    pulled_now = run("models", "--json", "pull", "tiny")
    assert pulled_now.exit_code == 0 and json.loads(pulled_now.stdout)["name"] == "tiny"
    chosen = run("models", "--json", "use", "tiny")
    assert chosen.exit_code == 0 and json.loads(chosen.stdout)["path"] == str(pulled(tmp_path))
