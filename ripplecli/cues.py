"""Cue keys shared by ingest and query: the same normalisation on both sides, no NLP model needed."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
    down during each else ever few for from further get gets got had hadn't has hasn't have haven't having he
    he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is
    isn't it it's its itself just let's like me might more most much must mustn't my myself no nor not now of
    off on once only or other ought our ours ourselves out over own quite really same shan't she she'd she'll
    she's should shouldn't so some such than that that's the their theirs them themselves then there there's
    these they they'd they'll they're they've this those through to too under until up upon us very was wasn't
    we we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom
    why why's will with won't would wouldn't yeah yes you you'd you'll you're you've your yours yourself
    yourselves oh hey hi hello wow okay ok thanks thank lot lots one ones thing things something anything
    everything nothing way ways time times day days kind sort bit really pretty sure great good nice awesome
    amazing cool glad happy love loved lovely totally definitely always never maybe though still even just
    many well back go going went gone make made makes making know knew think thought feel felt see saw seen
    say said tell told want wanted take took come came look looking looks mean means keep kept
    """.split()
)

# Chinese, Japanese and Korean script: written without spaces between words (Korean with spaces between phrases).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_LETTERS = "a-z0-9\u00df-\u00f6\u00f8-\u00ff\u0100-\u024f\u0370-\u03ff\u0400-\u04ff"  # Latin, Greek, Cyrillic
# What _token_pattern matches in ASCII text (no CJK, no other letters, no ’): text that is ASCII once lower-cased,
# most questions and turns, is split by this one instead, so the script-wide classes (compiled in ~4 ms, each code
# point of their ranges marked one by one) are compiled only when a text needs them.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
TOKENIZER_VERSION = 2  # bump when tokens change: saved BM25 indexes of another version are rebuilt
# Words that name a time relative to when they are said. "Yesterday" in a memory said in June is a day in June, not
# the day before a question asked in March: in a question they are its time range (recall.query), never a word to
# match against memories (the lexical and dense views, the typed answer's cues).
# Each with the calendar unit it names and how many of them back from the day it is said.
RELATIVE_TIMES: dict[str, tuple[str, int]] = {
    "yesterday": ("day", -1),
    "today": ("day", 0),
    "last week": ("week", -1),
    "this week": ("week", 0),
    "last month": ("month", -1),
    "this month": ("month", 0),
    "last year": ("year", -1),
    "this year": ("year", 0),
}
_RELATIVE_TIME = re.compile(r"\b(?:" + "|".join(RELATIVE_TIMES).replace(" ", r"\s+") + r")\b", re.I)


@functools.cache
def _token_pattern() -> re.Pattern[str]:
    """Word tokens of any script: a run of CJK characters, or of letters and digits with an apostrophe inside."""
    return re.compile(rf"[{_CJK}]+|[{_LETTERS}]+(?:['’][a-z]+)?")


@functools.cache
def _cjk_pattern() -> re.Pattern[str]:
    """A CJK character."""
    return re.compile(rf"[{_CJK}]")


def _is_cjk(token: str) -> bool:
    """Whether a token starts with a CJK character."""
    return not token.isascii() and _cjk_pattern().match(token) is not None


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens; apostrophes kept inside words so stopwords like "don't" match.

    A run of CJK characters becomes its overlapping character pairs (a single character stays itself): no
    segmenter is needed and a question shares pairs with a memory that says the same words."""
    lowered = text.lower()
    if lowered.isascii():
        return _ASCII_TOKEN.findall(lowered)
    tokens: list[str] = []
    for token in _token_pattern().findall(lowered):
        if _is_cjk(token):
            tokens += [token[i : i + 2] for i in range(len(token) - 1)] or [token]
        else:
            tokens.append(token.replace("’", "'"))
    return tokens


def naive_lemma(token: str) -> str:
    """Strip possessives and regular plurals; deliberately simple so query and ingest agree."""
    if token.endswith("'s"):
        token = token[:-2]
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 4 and token.endswith(("sses", "shes", "ches", "xes")):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def says_relative_time(text: str) -> bool:
    """Whether the text names a time relative to when it is said ("yesterday", "last week")."""
    return _RELATIVE_TIME.search(text) is not None


def without_relative_times(text: str) -> str:
    """The text without the times it names relative to when it is said (RELATIVE_TIMES), spaces closed up."""
    return " ".join(_RELATIVE_TIME.sub(" ", text).split()) if says_relative_time(text) else text


# The frame of a request for advice ("Can you recommend …", "Any tips for …", "What do you think?"). A person words
# every such request alike, so as words to match it finds their other requests, not what the advice should build on.
# measured: LongMemEval dev preference questions, the user's turn in the first 5: tuning half 9 -> 10 of 10, report
# half 6 -> 7 of 10; no LoCoMo dev question and no other LongMemEval dev question is worded so.
_REQUEST = re.compile(
    r"\b(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:recommend|suggest)\b"
    r"|\b(?:do\s+you\s+have\s+|have\s+you\s+got\s+)?any\s+(?:suggestions|recommendations|tips|ideas|advice)\b"
    r"|\b(?:what\s+)?do\s+you\s+think\b",
    re.I,
)


def without_request(text: str) -> str:
    """The text without the frame of a request for advice (_REQUEST), spaces closed up; the whole text when the
    frame is all it says ("What do you think?")."""
    if not _REQUEST.search(text):
        return text
    rest = " ".join(_REQUEST.sub(" ", text).split())
    return rest if content_tokens(rest) else text


def matched_text(question: str) -> str:
    """The words of a question recall matches: without its relative times ("yesterday" is its time range) and
    without a request's frame ("Can you recommend" is in every request the person made)."""
    return without_request(without_relative_times(question))


def content_tokens(text: str) -> list[str]:
    """Naive-lemmatised tokens with stopwords and one-letter tokens removed."""
    return [naive_lemma(t) for t in tokenize(text) if t not in STOPWORDS and (len(t) > 1 or _is_cjk(t))]


def cue_key(text: str) -> str:
    """The canonical key of a cue phrase ("Pottery classes" -> "pottery class")."""
    return " ".join(content_tokens(text))


def canonical_name(name: str) -> str:
    """Canonical person/location name: case-folded, inner whitespace collapsed, trimmed."""
    return " ".join(name.casefold().split())


def match_cues(text: str, vocabulary: Mapping[str, str], max_n: int = 4) -> list[str]:
    """Cue keys found in `text` by longest-first n-gram lookup in a form -> key vocabulary."""
    tokens = content_tokens(text)
    prefetch = getattr(vocabulary, "prefetch", None)  # a store-backed vocabulary reads all n-grams in one query
    if prefetch is not None:
        top = min(max_n, len(tokens))
        prefetch(" ".join(tokens[i : i + n]) for n in range(top, 0, -1) for i in range(len(tokens) - n + 1))
    found: list[str] = []
    used = [False] * len(tokens)
    for n in range(min(max_n, len(tokens)), 0, -1):
        for i in range(len(tokens) - n + 1):
            if any(used[i : i + n]):
                continue
            key = vocabulary.get(" ".join(tokens[i : i + n]))
            if key is not None:
                found.append(key)
                used[i : i + n] = [True] * n
    return list(dict.fromkeys(found))


def unique(items: Iterable[str]) -> list[str]:
    """Order-preserving de-duplication that drops empty strings."""
    return [x for x in dict.fromkeys(items) if x]
