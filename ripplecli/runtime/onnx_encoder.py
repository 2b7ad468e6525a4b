"""The default encoder: the model exported once to ONNX, run with onnxruntime (no torch on the query path)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ripplecli.config import cache_home, force_offline
from ripplecli.errors import ModelError
from ripplecli.files import read_json_object, replace_atomically, unusable_because
from ripplecli.runtime.encoders import model_dir, model_name
from ripplecli.runtime.onnx_session import open_session
from ripplecli.runtime.wordpiece import WordPiece, save_compact

log = logging.getLogger(__name__)

BATCH_SIZE = 16
BATCH_TOKENS = 16 * 64  # padded tokens per batch
FALLBACK_MAX_LENGTH = 512
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
HASH_CHUNK = 1 << 20
KEY_MEMO = "keys.json"  # model folder -> (file sizes and mtimes, content key)
COMPACT_TOKENIZER = "wordpiece.txt"  # beside the export: runtime/wordpiece.py


class OnnxEncoder:
    """Mean-pooled, L2-normalised sentence vectors identical to sentence-transformers', at a fraction of the load."""

    suffix = ""  # the int8 variant names itself apart: its vectors differ, so a store records which it used

    def __init__(self, model: str, *, few: bool = False) -> None:
        force_offline()
        folder = model_dir(model)
        _require_mean_pooling(folder)
        self.name = model_name(model) + self.suffix
        self.dim = int(_read_json(folder / "config.json")["hidden_size"])
        model_file = self.model_file(folder)
        self._model_file = model_file
        self._session = open_session(model_file, prepack=not few)
        self._one_thread: Any = None  # a session whose runs use one core (encode_sharing), opened on first use
        self._input_names = [node.name for node in self._session.get_inputs()]
        self._folder, self._compact = folder, model_file.with_name(COMPACT_TOKENIZER)  # in the export's cache folder
        self._wordpiece = WordPiece.load(self._compact, max_length(folder)) if few else None
        self._tokenizer = None if self._wordpiece is not None else self._real_tokenizer()
        self._pad_id = self._wordpiece.pad if self._wordpiece is not None else _pad_id(folder, self._tokenizer)

    @classmethod
    def for_few(cls, model: str) -> OnnxEncoder:
        """The encoder for a process that encodes a sentence or two (a one-shot ask), ~60 ms sooner: its session
        skips pre-packing the weights (onnx_session.open_session), and plain ASCII text is tokenized by the compact
        WordPiece copy (runtime/wordpiece.py) when one was saved, the real tokenizer loading only for other text.
        The unpacked kernels sum in another order, so vectors agree to ~1e-7, not bit for bit; on the dev split's
        999 questions every evidence list and typed answer came out the same."""
        return cls(model, few=True)

    def _real_tokenizer(self):
        """The model's fast tokenizer; a BERT-style one also leaves its compact copy for later one-shot asks."""
        tokenizer = _load_tokenizer(self._folder)
        if not self._compact.is_file():
            try:
                save_compact(tokenizer, _pad_id(self._folder, tokenizer), self._compact)
            except OSError as exc:  # a read-only cache: later asks load the real tokenizer
                log.debug("could not save the compact tokenizer %s: %s", self._compact, exc)
        return tokenizer

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text: by the compact WordPiece when it handles them all, else by the real tokenizer."""
        if self._wordpiece is not None:
            fast = [ids for text in texts if (ids := self._wordpiece.ids(text)) is not None]
            if len(fast) == len(texts):  # the compact tokenizer handled every text
                return fast
        if self._tokenizer is None:
            self._tokenizer = self._real_tokenizer()
        return [item.ids for item in self._tokenizer.encode_batch(list(texts))]

    def model_file(self, folder: Path) -> Path:
        """The ONNX file this encoder runs: the plain export."""
        return ensure_exported(folder)

    @classmethod
    def ready(cls, model: str) -> bool:
        """Whether loading needs no one-time work: the model's export (and any derived copy) is cached."""
        try:
            return cls.cached_file(exported_file(model_dir(model))).is_file()
        except (ModelError, OSError):
            return False

    @staticmethod
    def cached_file(exported: Path) -> Path:
        """The file this encoder runs, once made: the plain export."""
        return exported

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors in input order; texts are batched by token length so padding stays small."""
        return self._encode(texts, lambda: self._session)

    def encode_sharing(self, texts: Sequence[str], others_busy: threading.Event) -> np.ndarray:
        """`encode` beside another busy thread (an ingest's parsing): while `others_busy` is set each batch runs on a
        one-thread session, so the encoder and the parser take a core each. Three busy threads on two cores cost
        the encoder ~15% more CPU (2-core AMD EPYC VM, MiniLM beside spaCy) and an ingest is bound by its CPU. The
        batches are the same and a run's thread count does not change its sums: the vectors are identical."""
        return self._encode(texts, lambda: self._one_thread_session() if others_busy.is_set() else self._session)

    def warm_sharing(self) -> None:
        """Open the one-thread session now: a long-lived server's first write does not pay for it."""
        self._one_thread_session()

    def _one_thread_session(self) -> Any:
        """The session whose runs use one thread, opened the first time it is wanted (on one core, the usual one)."""
        if self._one_thread is None:
            single = (os.cpu_count() or 1) < 2
            self._one_thread = self._session if single else open_session(self._model_file, threads=1)
        return self._one_thread

    def _encode(self, texts: Sequence[str], session: Callable[[], Any]) -> np.ndarray:
        """Vectors in input order, each length batch run on the session `session()` gives at its start."""
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        token_ids = self._token_ids(texts)
        for rows in _length_batches([len(ids) for ids in token_ids]):
            vectors[rows] = self._encode_batch([token_ids[row] for row in rows], session())
        return vectors

    def _encode_batch(self, token_ids: list[list[int]], session: Any) -> np.ndarray:
        """Run one padded batch and pool it."""
        width = max(len(ids) for ids in token_ids)
        input_ids = np.full((len(token_ids), width), self._pad_id, dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, ids in enumerate(token_ids):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        (token_vectors,) = session.run(None, {name: feeds[name] for name in self._input_names})
        return _mean_pool_normalised(token_vectors, mask)


class OnnxInt8Encoder(OnnxEncoder):
    """Opt-in: the same export with its weights dynamically quantised to int8 (smaller file, faster on some CPUs)."""

    suffix = "-int8"

    def model_file(self, folder: Path) -> Path:
        """The quantised copy beside the plain export, made once."""
        return ensure_quantised(ensure_exported(folder))

    @staticmethod
    def cached_file(exported: Path) -> Path:
        """The quantised copy, once made."""
        return quantised_file(exported)


def quantised_file(exported: Path) -> Path:
    """Where the int8 copy of an export is cached."""
    return exported.with_name("model.int8.onnx")


def ensure_quantised(exported: Path) -> Path:
    """An int8 dynamic quantisation of an exported model, cached beside it."""
    target = quantised_file(exported)
    if not target.is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        log.info("quantising the encoder to int8 (once)…")
        logging.disable(logging.WARNING)  # the quantiser advises pre-processing on the root logger, on stderr
        try:
            replace_atomically(
                target, lambda temp: quantize_dynamic(exported, temp, weight_type=QuantType.QInt8, per_channel=True)
            )
        except (RuntimeError, ValueError, OSError) as exc:
            raise ModelError(f"could not quantise the encoder {exported} to int8: {exc}") from exc
        finally:
            logging.disable(logging.NOTSET)
    return target


def _length_batches(lengths: list[int]) -> Iterator[list[int]]:
    """Row numbers in runs of similar length, capped in count and in padded tokens (one long text stays apart)."""
    batch: list[int] = []
    for row in np.argsort(lengths, kind="stable").tolist():
        if batch and (len(batch) == BATCH_SIZE or (len(batch) + 1) * lengths[row] > BATCH_TOKENS):
            yield batch
            batch = []
        batch.append(row)
    if batch:
        yield batch


def exported_file(folder: Path) -> Path:
    """Where the ONNX export of this model's exact weights is cached."""
    return cache_home() / "encoders" / encoder_key(folder) / "model.onnx"


def ensure_exported(folder: Path) -> Path:
    """The cached ONNX file for this model's exact weights, exported on first use."""
    target = exported_file(folder)
    if not target.is_file():
        _make_cache_folder(target.parent)
        log.info("exporting the encoder to ONNX (once)…")
        from ripplecli.runtime.export_onnx import export_onnx

        try:
            export_onnx(folder, target)
        except ImportError as exc:
            raise ModelError(f"exporting the encoder to ONNX needs torch and transformers ({exc})") from exc
        except (RuntimeError, ValueError, OSError) as exc:
            raise ModelError(f"could not export the encoder {folder} to ONNX: {exc}") from exc
    return target


def _make_cache_folder(folder: Path) -> None:
    """The export's cache folder, or one line saying why there can be none (before torch is even imported)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a read-only disk, a file where a folder should be, a folder of someone else's
        raise ModelError(
            f"encoder cache {cache_home()}: cannot write it: {unusable_because(folder, exc)}; set RIPPLE_CACHE to a "
            "folder you can write"
        ) from None


def encoder_key(folder: Path) -> str:
    """A content hash of the weights and tokenizer, so a changed model never reuses a stale export."""
    files = [path for path in (*(folder / name for name in WEIGHT_FILES), folder / "tokenizer.json") if path.is_file()]
    stamp = [[path.name, path.stat().st_size, path.stat().st_mtime_ns] for path in files]
    memo_file = cache_home() / "encoders" / KEY_MEMO
    memo = read_json_object(memo_file) or {}  # absent or damaged: the memo is only a shortcut
    entry = memo.get(str(folder.resolve()))
    if entry and entry.get("stamp") == stamp:  # hashing 90 MB costs ~0.1 s on every query otherwise
        return entry["key"]
    key = _hash_files(files)
    memo[str(folder.resolve())] = {"stamp": stamp, "key": key}
    _write_memo(memo_file, memo)
    return key


def _hash_files(files: list[Path]) -> str:
    """sha256 over the files' names and bytes, first 16 hex digits."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            while chunk := handle.read(HASH_CHUNK):
                digest.update(chunk)
    return digest.hexdigest()[:16]


def max_length(folder: Path) -> int:
    """The truncation length sentence-transformers uses for this model."""
    st_config = folder / "sentence_bert_config.json"
    if st_config.is_file():
        return int(_read_json(st_config)["max_seq_length"])
    positions = _read_json(folder / "config.json").get("max_position_embeddings", FALLBACK_MAX_LENGTH)
    return min(int(positions), FALLBACK_MAX_LENGTH)


def _require_mean_pooling(folder: Path) -> None:
    """Refuse models whose sentence-transformers pipeline is more than a transformer + mean pooling."""
    modules_file = folder / "modules.json"
    if not modules_file.is_file():
        return
    for module in _read_json(modules_file):
        kind = module["type"].rsplit(".", 1)[-1]
        if kind not in {"Transformer", "Pooling", "Normalize"} or (
            kind == "Pooling" and not _pools_by_mean(_read_json(folder / module["path"] / "config.json"))
        ):
            raise ModelError(
                f"the onnx encoder supports only mean pooling ({folder} uses {kind}); "
                "use the sentence-transformers backend"
            )


def _pools_by_mean(config: dict) -> bool:
    """True when a Pooling config enables mean pooling and nothing else."""
    if "pooling_mode" in config:
        return config["pooling_mode"] == "mean"
    enabled = {key for key, value in config.items() if key.startswith("pooling_mode") and value is True}
    return enabled == {"pooling_mode_mean_tokens"}


def _load_tokenizer(folder: Path):
    """The model's fast tokenizer, truncating like sentence-transformers and leaving padding to us."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length(folder))
    tokenizer.no_padding()
    return tokenizer


def _pad_id(folder: Path, tokenizer) -> int:
    """The id of the model's padding token (0 for BERT-style vocabularies)."""
    config_file = folder / "tokenizer_config.json"
    pad_token = _read_json(config_file).get("pad_token") if config_file.is_file() else None
    if isinstance(pad_token, dict):
        pad_token = pad_token.get("content")
    pad_id = tokenizer.token_to_id(pad_token) if isinstance(pad_token, str) else None
    return pad_id if pad_id is not None else 0


def _mean_pool_normalised(token_vectors: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Average the real tokens' vectors, then scale each sentence vector to unit length."""
    weights = mask[:, :, None].astype(np.float32)
    pooled = (token_vectors * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _write_memo(path: Path, value: dict) -> None:
    """Best-effort atomic write of the key memo; a failure only costs a re-hash next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, lambda temp: temp.write_text(json.dumps(value), encoding="utf-8"))
    except OSError:
        log.debug("could not write %s", path)


def _read_json(path: Path):
    """Parse a JSON file of the model folder."""
    return json.loads(path.read_text(encoding="utf-8"))
