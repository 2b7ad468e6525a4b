"""Words that appraise rather than name: a what-answer made only of them ("inspiring and emotional", "fun
activities", "a new team") says how something was found, not what it was, so the rules say "not sure" instead.

Measured on the LoCoMo dev split (2026-12-04): of the what/which answers this turns into "not sure", none shared a
word with the gold answer on the tuning half (6 of 6; conv-26, -30, -41, where the words were chosen) and 6 of 7 on
the held-out half (the seventh: "tasty soup" against "tasty soup with sage").
"""

from __future__ import annotations

import re

from ripplecli.answer.spans import POSITIVE
from ripplecli.cues import content_tokens

APPRAISAL = POSITIVE | frozenset(
    """inspiring inspired inspirational emotional interesting admirable nice cool awesome fantastic impact impactful
    heartwarming heartfelt meaningful special exciting glad proud grateful thankful thankfully tough hard busy
    particularly especially super pretty totally really truly real such much huge big small new old different
    ride journey way time thing things stuff something everything nothing lot lots bit blast kind sort
    difficult rough sad upset scary stressful crazy wild fine okay neat sweet cute tasty delicious yummy
    always never often sometimes lately recently""".split()
)
# A question that asks how someone felt or describes something (its answer is not read from the words: typed._how),
# and, wider, one that asks for any feeling or opinion: appraising words answer it.
_FEELING = r"feel|felt|feels|feeling|describe|described|describes"
ASKS_FEELING = re.compile(rf"\b(?:{_FEELING})\b", re.IGNORECASE)
_ASKS_APPRAISAL = re.compile(
    rf"\b(?:{_FEELING}|feelings|emotions?|reaction|react|think|thought|opinion|attitude|sentiment|impression|mood)\b",
    re.IGNORECASE,
)


def only_appraises(question: str, asked_words: set[str], span: str) -> bool:
    """Whether every content word a span adds to the question appraises (and the question asks for no feeling)."""
    if _ASKS_APPRAISAL.search(question):
        return False
    added = [word for word in content_tokens(span) if word not in asked_words]
    return bool(added) and all(word in APPRAISAL for word in added)
