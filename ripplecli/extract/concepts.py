"""Cue concepts of a memory (docs/method.md, write phase): the keys that link memories through shared cue nodes.

Keys are made with `cues.cue_key` so the query side, which has no spaCy, finds them by plain lookup;
each key also records the cue_key of every surface and lemma form seen, for the form -> key vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ripplecli.cues import STOPWORDS, content_tokens
from ripplecli.extract.timeparse import MONTHS, WEEKDAYS

MAX_CONCEPTS = 12
NAME_ENTITIES = frozenset(
    {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
)
# Dates and quantities are time or noise, not topics: time has its own field in the memory.
NON_TOPIC_ENTITIES = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY", "PERCENT", "QUANTITY"})
# Time words, also where NER did not run: "last week" must not link every memory that says "week".
TIME_WORDS = frozenset(
    {*WEEKDAYS, *MONTHS, *"yesterday today tonight tomorrow week weekend month year day night morning".split()}
    | {"afternoon", "evening", "ago", "summer", "winter", "spring", "autumn"}
)
CAPTION_MARKUP = frozenset({"image"})  # the "[image: ...]" tag that readers put around photo captions
# Adjectives ("great", "perfect") linked unrelated memories: dropping them measured +0.5 pts full@30 on dev.
KEYWORD_POS = frozenset({"NOUN", "PROPN", "VERB"})
EDGE_POS = frozenset({"DET", "PRON", "PUNCT", "NUM", "PART", "CCONJ", "ADP", "SYM", "SPACE", "AUX", "INTJ"})


class ConceptCollector:
    """Accumulates concept keys in priority order, with the forms each key was seen as."""

    def __init__(self, speakers: Iterable[str]) -> None:
        self.speaker_tokens = frozenset(token for speaker in speakers for token in content_tokens(speaker))
        self.blocked = self.speaker_tokens | CAPTION_MARKUP
        self.forms: dict[str, list[str]] = {}

    def key_of(self, text: str) -> str:
        """cue_key of a phrase, minus blocked tokens (the conversation's own speakers)."""
        return " ".join(t for t in content_tokens(text) if t not in self.blocked)

    def is_nickname(self, token: Any) -> bool:
        """A capitalised start of a speaker's name ("Mel" for Melanie): a speaker, not a topic."""
        text = token.text
        return text[:1].isupper() and len(text) >= 3 and any(n.startswith(text.lower()) for n in self.speaker_tokens)

    def add(self, span: Sequence[Any]) -> None:
        """Record a cue from spaCy tokens: keyed by their lemmas, findable by surface or lemma form."""
        tokens = [token for token in span if not self.is_nickname(token)]
        lemma_key = self.key_of(" ".join(t.lemma_.lower() for t in tokens))
        if len(lemma_key) < 2 or lemma_key.replace(" ", "").isdigit():
            return
        forms = self.forms.setdefault(lemma_key, [])
        for form in (self.key_of(" ".join(t.text.lower() for t in tokens)), lemma_key):
            if len(form) > 1 and form not in forms:
                forms.append(form)

    def result(self, limit: int = MAX_CONCEPTS) -> tuple[list[str], dict[str, list[str]]]:
        """The first `limit` concepts and their forms."""
        keys = list(self.forms)[:limit]
        return keys, {key: self.forms[key] for key in keys}


def _is_edge_noise(token: Any) -> bool:
    """Words that may wrap a noun chunk but say nothing about its topic ("my", "the", "two")."""
    return token.pos_ in EDGE_POS or token.is_stop or token.lower_ in STOPWORDS or _is_time(token)


def _is_time(token: Any) -> bool:
    """Part of a date or a quantity, or a time word."""
    return token.ent_type_ in NON_TOPIC_ENTITIES or token.lower_ in TIME_WORDS or token.lemma_ in TIME_WORDS


def trimmed_chunk(chunk: Sequence[Any]) -> list[Any]:
    """A noun chunk without determiners, pronouns, numbers and stopwords at its edges."""
    tokens = list(chunk)
    while tokens and _is_edge_noise(tokens[0]):
        tokens.pop(0)
    while tokens and _is_edge_noise(tokens[-1]):
        tokens.pop()
    return tokens


def proper_noun_spans(doc: Any) -> list[list[Any]]:
    """Named entities that name things, then runs of proper nouns that NER missed."""
    spans = [list(ent) for ent in doc.ents if ent.label_ in NAME_ENTITIES]
    covered = {token.i for span in spans for token in span}
    run: list[Any] = []
    for token in [*doc, None]:
        if token is not None and token.pos_ == "PROPN" and token.i not in covered:
            run.append(token)
            continue
        if run:
            spans.append(run)
        run = []
    return spans


def noun_compounds(doc: Any) -> list[list[Any]]:
    """Runs of two or more common nouns ("adoption agencies"), which the parser can leave out of chunks."""
    runs: list[list[Any]] = [[]]
    for token in doc:
        if token.pos_ == "NOUN" and not _is_time(token):
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if len(run) > 1]


def _is_keyword(token: Any) -> bool:
    """A content word worth a cue node on its own."""
    return token.pos_ in KEYWORD_POS and not token.is_stop and token.lower_ not in STOPWORDS and not _is_time(token)


def extract_concepts(
    doc: Any, speakers: Iterable[str], limit: int = MAX_CONCEPTS
) -> tuple[list[str], dict[str, list[str]]]:
    """Concept keys of a parsed turn (proper nouns, noun chunks and compounds, keywords) and their forms."""
    collector = ConceptCollector(speakers)
    for span in proper_noun_spans(doc):
        collector.add(span)
    for chunk in doc.noun_chunks:
        collector.add(trimmed_chunk(chunk))
    for compound in noun_compounds(doc):
        collector.add(compound)
    for token in doc:
        if _is_keyword(token):
            collector.add([token])
    return collector.result(limit)
