"""BERT's uncased WordPiece in plain Python, for plain ASCII text: a one-shot ask tokenizes its question without
loading the `tokenizers` library and parsing its ~0.7 MB tokenizer.json (~25 ms of a ~0.3 s cold ask).

It handles only what is simple to match exactly: printable ASCII and whitespace, for a tokenizer whose pipeline is
BERT's uncased one (checked when the compact copy is written). There the normaliser only drops control characters,
turns whitespace into spaces and lowercases; the pre-tokenizer splits on spaces and isolates punctuation; WordPiece
takes the longest vocabulary entry at each step ("##" inside a word), a word it cannot cover or longer than its
limit is one unknown token; [CLS] and [SEP] go around the result, cut to the model's length. Any other text (an
accent, an emoji, a special token written out) returns None and the caller uses the real tokenizer, which the tests
check this one against.

The compact copy is a text file: one JSON line of settings, then the vocabulary, one token per line in id order.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

from ripplecli.files import replace_atomically

PUNCTUATION = frozenset(string.punctuation)  # every ASCII punctuation character: BERT isolates each one
# Printable ASCII and whitespace; the controls BERT's normaliser drops ('\v', '\f' and the rest) are left to the
# real tokenizer, as is everything beyond ASCII.
PLAIN = frozenset(string.printable) - {"\v", "\f"}
WHITESPACE = frozenset(" \t\n\r")


class WordPiece:
    """The compact tokenizer: ids for plain ASCII text, None for anything else."""

    def __init__(self, vocab: dict[str, int], settings: dict[str, Any], max_length: int) -> None:
        self.vocab = vocab
        self.unk = vocab[settings["unk"]]
        self.cls, self.sep = vocab[settings["cls"]], vocab[settings["sep"]]
        self.pad = int(settings["pad"])  # the id the encoder pads with, as it finds it without this copy
        self.prefix = settings["prefix"]
        self.max_chars = int(settings["max_chars"])
        self.specials = list(settings["specials"])  # added tokens: found in the raw text before anything else
        self.max_length = max_length

    @classmethod
    def load(cls, path: Path, max_length: int) -> WordPiece | None:
        """The compact copy at `path`, or None when it is missing or unreadable."""
        try:
            settings_line, _, words = path.read_text(encoding="utf-8").partition("\n")
            settings = json.loads(settings_line)
            vocab = {word: i for i, word in enumerate(words.split("\n"))}
            return cls(vocab, settings, max_length)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def ids(self, text: str) -> list[int] | None:
        """[CLS] word pieces [SEP], cut to the model's length; None for text this tokenizer does not handle."""
        lowered = text.lower()
        if not PLAIN.issuperset(text) or any(special.lower() in lowered for special in self.specials):
            return None
        pieces: list[int] = []
        for word in _words(lowered):
            pieces += self._pieces(word)
        return [self.cls, *pieces[: self.max_length - 2], self.sep]

    def _pieces(self, word: str) -> list[int]:
        """Greedy longest-match-first WordPiece of one word; a word it cannot cover is one unknown token."""
        if len(word) > self.max_chars:
            return [self.unk]
        found: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                if piece in self.vocab:
                    found.append(self.vocab[piece])
                    break
                end -= 1
            if end == start:
                return [self.unk]
            start = end
        return found


def _words(text: str) -> list[str]:
    """BERT's pre-tokenizer on normalised ASCII: split on whitespace, each punctuation character a word of its own."""
    words: list[str] = []
    current: list[str] = []
    for char in text:
        if char in WHITESPACE or char in PUNCTUATION:
            if current:
                words.append("".join(current))
                current = []
            if char in PUNCTUATION:
                words.append(char)
        else:
            current.append(char)
    if current:
        words.append("".join(current))
    return words


def save_compact(tokenizer: Any, pad_id: int, path: Path) -> bool:
    """Write the compact copy of a `tokenizers` tokenizer when its pipeline is BERT's uncased one; False if not."""
    config = json.loads(tokenizer.to_str())
    settings = _bert_uncased_settings(config, pad_id)
    if settings is None:
        return False
    vocab = config["model"]["vocab"]
    words = sorted(vocab, key=vocab.__getitem__)
    if [vocab[word] for word in words] != list(range(len(words))) or any("\n" in word for word in words):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(settings) + "\n" + "\n".join(words)
    replace_atomically(path, lambda temp: temp.write_text(text, encoding="utf-8"))
    return True


def _bert_uncased_settings(config: dict[str, Any], pad_id: int) -> dict[str, Any] | None:
    """The settings of a tokenizer.json whose pipeline is the one WordPiece above reproduces; else None."""
    normalizer, pre, model = config.get("normalizer") or {}, config.get("pre_tokenizer") or {}, config.get("model")
    post = config.get("post_processor") or {}
    if (
        normalizer.get("type") != "BertNormalizer"
        or not normalizer.get("lowercase")
        or not normalizer.get("clean_text")
    ):
        return None
    if pre.get("type") != "BertPreTokenizer" or not model or model.get("type") != "WordPiece":
        return None
    no_piece: dict[str, Any] = {}
    single = [next(iter(item.values()), no_piece).get("id") for item in post.get("single", [])]  # [CLS] A [SEP]
    if post.get("type") != "TemplateProcessing" or len(single) != 3 or single[1] != "A":
        return None
    specials = [token["content"] for token in config.get("added_tokens", [])]
    return {
        "unk": model["unk_token"],
        "prefix": model["continuing_subword_prefix"],
        "max_chars": model["max_input_chars_per_word"],
        "cls": single[0],
        "sep": single[2],
        "pad": pad_id,
        "specials": specials,
    }
