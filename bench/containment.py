"""Answer-contains-gold / gold-contains-answer accuracy, numbers and dates normalised (issue 27 point 4).

`ripple eval longmemeval` (branch lme-eval) brings `ripplecli.eval.metrics.contains_answer`; the benches use it
when it is there and this stand-in until then, so that their figures compare once it lands.
"""

from __future__ import annotations

import re

from ripplecli.cues import STOPWORDS

try:  # the library's metric, once merged
    from ripplecli.eval.metrics import contains_answer as _library_contains  # type: ignore[attr-defined]
except ImportError:
    _library_contains = None

_MONTHS = "january february march april may june july august september october november december".split()
_SHORT = {m[:3]: m for m in _MONTHS} | {"sept": "september"}
_NUMBERS = {
    w: str(n)
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        " seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90"}
_NUMBERS |= {"once": "1", "twice": "2"}
_SCALES = {"hundred": 100, "thousand": 1000}
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_WORD = re.compile(r"\d+(?:\.\d+)?|[a-z]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lower-case words without citations, articles or punctuation; numbers as digits, months spelt out and each
    day-month pair month first ("7 May 2023", "May 7th, 2023" and "2023-05-07" all read may 7 2023)."""
    lowered = re.sub(r"\[m\d+\]", " ", text.lower())
    lowered = _ISO.sub(lambda m: f" {_month(m[2])} {int(m[3])} {m[1]} ", lowered)
    lowered = re.sub(r"(?<=\d),(?=\d{3}\b)", "", lowered)
    lowered = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", lowered)
    said = _combined([_NUMBERS.get(w, _SHORT.get(w, w)) for w in _WORD.findall(lowered) if w not in ("a", "an", "the")])
    for at in range(len(said) - 1):  # 7 may → may 7, 7 of may → may 7
        nxt = at + 2 if said[at + 1] == "of" and at + 2 < len(said) else at + 1
        if said[at].isdigit() and int(said[at]) <= 31 and said[nxt] in _MONTHS:
            said[at], said[nxt] = said[nxt], said[at]
            if nxt != at + 1:
                said[at + 1] = said[at + 1].replace("of", "")
    return [w for w in said if w]


def _month(number: str) -> str:
    """A month's number as its name (unchanged when it is none)."""
    return _MONTHS[int(number) - 1] if 0 < int(number) < 13 else number


def _combined(said: list[str]) -> list[str]:
    """Number words that make one number as its digits: "four hundred" → 400, "twenty five" → 25."""
    out: list[str] = []
    for word in said:
        last = out[-1] if out else ""
        if word in _SCALES and last.isdigit():
            out[-1] = str(int(last) * _SCALES[word])
        elif word.isdigit() and len(word) == 1 and last.isdigit() and int(last) % 10 == 0 and 20 <= int(last) < 100:
            out[-1] = str(int(last) + int(word))
        else:
            out.append(str(_SCALES[word]) if word in _SCALES else word)
    return out


def _within(whole: list[str], part: list[str]) -> bool:
    """Whether `part` is a contiguous run of `whole`."""
    return any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))


def contains_answer(prediction: str, gold: str) -> float:
    """1.0 when the answer holds the gold answer's words in order, or the gold answer holds the answer's and the
    answer says something (a number or a content word)."""
    if _library_contains is not None:
        return float(_library_contains(prediction, gold))
    said, wanted = words(prediction), words(gold)
    if not said or not wanted:
        return 0.0
    if _within(said, wanted):
        return 1.0
    says = any(w[0].isdigit() or (len(w) > 1 and w not in STOPWORDS) for w in said)
    return float(says and _within(wanted, said))
