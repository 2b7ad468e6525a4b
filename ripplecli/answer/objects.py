"""What a question that ends on a preposition asks for: the words the evidence puts after the same word and
preposition. "What is Maya allergic to?" → "she's allergic to [shellfish], and it's a serious one"; "What is Jordan
training for?" → "training for [the Lakeshore 10K] in June".

The question's last word before the preposition is its anchor ("allergic", "training"); a clause answers when a
word sharing the anchor's stem is followed, at most two words on, by the same preposition. The object runs to the
clause's next punctuation or to a word that starts another clause ("because", "but", "which"…), and is kept short.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ripplecli.answer.phrases import stem
from ripplecli.answer.spans import is_duration
from ripplecli.cues import STOPWORDS

PREPOSITIONS = "to|for|in|of|about|with|from|on|at|into"
_ASKED = re.compile(rf"^\s*what\b.*?\b([A-Za-z][\w'-]*)\s+({PREPOSITIONS})\s*\?\s*$", re.IGNORECASE)
_OBJECT_END = re.compile(
    r"\s*[.;:!?,()\[\]]|\s+[-–—]\s+|\s+(?:because|but|which|who|since|so|when|while|though|although|until|if|"
    r"and (?:it|i|she|he|we|they|that|then|this)|after|before|is|was|are|were|has|have|had|will|would|can|could)\b",
    re.IGNORECASE,
)
OBJECT_WORDS = 8  # an object longer than this is a clause, not the thing asked for
BETWEEN = 2  # words allowed between the anchor and its preposition ("allergic [mostly] to", "training [hard] for")
_WORD = re.compile(r"[\w'-]+")
SAID_AS = {"for": "(?:for|of)"}


@dataclass(frozen=True)
class AskedObject:
    """The anchor word's stem and the preposition a question ends on."""

    anchor: str
    preposition: str


# A time after the preposition names when, not what: "What has John been blogging about [recently]?", "What did Maria
# participate in [last weekend before April 10, 2023]?".
_TIME_TAIL = re.compile(
    r"\s+(?:(?:(?:as mentioned\s+)?(?:on|in|before|after|during|around)\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+)?"
    r"[A-Z][a-z]+,?\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?\d{4}|recently|lately|currently|now|these days"
    r"|(?:last|this|next)\s+(?:week(?:end)?|month|year|summer|winter|spring|fall|autumn|night|friday|saturday|sunday))"
    r"\s*(?=\?)",
)


def asked_object(question: str, names: set[str]) -> AskedObject | None:
    """The anchor and preposition of "What is X <word> <preposition>?", or None (the word is a name or a
    little word: "What did Jon take a trip to Rome for?" asks why, not what comes after "Rome for"). Times at the
    end are read past."""
    while (tail := _TIME_TAIL.search(question)) is not None:
        question = question[: tail.start()] + question[tail.end() :]
    match = _ASKED.match(question)
    if match is None:
        return None
    word = match.group(1).lower()
    if word in STOPWORDS or word in names or match.group(1)[0].isupper():
        return None
    return AskedObject(stem(word), match.group(2).lower())


def object_after(asked: AskedObject, text: str, dropped: set[str]) -> str | None:
    """The object the text gives the anchor and its preposition, or None; one made only of the question's
    words (`dropped`) or little words answers nothing. What a thing is "for" may follow "of" ("a certificate of
    [completion of a degree]" to "What did John receive a certificate for?")."""
    preposition = SAID_AS.get(asked.preposition, asked.preposition)
    between = re.compile(rf"(?:\s+[\w'-]+){{0,{BETWEEN}}}?\s+{preposition}\s+", re.IGNORECASE)
    for word in _WORD.finditer(text):
        if stem(word.group().lower()) != asked.anchor:
            continue
        joined = between.match(text, word.end())
        if joined is None:
            continue
        words = _object_at(text, joined.end(), dropped)
        if words and not is_duration(" ".join(words)):
            return _joined(words)
    return None


def _object_at(text: str, at: int, dropped: set[str]) -> list[str] | None:
    """The words from `at` to the clause's next mark, when they are few enough to be a thing (OBJECT_WORDS) and one
    of them is neither a little word nor a dropped one (the question's own)."""
    words = _OBJECT_END.split(text[at:], maxsplit=1)[0].split()
    said = [w for w in words if w.lower().strip("'\"“”") not in STOPWORDS | dropped]
    return words if said and len(words) <= OBJECT_WORDS else None


def _joined(words: list[str]) -> str:
    """An object's words as its span, without quotes at the edges."""
    return " ".join(words).strip("'\"“” ")


# "What did Mel and her kids make …?" → "we all made [our own pots]": the thing a question's verb was done to.
_ASKED_DOING = re.compile(r"^\s*what\s+(?:did|does|do|has|have|had)\s+(.+?)\s*\?\s*$", re.IGNORECASE)
_NOUN_BEFORE = frozenset("a an the her his their my our your its this that these those".split())
# Irregular past forms of verbs chat questions ask with; regular ones share the base's stem ("painted", "hosts").
_PAST = {
    "make": "made",
    "see": "saw seen",
    "take": "took taken",
    "find": "found",
    "get": "got gotten",
    "give": "gave given",
    "buy": "bought",
    "bring": "brought",
    "build": "built",
    "write": "wrote written",
    "win": "won",
    "eat": "ate eaten",
    "meet": "met",
    "send": "sent",
    "teach": "taught",
    "learn": "learnt",
    "draw": "drew drawn",
    "grow": "grew grown",
    "sell": "sold",
    "wear": "wore worn",
    "sing": "sang sung",
    "begin": "began begun",
    "choose": "chose chosen",
    "hold": "held",
    "read": "read",
    "tell": "told",
    "say": "said",
    "lose": "lost",
    "catch": "caught",
    "keep": "kept",
}
# An object starts as a noun phrase does: a determiner, a possessive or a number ("made [our own pots]").
_DETERMINED = re.compile(
    r"(?:a|an|the|my|our|your|his|her|their|its|some|this|these|those|two|three|four|five|several|many|lots of"
    r"|(?:[A-Z][a-z]+ and )?[A-Z][a-z]+'s)\s",  # a restated "our": "Melanie and Caroline's own pots"
    re.IGNORECASE,
)
_NOT_VERBS = (STOPWORDS - frozenset(_PAST)) | frozenset("both all each".split())  # "make" is a cue stopword
_TOO_PLAIN = frozenset("do does did done be have has had say said think thought feel felt".split())


def asked_doing(question: str, dropped: set[str]) -> str | None:
    """The verb of "What did <subject> <verb> …?": the first word after the subject that is not a name, a little
    word or a noun after a determiner ("What did Mel and her kids [make] during …" → "make")."""
    match = _ASKED_DOING.match(question)
    if match is None:
        return None
    before = ""
    for word in match.group(1).split():
        token = word.lower().strip(",")
        if token in _TOO_PLAIN:
            return None  # "What did John do to help…": the doing is not named
        noun = before in _NOUN_BEFORE or before.endswith("'s")  # "her kids", "Gina's tattoo"
        if token.isalpha() and token not in _NOT_VERBS | dropped and not word[0].isupper() and not noun:
            return token
        before = token
    return None


def done_object(verb: str, text: str, dropped: set[str]) -> str | None:
    """What the text says the verb was done to: the words after a form of it ("made [our own pots]"), to the
    clause's next mark; None when they lead elsewhere ("made [for a local church]") or say nothing new."""
    forms = set(_PAST.get(verb, "").split())
    for word in _WORD.finditer(text):
        said = word.group().lower()
        if said not in forms and (stem(said) != stem(verb) or not said.startswith(verb[:3])):
            continue
        words = _object_at(text, word.end(), dropped)
        if words and _DETERMINED.match(" ".join(words) + " "):
            return _joined(words)
    return None
