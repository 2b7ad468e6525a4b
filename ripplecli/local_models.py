"""Which local model to use (--model, $RIPPLE_MODEL, the config file) and which GGUF files are on this machine.

The config file is JSON at $RIPPLE_CONFIG, else `<user config dir>/ripple/config.json`. Nothing here loads
weights except `load_llm`, and nothing downloads (`ripple models pull` is ripplecli.model_catalog).
"""

from __future__ import annotations

import atexit
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ripplecli.errors import InputError, ModelError
from ripplecli.files import replace_atomically, unusable_because

OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
NO_MODEL = "no local model configured: pass --model PATH, set RIPPLE_MODEL, or run `ripple config set model.path PATH`"


def _bool(text: str) -> bool:
    """A yes/no setting."""
    lowered = text.strip().lower()
    if lowered not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        raise ValueError(f"'{text}' is not true or false")
    return lowered in ("true", "1", "yes", "on")


def _optional_int(text: str) -> int | None:
    """An integer, or `auto` for llama.cpp's own choice."""
    return None if text.strip().lower() in ("auto", "none", "") else int(text)


def _path(text: str) -> str:
    """A file path, stored absolute so the config works from any folder."""
    return str(Path(text).expanduser().resolve())


def _paths(text: str) -> list[str]:
    """Folders separated by the OS path separator."""
    return [_path(part) for part in text.split(os.pathsep) if part.strip()]


def _name(text: str) -> str:
    """A person's name as it should appear in memories: one line, spaces collapsed, not empty."""
    name = " ".join(text.split())
    if not name:
        raise ValueError("the name is empty")
    if len(name) > 80:
        raise ValueError("the name is longer than 80 characters")
    return name


# key -> parser of the command-line text; the value is stored parsed
CONFIG_KEYS: dict[str, Callable[[str], Any]] = {
    "me": _name,  # the store owner's name: their turns are stored under it, "I" in a question means them
    "model.path": _path,
    "model.dirs": _paths,
    "model.n_ctx": int,
    "model.n_threads": _optional_int,
    "model.n_gpu_layers": int,
    "model.seed": int,
    "model.temperature": float,
    "model.max_tokens": int,
    "model.repack": _bool,
    "model.flash_attn": _bool,
}


# --- config file ---------------------------------------------------------------------------------
def config_path() -> Path:
    """$RIPPLE_CONFIG, else config.json in the platform's user config dir."""
    env = os.environ.get("RIPPLE_CONFIG")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("ripple")) / "config.json"


def load_config() -> dict[str, Any]:
    """The flat key -> value settings; a missing file is an empty config, a broken one a clear error."""
    path = config_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):  # none yet (or none can be there: `config set` says why)
        return {}
    except PermissionError:
        raise InputError(f"config {path}: permission denied; set RIPPLE_CONFIG to a file you can read") from None
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, not JSON
        raise InputError(f"config {path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"config {path}: expected a JSON object")
    return data


def _known(key: str) -> None:
    """Refuse a key the config does not have, naming the ones it has."""
    if key not in CONFIG_KEYS:
        raise InputError(f"unknown config key '{key}' (choose from: {', '.join(CONFIG_KEYS)})")


def config_value(key: str) -> Any:
    """One key's value (None when unset); an unknown key is an InputError."""
    _known(key)
    return load_config().get(key)


def set_config(key: str, text: str | None) -> dict[str, Any]:
    """Set (or with None, remove) one key; the value is checked before the file is written."""
    _known(key)
    data = load_config()
    if text is None:
        data.pop(key, None)
    else:
        try:
            data[key] = CONFIG_KEYS[key](text)
        except ValueError as exc:
            raise InputError(f"config {key}: {exc}") from None
    _write(data)
    return data


def _write(data: dict[str, Any]) -> None:
    """Atomic write (a crash leaves the old file) of an owner-only file, in a folder ripple makes owner-only."""
    path = config_path()
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        replace_atomically(path, lambda temp: temp.write_text(text, encoding="utf-8"))
    except OSError as exc:  # a read-only disk, a file where the folder should be, someone else's folder
        reason = f"{unusable_because(path, exc)}; set RIPPLE_CONFIG to a file you can write"
        raise InputError(f"config {path}: cannot write it: {reason}") from None


# --- which model ---------------------------------------------------------------------------------
def resolve_model(explicit: str | Path | None = None) -> tuple[Path, str] | None:
    """The model path and where it came from: --model, then $RIPPLE_MODEL, then the config file."""
    if explicit:
        return Path(explicit).expanduser(), "--model"
    env = os.environ.get("RIPPLE_MODEL")
    if env:
        return Path(env).expanduser(), "RIPPLE_MODEL"
    configured = load_config().get("model.path")
    return (Path(configured), f"config {config_path()}") if configured else None


def model_options() -> Any:
    """Runtime options from the config file (context, threads, GPU layers, seed, temperature...)."""
    from ripplecli.runtime.llm import ModelOptions

    config = load_config()
    known = {f.name for f in fields(ModelOptions)}
    values = {k.split(".", 1)[1]: v for k, v in config.items() if k.startswith("model.")}
    return ModelOptions(**{k: v for k, v in values.items() if k in known})


_LOADED: dict[tuple[str, str], Any] = {}


def load_llm(explicit: str | Path | None = None) -> Any:
    """The configured model, loaded once per process; no model or an unusable one is a ModelError."""
    from ripplecli.runtime.llm import LlamaCppLLM

    chosen = resolve_model(explicit)
    if chosen is None:
        raise ModelError(NO_MODEL)
    options = model_options()
    key = (str(chosen[0].resolve()), repr(options))
    if key not in _LOADED:
        if not _LOADED:
            atexit.register(close_loaded)
        _LOADED[key] = LlamaCppLLM(chosen[0], options)
    return _LOADED[key]


def close_loaded() -> None:
    """Free the process's models while llama.cpp's bindings still exist (at interpreter exit its __del__ would print
    a TypeError)."""
    while _LOADED:
        _LOADED.popitem()[1].close()


# --- discovery -----------------------------------------------------------------------------------
@dataclass
class FoundModel:
    """A GGUF file on this machine, named for people, with its header facts or why they could not be read."""

    name: str
    path: str
    source: str
    info: dict[str, Any] | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"name": self.name, "path": self.path, "source": self.source, "info": self.info, "error": self.error}


def search_dirs() -> list[tuple[str, Path]]:
    """The usual places for GGUF files: ripple's pulled models, config dir and model.dirs, ~/models, HF cache,
    LM Studio."""
    from ripplecli.config import models_home

    home = Path.home()
    hf_home = Path(os.environ.get("HF_HOME", home / ".cache" / "huggingface"))
    places = [("ripple", models_home()), ("config", config_path().parent)]
    places += [("config model.dirs", Path(d)) for d in load_config().get("model.dirs", [])]
    places += [
        ("~/models", home / "models"),
        ("huggingface", Path(os.environ.get("HF_HUB_CACHE", hf_home / "hub"))),
        ("lm studio", home / ".lmstudio" / "models"),
        ("lm studio", home / ".cache" / "lm-studio" / "models"),
    ]
    return places


def ollama_dir() -> Path:
    """Ollama's model store: $OLLAMA_MODELS or ~/.ollama/models."""
    return Path(os.environ.get("OLLAMA_MODELS", Path.home() / ".ollama" / "models"))


def _gguf_files(folder: Path) -> Iterator[Path]:
    """*.gguf below a folder (HF snapshots are symlinks into blobs: followed by is_file)."""
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*.gguf")):
        if path.is_file():
            yield path


def ollama_models(root: Path) -> Iterator[tuple[str, Path]]:
    """(name:tag, blob) for each Ollama manifest whose model layer is in the blob store."""
    manifests = root / "manifests"
    if not manifests.is_dir():
        return
    for manifest in sorted(p for p in manifests.rglob("*") if p.is_file()):
        try:
            layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers", [])
        except (OSError, json.JSONDecodeError, AttributeError):
            continue
        for layer in layers:
            if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
                blob = root / "blobs" / str(layer.get("digest", "")).replace(":", "-")
                if blob.is_file():
                    yield _ollama_name(manifest.relative_to(manifests)), blob


def _ollama_name(relative: Path) -> str:
    """registry.ollama.ai/library/llama3/8b -> llama3:8b; other namespaces keep their prefix."""
    parts = list(relative.parts)
    if len(parts) >= 2 and parts[0] == "registry.ollama.ai":
        parts = parts[1:]
    if len(parts) >= 2 and parts[0] == "library":
        parts = parts[1:]
    return "/".join(parts[:-1]) + ":" + parts[-1] if len(parts) > 1 else parts[0]


def discover() -> list[FoundModel]:
    """Every GGUF file in the usual places, each once, with its header facts."""
    from ripplecli.runtime.gguf_info import read_info

    seen: set[Path] = set()
    found: list[FoundModel] = []
    candidates = [(p.name, p, label) for label, folder in search_dirs() for p in _gguf_files(folder)]
    candidates += [(name, blob, "ollama") for name, blob in ollama_models(ollama_dir())]
    for name, path, source in candidates:
        real = path.resolve()
        if real in seen:
            continue
        seen.add(real)
        entry = FoundModel(name, str(path), source)
        try:
            entry.info = read_info(path).to_dict()
        except ModelError as exc:
            entry.error = str(exc)
        found.append(entry)
    return found


def configured_model(explicit: str | Path | None = None) -> dict[str, Any] | None:
    """The model that would be used, where it was chosen, and whether it is usable (without loading it)."""
    from ripplecli.runtime.gguf_info import check_instruct

    chosen = resolve_model(explicit)
    if chosen is None:
        return None
    path, origin = chosen
    report: dict[str, Any] = {"path": str(path), "origin": origin, "usable": True, "error": None}
    try:
        report["info"] = check_instruct(path).to_dict()
    except ModelError as exc:
        report.update(usable=False, error=str(exc))
    return report
