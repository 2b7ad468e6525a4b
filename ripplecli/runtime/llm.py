"""The local instruction model: schema-constrained calls with validation, one retry and a recorded failure.

`structured()` works over any object with the LLM protocol (runtime/base.py), so the fake in the tests and
the llama.cpp backend share the same retry and failure path. llama_cpp is imported only inside LlamaCppLLM.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ripplecli.errors import ModelError
from ripplecli.protocols import LLM, Messages

if TYPE_CHECKING:  # pydantic is imported by the callers' schemas; the ask path without a model never needs it
    from pydantic import BaseModel
    from pydantic_core import ErrorDetails

M = TypeVar("M", bound="BaseModel")
RETRY_NOTE = "Your previous reply was rejected: {error}. Reply again with one JSON object that follows the schema."
CHARS_PER_TOKEN = 4  # estimate for backends without a tokenizer (the fake in tests)
MESSAGE_OVERHEAD = 8  # role markers of a chat template, per message
ERROR_CHARS = 300
GRAMMAR_CACHE = 64
KEEP_STATES = 4  # saved prompt-prefix states kept on disk: a few models in use at once


class LLMOutputError(Exception):
    """The model answered, but not with what was asked (invalid JSON, cut at max_tokens); keeps the raw text."""

    def __init__(self, message: str, raw: str = ""):
        super().__init__(message)
        self.raw = raw


@dataclass
class LLMCall:
    """One model call as the trace shows it: who asked, tokens in/out, seconds, and how it ended."""

    component: str
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    ok: bool = True
    error: str | None = None
    note: str | None = None
    first_token: float | None = None  # seconds to the first streamed piece: when the reader sees words
    model: str | None = None  # which model answered (the trace and --json name it)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without empty fields."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Failure:
    """Why a structured call gave up (after its retry) and what the model said last."""

    error: str
    raw_output: str = ""
    attempts: int = 0


def failure_row(stage: str, location: str, failure: Failure | str | None, raw_output: str | None = None) -> dict:
    """A row of the store's `failures` table (the ingest adds run_id): what gave up, where, and what it said."""
    if isinstance(failure, Failure):
        return {"stage": stage, "location": location, "error": failure.error, "raw_output": failure.raw_output}
    return {"stage": stage, "location": location, "error": failure or "no output", "raw_output": raw_output}


class FailureLog:
    """Keeps a model component's fallbacks as `failures` rows until the writer takes them for the store."""

    failures: list[dict]

    def take_failures(self) -> list[dict]:
        """Failures since the last call (rows for the store's `failures` table)."""
        taken, self.failures = self.failures, []
        return taken


def take_failures(*components: Any) -> list[dict]:
    """Every failure the components (those that log any) kept since the last call."""
    return [row for part in components if isinstance(part, FailureLog) for row in part.take_failures()]


@dataclass
class CallLog:
    """Every call a component made, for the trace (`llm_calls`) and the ingest report."""

    calls: list[LLMCall] = field(default_factory=list)

    def add(self, call: LLMCall) -> None:
        """Keep one call."""
        self.calls.append(call)

    def to_list(self) -> list[dict[str, Any]]:
        """The trace's `llm_calls`."""
        return [c.to_dict() for c in self.calls]


def structured(
    llm: LLM,
    messages: Messages,
    model: type[M],
    component: str,
    log: CallLog,
    context: dict[str, Any] | None = None,
    retries: int = 1,
    schema: dict[str, Any] | None = None,
) -> tuple[M | None, Failure | None]:
    """Call the model under `model`'s JSON schema (or a narrower `schema`) and validate; retry once, then give up."""
    schema = schema or model.model_json_schema()
    attempt_messages = list(messages)
    failure = Failure("no attempt")
    for attempt in range(1, retries + 2):
        raw, error, parsed = _attempt(llm, attempt_messages, schema, model, component, log, context)
        if parsed is not None:
            return parsed, None
        failure = Failure(error, raw, attempt)
        attempt_messages = [*messages, {"role": "user", "content": RETRY_NOTE.format(error=error)}]
    return None, failure


def _attempt(llm, messages, schema, model, component, log, context) -> tuple[str, str, Any]:
    """One call: (raw output, error or "", validated object or None); every outcome is logged."""
    from pydantic import ValidationError

    started = time.perf_counter()
    if hasattr(llm, "last_usage"):
        llm.last_usage = None
    raw, error, parsed = "", "", None
    try:
        data = llm.generate_json(messages, schema)
        raw = json.dumps(data, ensure_ascii=False)
        parsed = model.model_validate(data, context=context)
    except LLMOutputError as exc:
        raw, error = exc.raw, str(exc)
    except ValidationError as exc:
        error = "schema violation: " + "; ".join(_short_error(e) for e in exc.errors()[:3])
    except Exception as exc:  # a backend crash or timeout must fall back, never abort an ingest or an ask
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - started
    tokens_in, tokens_out = getattr(llm, "last_usage", None) or (prompt_tokens(llm, messages), estimate(raw))
    log.add(LLMCall(component, tokens_in, tokens_out, round(seconds, 3), not error, error[:ERROR_CHARS] or None))
    return raw, error, parsed


def _short_error(error: ErrorDetails) -> str:
    """One pydantic error as `where: what`."""
    where = ".".join(str(p) for p in error.get("loc", ()))
    return f"{where}: {error.get('msg', '')}" if where else str(error.get("msg", ""))


def estimate(text: str) -> int:
    """Token estimate when no tokenizer is at hand."""
    return -(-len(text) // CHARS_PER_TOKEN)


def count_tokens(llm: LLM, text: str) -> int:
    """Tokens of `text` under the model's tokenizer when it has one."""
    counter = getattr(llm, "count_tokens", None)
    return counter(text) if counter else estimate(text)


def prompt_tokens(llm: LLM, messages: Messages) -> int:
    """Tokens a chat prompt will take, template markers included."""
    return sum(count_tokens(llm, m["content"]) + MESSAGE_OVERHEAD for m in messages)


def prompt_budget(llm: LLM) -> int:
    """Tokens left for the prompt once the answer's room (max_tokens) is reserved."""
    return int(getattr(llm, "n_ctx", 4096)) - int(getattr(llm, "max_tokens", 512)) - 16


def fit_evidence(
    llm: LLM, evidence: list[Any], build: Callable[[list[Any]], Messages], cap: int, floor: int
) -> tuple[list[Any], str | None]:
    """The best-ranked evidence (at most `cap`, never fewer than `floor`) whose prompt fits the context, and a note
    saying how much was left out."""
    shown = evidence[:cap]
    while len(shown) > floor and prompt_tokens(llm, build(shown)) > prompt_budget(llm):
        shown = shown[:-1]
    limit = min(len(evidence), cap)
    if len(shown) < limit:
        return shown, f"evidence trimmed to {len(shown)} of {limit} memories to fit the context"
    return shown, None


# --- llama.cpp backend ---------------------------------------------------------------------------
_LOAD_LOCK = threading.Lock()


@dataclass
class ModelOptions:
    """How to run a GGUF model; defaults suit a laptop CPU. `repack` enables llama.cpp's weight repacking
    (AMX / AVX-512 kernels), off by default: some virtual machines advertise AMX and then trap on it."""

    n_ctx: int = 4096
    n_threads: int | None = None
    n_gpu_layers: int = 0
    seed: int = 0
    temperature: float = 0.0
    max_tokens: int = 512
    repack: bool = False
    flash_attn: bool = False  # measured: 6 % faster reading, but 12 of 100 LoCoMo answers changed, F1 -.017 (1.5B)


class LlamaCppLLM:
    """A GGUF instruction model through llama-cpp-python, chat template from the GGUF metadata."""

    def __init__(self, path: str | Path, options: ModelOptions | None = None):
        from ripplecli.runtime.gguf_info import check_instruct

        self.options = options or ModelOptions()
        self.info = check_instruct(path)
        self.path = Path(self.info.path)
        self.n_ctx = min(self.options.n_ctx, self.info.context_length or self.options.n_ctx)
        self.max_tokens = min(self.options.max_tokens, self.n_ctx // 2)
        self.last_usage: tuple[int, int] | None = None
        self.last_timing: dict[str, float] = {}  # llama.cpp's own prompt/generation timings of the last call
        self._grammars: dict[str, Any] = {}
        self._prefixes: dict[str, int] = {}  # fixed prompt prefixes held in the KV cache, by key: their tokens
        self._llama = self._load()

    def _load(self) -> Any:
        """The llama.cpp model; a file llama.cpp cannot read is a ModelError naming it."""
        try:
            import llama_cpp
        except ImportError:
            raise ModelError("llama-cpp-python is not installed (pip install 'ripplecli[llm]')") from None
        o = self.options
        try:
            with _model_params(llama_cpp, repack=o.repack):
                llama = llama_cpp.Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=o.n_threads or physical_cores(),
                    n_gpu_layers=o.n_gpu_layers,
                    flash_attn=o.flash_attn,
                    seed=o.seed,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"model {self.path}: llama.cpp cannot load it ({exc})") from None
        if not str(llama.chat_format or "").startswith("chat_template"):
            raise ModelError(f"model {self.path}: llama.cpp found no usable chat template in it")
        return llama

    @property
    def chat_format(self) -> str:
        """Which chat format llama.cpp applies ("chat_template.default": the GGUF's own)."""
        return str(self._llama.chat_format)

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` under this model's tokenizer."""
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def grammar(self, schema: dict[str, Any]) -> Any:
        """The schema compiled to a llama.cpp grammar, once per schema."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar

            if len(self._grammars) >= GRAMMAR_CACHE:  # per-window id enums make many schemas
                self._grammars.pop(next(iter(self._grammars)))
            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def generate_json(self, messages: Messages, schema: dict[str, Any]) -> dict[str, Any]:
        """A JSON object under the schema's grammar; cut or unparsable output raises LLMOutputError."""
        text = self._complete(messages, self.grammar(schema))
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LLMOutputError(f"invalid JSON ({exc.msg} at {exc.pos})", text) from None
        if not isinstance(data, dict):
            raise LLMOutputError("the reply is not a JSON object", text)
        return data

    def generate_text(self, messages: Messages) -> str:
        """Free text."""
        return self._complete(messages, None).strip()

    @property
    def name(self) -> str:
        """The model as a status line names it: its file name without the extension."""
        return self.path.stem

    def stream_text(self, messages: Messages) -> Iterator[str]:
        """Free text piece by piece as llama.cpp writes it (the caller may stop early); timings as _complete."""
        import llama_cpp

        llama_cpp.llama_perf_context_reset(self._llama.ctx)
        try:
            for chunk in self._chat(messages, stream=True):
                piece = chunk["choices"][0].get("delta", {}).get("content")
                if piece:
                    yield piece
        finally:
            self._record_timing(llama_cpp)

    def _chat(self, messages: Messages, **extra: Any) -> Any:
        """llama.cpp's chat completion at the configured temperature, seed and answer length."""
        return self._llama.create_chat_completion(
            messages=messages,
            temperature=self.options.temperature,
            seed=self.options.seed,
            max_tokens=self.max_tokens,
            **extra,
        )

    def _complete(self, messages: Messages, grammar: Any) -> str:
        """One chat completion at the configured temperature and seed; hitting max_tokens is an error."""
        import llama_cpp

        llama_cpp.llama_perf_context_reset(self._llama.ctx)
        out = self._chat(messages, grammar=grammar)
        self._record_timing(llama_cpp)
        usage = out.get("usage") or {}
        self.last_usage = (int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        if choice.get("finish_reason") == "length":
            raise LLMOutputError(f"generation hit max_tokens ({self.max_tokens})", text)
        return text

    def keep_prefix(self, probes: tuple[Messages, Messages]) -> int:
        """Hold the token prefix two prompts share (a fixed system prompt) in the KV cache, loaded from the saved
        state when a process before made it, else evaluated once and saved: a new `ripple ask` then evaluates only
        what follows the prefix. Returns the tokens held; 0 when the state cannot be kept (nothing breaks)."""
        key = self._prefix_key(probes)
        if key not in self._prefixes:
            from ripplecli.config import cache_home

            path = cache_home() / "llm-prefix" / f"{key}.state"
            try:
                self._prefixes[key] = self._load_prefix(path) or self._save_prefix(probes, path)
                prune_states(path.parent)
            except (OSError, RuntimeError, ValueError):
                self._prefixes[key] = 0
        return self._prefixes[key]

    def _prefix_key(self, probes: tuple[Messages, Messages]) -> str:
        """Names the saved state: the model file (path, size, date), the context and attention, llama.cpp's version and
        the prompts (a state saved with other attention does not load)."""
        import llama_cpp

        stat = self.path.stat()
        model = [str(self.path.resolve()), stat.st_size, stat.st_mtime_ns]
        facts = [*model, self.n_ctx, self.options.flash_attn, llama_cpp.__version__, probes]
        return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:24]

    def _load_prefix(self, path: Path) -> int:
        """The saved prefix state into the context; its tokens (0 when there is none or llama.cpp refuses it)."""
        import ctypes

        import llama_cpp

        if not path.exists():
            return 0
        tokens = (llama_cpp.llama_token * self.n_ctx)()
        count = ctypes.c_size_t(0)
        loaded = llama_cpp.llama_state_load_file(
            self._llama.ctx, str(path).encode(), tokens, self.n_ctx, ctypes.byref(count)
        )
        if not loaded:
            return 0
        os.utime(path)  # used now: pruning keeps the states in use
        held = int(count.value)
        self._llama.input_ids[:held] = tokens[:held]
        self._llama.n_tokens = held
        return held

    def _save_prefix(self, probes: tuple[Messages, Messages], path: Path) -> int:
        """Evaluate both probes (the second reuses the first's prefix), keep what they share and save it."""
        import llama_cpp

        seen = []
        for probe in probes:
            self._llama.create_chat_completion(messages=probe, max_tokens=1, temperature=0.0)
            seen.append(list(self._llama._input_ids))
        held = 0
        while held < min(map(len, seen)) and seen[0][held] == seen[1][held]:
            held += 1
        held -= 1  # the last shared token is evaluated again with what follows it
        if held <= 0 or not self._llama._ctx.kv_cache_seq_rm(-1, held, -1):
            return 0
        self._llama.n_tokens = held
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.tmp")
        tokens = (llama_cpp.llama_token * held)(*seen[1][:held])
        if not llama_cpp.llama_state_save_file(self._llama.ctx, str(temp).encode(), tokens, held):
            return held
        os.replace(temp, path)  # another process saving the same state at once writes the same bytes
        return held

    def _record_timing(self, llama_cpp: Any) -> None:
        """llama.cpp's own counts of the last call: prompt tokens it evaluated (a cached prefix is not), generated."""
        perf = llama_cpp.llama_perf_context(self._llama.ctx)
        self.last_timing = {
            "prompt_ms": perf.t_p_eval_ms,
            "prompt_tokens": perf.n_p_eval,
            "gen_ms": perf.t_eval_ms,
            "gen_tokens": perf.n_eval,
        }

    def close(self) -> None:
        """Free the model's memory now rather than at garbage collection."""
        self._llama.close()


def prune_states(folder: Path, keep: int = KEEP_STATES) -> None:
    """Delete all but the `keep` most recently used prefix states: every other model, prompt or llama.cpp version
    leaves one behind (~14 MB for a 1.5B), and none is read again once the prompt or the model changes."""
    states = sorted(folder.glob("*.state"), key=lambda f: f.stat().st_mtime_ns, reverse=True)
    for stale in states[keep:]:
        stale.unlink(missing_ok=True)


def physical_cores(cpuinfo: str | None = None) -> int | None:
    """Threads for generating: one per physical core this process may use. llama-cpp-python's own default, half the
    logical CPUs, assumes two threads a core and gives a 2-core machine without them one thread (measured: the 1.5B
    generates 4.5 tokens/s on 1 thread, 7.5 on 2, on 2 cores). None where the cores are unknown (its default)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return None
    fields = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in cpuinfo.splitlines())}
    try:
        per_core = int(fields["siblings"]) // int(fields["cpu cores"])
    except (KeyError, ValueError, ZeroDivisionError):
        return None
    return max(1, (usable or 1) // max(1, per_core))


@contextlib.contextmanager
def _model_params(llama_cpp: Any, repack: bool) -> Iterator[None]:
    """Llama() takes no `use_extra_bufts`; set it on the default model params while one model loads."""
    low = llama_cpp.llama_cpp
    original = low.llama_model_default_params

    def params() -> Any:
        value = original()
        value.use_extra_bufts = repack
        return value

    with _LOAD_LOCK:
        low.llama_model_default_params = params
        try:
            yield
        finally:
            low.llama_model_default_params = original


def with_enum(schema: dict[str, Any], path: tuple[str, ...], values: list[Any]) -> dict[str, Any]:
    """A copy of `schema` whose node at `path` accepts only `values`: the grammar then cannot cite a foreign id."""
    narrowed = json.loads(json.dumps(schema))
    node = narrowed
    for key in path:
        node = node[key]
    node.clear()
    node["enum"] = list(values)
    return narrowed
