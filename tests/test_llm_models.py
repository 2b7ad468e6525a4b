"""Model files and choice: GGUF header checks, the config file, discovery (Ollama too), one-line CLI errors."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from chats import one_error_line, run

from ripplecli.errors import ModelError
from ripplecli.local_models import discover, load_config, ollama_models, resolve_model, set_config
from ripplecli.runtime import gguf_info
from ripplecli.runtime.gguf_info import check_instruct, read_info
from ripplecli.runtime.llm import physical_cores, prune_states

TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}<|assistant|>"


def write_gguf(path: Path, chat_template: bool = True, context: int = 1024) -> Path:
    """A tiny but well-formed GGUF: llama architecture, one float tensor, optional chat template."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny")
    writer.add_context_length(context)
    if chat_template:
        writer.add_chat_template(TEMPLATE)
    writer.add_tensor("w", np.arange(256, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


# --- GGUF headers --------------------------------------------------------------------------------
def test_header_facts_of_a_good_file(tmp_path):
    info = read_info(write_gguf(tmp_path / "tiny.gguf"))
    assert info.architecture == "llama" and info.context_length == 1024 and info.chat_template
    assert info.complete and info.tensors == 1 and info.expected_size == info.size
    assert check_instruct(info.path).name == "tiny"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p, "no such file"),
        (lambda p: (p.write_bytes(b"PK\x03\x04 not a model"), p)[1], "not a GGUF file"),
        (lambda p: (p.write_bytes(b"GGUF\x03\x00"), p)[1], "truncated GGUF header"),
        (lambda p: write_gguf(p, chat_template=False), "no chat template"),
    ],
)
def test_unusable_files_are_one_clear_model_error(tmp_path, make, message):
    path = make(tmp_path / "model.gguf")
    with pytest.raises(ModelError, match=message) as caught:
        check_instruct(path)
    assert str(tmp_path / "model.gguf") in str(caught.value) and "\n" not in str(caught.value)


def test_a_truncated_download_is_refused(tmp_path):
    path = write_gguf(tmp_path / "cut.gguf")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 300])
    assert not read_info(path).complete
    with pytest.raises(ModelError, match="truncated"):
        check_instruct(path)


def test_a_model_larger_than_free_memory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(gguf_info, "free_memory", lambda: 100)
    with pytest.raises(ModelError, match="memory"):
        check_instruct(write_gguf(tmp_path / "big.gguf"))


def test_the_smollm2_header_is_read_without_loading(smollm2):
    info = read_info(smollm2)
    assert info.architecture == "llama" and info.chat_template and info.complete and info.context_length == 8192


def test_generation_threads_are_one_per_physical_core(monkeypatch):
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    two_a_core = "processor\t: 0\nsiblings\t: 8\ncpu cores\t: 4\n\nprocessor\t: 1\nsiblings\t: 8\ncpu cores\t: 4\n"
    assert physical_cores(two_a_core) == 2  # 4 usable CPUs, two threads a core
    assert physical_cores("siblings\t: 2\ncpu cores\t: 2\n") == 4  # no SMT: every usable CPU
    assert physical_cores("model name\t: unknown") is None  # llama.cpp's own default then


def test_only_the_latest_prefix_states_are_kept(tmp_path):
    for age in range(6):
        state = tmp_path / f"s{age}.state"
        state.write_bytes(b"x")
        os.utime(state, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))
    prune_states(tmp_path, keep=4)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["s0.state", "s1.state", "s2.state", "s3.state"]


# --- config and choice ---------------------------------------------------------------------------
def test_config_keys_are_checked_and_stored(isolated_config, tmp_path):
    set_config("model.n_ctx", "2048")
    set_config("model.repack", "yes")
    set_config("model.path", str(tmp_path / "m.gguf"))
    assert load_config() == {"model.n_ctx": 2048, "model.repack": True, "model.path": str(tmp_path / "m.gguf")}
    assert json.loads(isolated_config.read_text())["model.n_ctx"] == 2048
    set_config("model.n_ctx", None)
    assert "model.n_ctx" not in load_config()
    with pytest.raises(Exception, match="unknown config key"):
        set_config("model.colour", "red")


def test_model_choice_order(tmp_path, monkeypatch):
    assert resolve_model() is None
    set_config("model.path", str(tmp_path / "config.gguf"))
    assert resolve_model()[1].startswith("config")
    monkeypatch.setenv("RIPPLE_MODEL", str(tmp_path / "env.gguf"))
    assert resolve_model() == (tmp_path / "env.gguf", "RIPPLE_MODEL")
    assert resolve_model(tmp_path / "flag.gguf") == (tmp_path / "flag.gguf", "--model")


# --- discovery -----------------------------------------------------------------------------------
def test_discovery_reads_folders_and_ollama_manifests(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    ollama = tmp_path / "ollama"
    monkeypatch.setenv("OLLAMA_MODELS", str(ollama))
    (tmp_path / "home" / "models").mkdir(parents=True)
    write_gguf(tmp_path / "home" / "models" / "chat.gguf")
    write_gguf(tmp_path / "home" / "models" / "base.gguf", chat_template=False)
    digest = "sha256:" + "ab" * 32
    (ollama / "blobs").mkdir(parents=True)
    write_gguf(ollama / "blobs" / digest.replace(":", "-"))
    manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "tiny" / "latest"
    manifest.parent.mkdir(parents=True)
    layer = {"mediaType": "application/vnd.ollama.image.model", "digest": digest}
    manifest.write_text(json.dumps({"layers": [layer]}))
    assert [name for name, _ in ollama_models(ollama)] == ["tiny:latest"]
    found = {m.name: m for m in discover()}
    assert set(found) == {"base.gguf", "chat.gguf", "tiny:latest"}
    assert found["tiny:latest"].source == "ollama" and found["chat.gguf"].info["chat_template"]
    assert not found["base.gguf"].info["chat_template"]


def test_ripple_models_finds_smollm2_through_the_config(smollm2, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "ollama"))
    assert run("config", "set", "model.dirs", str(smollm2.parent)).exit_code == 0
    assert run("config", "set", "model.path", str(smollm2)).exit_code == 0
    result = run("models", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["configured"]["usable"] and data["configured"]["path"] == str(smollm2)
    (entry,) = [m for m in data["models"] if m["path"] == str(smollm2)]
    assert entry["info"]["architecture"] == "llama" and entry["info"]["chat_template"]
    table = run("models")
    assert table.exit_code == 0 and "SmolLM2-135M-Instruct" in table.stdout and "usable" in table.stdout


# --- CLI errors ----------------------------------------------------------------------------------
@pytest.fixture
def chat(tmp_path) -> Path:
    data = {"sessions": [{"id": "1", "timestamp": "2023-05-08T10:00:00", "turns": [{"speaker": "A", "text": "hi"}]}]}
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(data))
    return path


def test_bad_model_paths_are_exit_2_one_line(tmp_path, chat):
    store = tmp_path / "store"
    missing = run(
        "ingest", str(chat), "--extractor", "llm", "--model", str(tmp_path / "nope.gguf"), "--store", str(store)
    )
    assert missing.exit_code == 2 and "nope.gguf: no such file" in one_error_line(missing)
    assert not store.exists()  # refused before the store was touched
    junk = tmp_path / "junk.gguf"
    junk.write_text("hello")
    bad = run("ingest", str(chat), "--extractor", "llm", "--model", str(junk), "--store", str(store))
    assert bad.exit_code == 2 and "not a GGUF file" in one_error_line(bad)
    base = write_gguf(tmp_path / "base.gguf", chat_template=False)
    no_template = run("ingest", str(chat), "--extractor", "llm", "--model", str(base), "--store", str(store))
    assert no_template.exit_code == 2 and "no chat template" in one_error_line(no_template)
    nothing = run("ingest", str(chat), "--extractor", "llm", "--store", str(store))
    assert nothing.exit_code == 2 and "no local model configured" in one_error_line(nothing)


def test_ask_with_a_bad_model_is_exit_2(tmp_path, chat, fake_settings):
    from ripplecli.api import Memory

    with Memory(tmp_path / "store") as memory:
        memory.configure(fake_settings)
        memory.ingest(chat)
    shutil.copy(chat, tmp_path / "x.gguf")
    result = run(
        "ask", "hi?", "--answer", "llm", "--model", str(tmp_path / "x.gguf"), "--store", str(tmp_path / "store")
    )
    assert result.exit_code == 2 and "not a GGUF file" in one_error_line(result)
    result = run("ask", "hi?", "--planner", "psychic", "--store", str(tmp_path / "store"))
    assert result.exit_code == 2 and "unknown planner" in one_error_line(result)


def test_config_cli_errors_and_show(tmp_path):
    bad = run("config", "set", "model.n_ctx", "lots")
    assert bad.exit_code == 2 and "model.n_ctx" in one_error_line(bad)
    assert run("config", "set", "model.n_gpu_layers", "-1").exit_code == 0
    shown = run("config", "show", "--json")
    assert json.loads(shown.stdout)["settings"] == {"model.n_gpu_layers": -1}
    assert run("config", "get", "model.n_gpu_layers").stdout.strip() == "-1"


def test_a_prefix_state_that_was_not_saved_leaves_no_file(tmp_path, monkeypatch):
    """Pruning marks the states in use by loading them, never by creating one: a failed save leaves nothing."""
    from ripplecli.runtime.llm import LlamaCppLLM

    monkeypatch.setenv("RIPPLE_CACHE", str(tmp_path))
    llm = object.__new__(LlamaCppLLM)
    llm._prefixes = {}
    monkeypatch.setattr(LlamaCppLLM, "_prefix_key", lambda self, probes: "k")
    monkeypatch.setattr(LlamaCppLLM, "_save_prefix", lambda self, probes, path: 120)  # evaluated, not written
    assert llm.keep_prefix(([], [])) == 120
    assert not list(tmp_path.rglob("*.state"))
