"""The item of a numbered list a question asks for by its place: "what was the 7th job in the list you provided?",
"what the fifth bottle was?". The list is the numbered lines of a turn ("7. Transcriptionist: …"); of the turns
holding such an item, the one carrying most of the question's words answers.
"""

from __future__ import annotations

import re

from ripplecli.answer.base import Answer
from ripplecli.answer.phrases import stem
from ripplecli.cues import content_tokens
from ripplecli.trace import Evidence

LOOK_AT = 10  # the evidence a list is looked for in
ORDINAL_WORDS = "first second third fourth fifth sixth seventh eighth ninth tenth".split()
_ORDINAL = re.compile(rf"\bthe (?:(\d{{1,3}})(?:st|nd|rd|th)|({'|'.join(ORDINAL_WORDS)}))\b", re.IGNORECASE)
_ITEM_END = re.compile(r"\s*(?::|\s-\s|\s–\s|\(|$)")
_MARKUP = re.compile(r"[*_`#]+")


def ordinal_answer(question: str, evidence: list[Evidence]) -> Answer | None:
    """The Nth item of the best-matching numbered list, or None when the question asks for no Nth item or no
    turn numbers that many."""
    asked = _ORDINAL.search(question)
    if asked is None:
        return None
    place = int(asked.group(1)) if asked.group(1) else ORDINAL_WORDS.index(asked.group(2).lower()) + 1
    cues = {stem(t) for t in content_tokens(question)}
    best: tuple[int, str, Evidence] | None = None
    for e in evidence[:LOOK_AT]:
        said = "\n".join(s.text for s in e.sources) or e.restatement
        item = _item(said, place)
        if item is None:
            continue
        carried = len(cues & {stem(t) for t in content_tokens(said)})
        if best is None or carried > best[0]:
            best = (carried, item, e)
    if best is None:
        return None
    _, item, e = best
    speaker = e.sources[0].speaker if e.sources else ""
    shown = f"{item} — item {place} of the list {speaker} gave [m{e.memory_id}]"
    return Answer("typed", shown, [e.memory_id], span=item)


def _item(text: str, place: int) -> str | None:
    """The words of line `place.` of a numbered list (up to its colon or dash), markup dropped."""
    line = re.search(rf"(?m)^\s*(?:[*-]\s*)?{place}[.)]\s+(.+)$", text)
    if line is None:
        return None
    words = _MARKUP.sub("", line.group(1)).strip()
    head = _ITEM_END.search(words)
    return (words[: head.start()] if head and head.start() > 0 else words).strip() or None
