"""The short phrase a what/which question wants, cut out of an evidence clause by string rules.

The clause loses the question's own words, the persons and the times at its edges ("Maria joined a gym last
week" → "joined a gym"); a question that asks for a named thing gets the phrase the clause names it with
("an LGBTQ+ counseling workshop" → "LGBTQ+ counseling workshop") or, for a book or a song, the quoted title.
"""

from __future__ import annotations

import re

from ripplecli.answer.spans import STOP_EDGE
from ripplecli.cues import STOPWORDS, naive_lemma
from ripplecli.extract.timeparse import FULL_MONTHS, WEEKDAYS

TIME_WORDS = frozenset(
    """last next this past week weekend night month year yesterday today tonight recently lately ago morning
    evening afternoon monday tuesday wednesday thursday friday saturday sunday few""".split()
)
_SUFFIX = re.compile(r"(?:ers|ing|ed|es|er|s|e)$")
_EDGE = re.compile(r"^[^\w\"“'+]+|[^\w\"”'+]+$")
_CAPTION = re.compile(r"^\[image:\s*(?:an?\s+)?(?:photo|photograph|photography|picture|image)\s+of\s+", re.IGNORECASE)
_AUX = r"(?:did|does|do|is|was|are|were|has|have|had|can|could|would|will|should|might|may)"
_ASKING = re.compile(
    rf"^\s*(?:\w+\s+){{0,2}}?(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?"
    rf"((?:(?!{_AUX}\b)[\w'+-]+\s+){{1,3}}?){_AUX}\b",
    re.IGNORECASE,
)
# "Which song motivates…", "Which outdoor gear company likely signed…": the noun before a verb in -s or -ed.
_WHICH_NOUN = re.compile(
    r"^\s*(?:in |on |at |to |from )?which\s+((?:[\w'-]+\s+){0,2}?[\w'-]+)\s+(?:\w+ly\s+)?[a-z]+(?:s|ed)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"\"[^\"]{2,80}\"|“[^”]{2,80}”")
_BY = re.compile(r"^\s*by\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})")
DETERMINERS = frozenset("another some any every each this that these those such other".split())
OPENERS = DETERMINERS | frozenset(
    """a an the to of in on at for with from by about into onto like my your his her their our its no two three
    four five several many few""".split()
)
MODIFIERS = 3  # words before the asked noun kept as its modifiers
_NUMBERED = re.compile(r"^(?:\d+|[A-Z]\d+|\d+[A-Z]|#\d+)[,.;:!?]?$")  # what names one of many: "room 7", "gate B12"


def bare(word: str) -> str:
    """A word as the rules compare it: lower-case, without punctuation at its edges."""
    return _EDGE.sub("", word.lower().replace("’", "'"))


def stem(token: str) -> str:
    """A crude shared stem so "moving", "movers" and "move" meet: a common ending off, then five letters."""
    return (_SUFFIX.sub("", token) if len(token) > 3 else token)[:5]


def trimmed(words: list[str], dropped: set[str]) -> list[str]:
    """The words without dropped ones (question words, persons, times, little words) at either edge."""
    start, end = 0, len(words)
    while start < end and bare(words[start]) in dropped:
        start += 1
    while end > start and bare(words[end - 1]) in dropped:
        end -= 1
    return words[start:end]


def answer_phrase(text: str, dropped: set[str]) -> str:
    """The clause without the question's words, persons, times and little words at its edges (a shared photo's
    caption without its "[image: a photo of …]" wrapper)."""
    text = _CAPTION.sub("", text).rstrip("]")
    words = trimmed(text.rstrip(" .!?").split(), dropped | STOP_EDGE | TIME_WORDS)
    return " ".join(words) or text


def is_caption(text: str) -> bool:
    """Whether a clause is a shared photo's caption ("[image: a photo of a dog on a beach]")."""
    return _CAPTION.match(text) is not None


def asked_noun(question: str) -> str | None:
    """The thing a what/which question asks for: "workshop" in "What workshop did Caroline attend?", "song" in
    "Which song motivates Caroline?"."""
    match = _ASKING.match(question) or _WHICH_NOUN.match(question)
    return match.group(1).split()[-1].lower() if match else None


def quoted(text: str) -> str | None:
    """A quoted title, with its author when one follows ("“Brave” by Sara Bareilles")."""
    match = _QUOTED.search(text)
    if not match:
        return None
    by = _BY.match(text[match.end() :])
    return f"{match.group(0)} by {by.group(1).strip()}" if by else match.group(0)


def noun_phrase(text: str, noun: str, dropped: set[str]) -> str | None:
    """The asked noun with the modifiers the text gives it ("an LGBTQ+ counseling workshop" → "LGBTQ+
    counseling workshop"); None when the text has the bare noun only or not at all."""
    words = text.rstrip(" .!?").split()
    wanted = naive_lemma(noun)
    stop = dropped | STOP_EDGE | DETERMINERS | STOPWORDS
    for i, word in enumerate(words):
        if naive_lemma(bare(word)) != wanted:
            continue
        start = i
        while start > 0 and i - start < MODIFIERS and bare(words[start - 1]) not in stop:
            if words[start - 1].endswith((",", ":", ";")):
                break
            start -= 1
        if start > 0 and start < i and bare(words[start - 1]) not in OPENERS:
            start += 1  # "is [trying] kundalini yoga": after a subject or an adverb the first word is a verb
        end = i + 1 + (i + 1 < len(words) and _NUMBERED.match(words[i + 1]) is not None)  # "room 7", "gate B12"
        if start < i or end > i + 1:
            return " ".join(words[start:end]).strip(",;:")
    return None


_FREQUENCY = re.compile(
    r"\b(?:(?:once|twice|(?:a few|a couple of|several|many|two|three|four|five|\d+) times)"
    r"(?:\s+or\s+(?:once|twice|\w+ times))?\s+(?:a|an|per|each|every)\s+\w+"
    r"|every (?:other )?(?:day|week|weekend|month|year|morning|night|evening)|daily|weekly|monthly|yearly"
    r"|on weekends|most days|every \w+day)\b",
    re.IGNORECASE,
)
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:(?:\s+&\s+|\s+)[A-Z][a-z]+)*")  # "Kyle", "Crumb & Co"
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s)$")


def frequency_span(text: str) -> str | None:
    """How often the text says something happens ("once or twice a year", "a few times a week")."""
    match = _FREQUENCY.search(text)
    return match.group(0) if match else None


def _opener(match: re.Match[str], text: str) -> bool:
    """A capitalised word that only opens a sentence ("Thanks", "Perfect"); a name of several words there is kept
    ("Crumb & Co. Get the cardamom buns.")."""
    return _SENTENCE_START.search(text, 0, match.start()) is not None and len(match.group(0).split()) == 1


# Capitalised, but a time: "took Biscuit to the dog beach on Sunday" names only Biscuit.
TIME_NAMES = frozenset({*WEEKDAYS, *FULL_MONTHS, "christmas", "easter"})


def _without_little_words(name: str) -> str:
    """A capitalised run without the little words that open it ("If John" → "John", "The Beatles" stays)."""
    words = name.split()
    while len(words) > 1 and words[0].lower() in STOPWORDS and words[0].lower() != "the":
        words.pop(0)
    return " ".join(words)


def names_in(text: str, known: set[str]) -> str:
    """The names the text gives that the question and its persons do not ("his name is Kyle" → "Kyle")."""
    named = (_without_little_words(m.group(0)) for m in _CAPITALISED.finditer(text) if not _opener(m, text))
    found = [name for name in named if name and name.lower().split()[0] not in known and name.lower() not in TIME_NAMES]
    return ", ".join(dict.fromkeys(found))


_NAMED = re.compile(r"\b(?:named|called|(?i:name is|name's))\s+([A-Z][\w'-]*(?:\s+(?:&\s+)?[A-Z][\w'-]*){0,3})")


def given_name(text: str) -> str | None:
    """The name a text gives something: "a greyhound named [Biscuit]", "his name is [Kyle]", "called [Crumb & Co]"."""
    found = _NAMED.search(text)
    return found.group(1) if found else None


_LEADING_NAME = re.compile(r"^\s*([A-Z][\w'-]*(?:\s+(?:&\s+)?[A-Z][\w'-]*){0,3})\s*(?:[.!,]|$)")


def reply_name(said: str, known: set[str]) -> str | None:
    """The name a reply to "What's its name?" gives: the name it opens with ("Pickle. She's grey"), not a reply's
    opener ("Thanks!"), else a name it says."""
    leading = _LEADING_NAME.match(said)
    if leading and leading.group(1).lower() not in STOP_EDGE | known:
        return leading.group(1)
    return names_in(said, known) or None
