"""First/second-person words rewritten to names, so a restatement reads the same out of its chat."""

from __future__ import annotations

import re

# Lower-cased phrase (straight apostrophes, single spaces) -> replacement; {me} is the speaker,
# {you} the other party and {we} both of them. Verb agreement is fixed only where it is cheap and sure.
_FIRST_PERSON = {
    "am i": "is {me}",
    "i'm": "{me} is",
    "i am": "{me} is",
    "i've": "{me} has",
    "i have": "{me} has",
    "i'll": "{me} will",
    "i'd": "{me} would",
    "i don't": "{me} doesn't",
    "i do": "{me} does",
    "i": "{me}",
    "me": "{me}",
    "myself": "{me}",
    "my": "{me}'s",
    "mine": "{me}'s",
}
_SECOND_PERSON = {
    "are you": "is {you}",
    "aren't you": "isn't {you}",
    "were you": "was {you}",
    "weren't you": "wasn't {you}",
    "have you": "has {you}",
    "haven't you": "hasn't {you}",
    "do you": "does {you}",
    "don't you": "doesn't {you}",
    "you're": "{you} is",
    "you are": "{you} is",
    "you were": "{you} was",
    "you've": "{you} has",
    "you have": "{you} has",
    "you'll": "{you} will",
    "you'd": "{you} would",
    "you don't": "{you} doesn't",
    "you": "{you}",
    "yourself": "{you}",
    "yourselves": "{you}",
    "your": "{you}'s",
    "yours": "{you}'s",
    "we're": "{we} are",
    "we've": "{we} have",
    "we'll": "{we} will",
    "we'd": "{we} would",
    "we": "{we}",
    "us": "{we}",
    "ourselves": "{we}",
    "our": "{we}'s",
    "ours": "{we}'s",
}
_REPLACEMENTS = _FIRST_PERSON | _SECOND_PERSON


def _phrase_pattern(phrase: str) -> str:
    """A regex for one phrase: any run of spaces between words, straight or curly apostrophes."""
    words = [re.escape(word).replace("'", "['’]") for word in phrase.split()]
    return r"\s+".join(words)


_ALTERNATIVES = "|".join(_phrase_pattern(p) for p in sorted(_REPLACEMENTS, key=len, reverse=True))
# Not inside a word ("Illinois", "determine"), not an initialism ("i.e.", "U.S."), not hyphenated.
_PRONOUN = re.compile(rf"(?<![\w'’])(?:{_ALTERNATIVES})(?![\w'’]|[.\-]\w)", re.IGNORECASE)
_KEEP_AS_IS = frozenset({"US", "ME"})  # the country, the state
_DETERMINER_BEFORE = re.compile(r"\b(?:a|the|this|that|gold|coal|salt|diamond)\s+$", re.IGNORECASE)


def _normalise(phrase: str) -> str:
    """The dictionary key of a matched phrase."""
    return " ".join(phrase.lower().replace("’", "'").split())


def resolve_references(text: str, speaker: str, other: str | None) -> str:
    """Rewrite I/me/my to the speaker and, in a two-party chat (`other` given), you/we to names."""
    names = {"me": speaker, "you": other, "we": f"{speaker} and {other}"}

    def replace(match: re.Match[str]) -> str:
        found = match.group(0)
        template = _REPLACEMENTS[_normalise(found)]
        if found in _KEEP_AS_IS or (other is None and "{me}" not in template):
            return found
        if (found == "i" and not _is_lowercase_pronoun(match)) or _is_noun_mine(match):
            return found
        resolved = template.format(**names)
        return resolved[0].upper() + resolved[1:] if found[0].isupper() else resolved

    return _PRONOUN.sub(replace, text)


def _is_lowercase_pronoun(match: re.Match[str]) -> bool:
    """A bare lower-case "i" is the pronoun only between spaces or at the text's edges (chat typing)."""
    text, start, end = match.string, match.start(), match.end()
    before_ok = start == 0 or text[start - 1].isspace()
    after_ok = end == len(text) or text[end].isspace() or text[end] in ",!?"
    return before_ok and after_ok


def _is_noun_mine(match: re.Match[str]) -> bool:
    """The noun in "the mine" or "a gold mine" is not the possessive pronoun."""
    is_mine = match.group(0).lower() == "mine"
    return is_mine and _DETERMINER_BEFORE.search(match.string, 0, match.start()) is not None
