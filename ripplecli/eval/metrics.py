"""Pure metric functions (docs/evaluation.md): evidence coverage at K and at a token budget, answer F1 and BLEU-1."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_PUNCTUATION = re.compile(r"[.,!?]")
_CITATION = re.compile(r"\[m\d+\]")


def covered_turns(source_turns: Sequence[Sequence[str]], k: int) -> set[str]:
    """Turn ids reached by the top-k memories (each memory may come from several turns)."""
    return {turn for turns in source_turns[:k] for turn in turns}


def evidence_recall(gold: Sequence[str], source_turns: Sequence[Sequence[str]], k: int) -> float:
    """Fraction of the distinct gold turns covered by the top-k memories."""
    wanted = set(gold)
    if not wanted:
        raise ValueError("evidence recall needs at least one gold turn")
    return len(wanted & covered_turns(source_turns, k)) / len(wanted)


def full_evidence(gold: Sequence[str], source_turns: Sequence[Sequence[str]], k: int) -> float:
    """1.0 when every gold turn is covered by the top-k memories (an answerable evidence set), else 0.0."""
    return float(evidence_recall(gold, source_turns, k) == 1.0)


def budget_cut(tokens: Sequence[int], budget: int) -> int:
    """How many ranked memories fit while their cumulative tokens stay within the budget."""
    total = 0
    for count, size in enumerate(tokens):
        total += size
        if total > budget:
            return count
    return len(tokens)


def normalise_answer(text: str) -> list[str]:
    """Lower-case words with `. , ! ?` removed and citation marks dropped, as the LoCoMo scorers do."""
    return _PUNCTUATION.sub("", _CITATION.sub("", str(text)).lower()).split()


def token_f1(prediction: str, gold: str) -> float:
    """Set-based token F1 between a generated answer and the gold answer."""
    predicted, wanted = set(normalise_answer(prediction)), set(normalise_answer(gold))
    common = len(predicted & wanted)
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, gold: str) -> float:
    """Clipped unigram precision times the brevity penalty."""
    predicted, wanted = normalise_answer(prediction), normalise_answer(gold)
    if not predicted or not wanted:
        return 0.0
    reference = Counter(wanted)
    clipped = sum(min(count, reference[word]) for word, count in Counter(predicted).items())
    brevity = 1.0 if len(predicted) > len(wanted) else math.exp(1 - len(wanted) / len(predicted))
    return brevity * clipped / len(predicted)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Linear-interpolated percentile (fraction in [0, 1]); 0.0 for no values."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = fraction * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; 0.0 for no values (an empty group reports zeros, with its count beside)."""
    return sum(values) / len(values) if values else 0.0


ABSTENTION_MARKERS = (
    "not mentioned",
    "no evidence",
    "no information",
    "not found",
    "not sure",
    "unknown",
    "i don't know",
)


def is_abstention(text: str | None) -> bool:
    """An empty or "not mentioned"-style answer: the right reply to an adversarial question."""
    cleaned = " ".join(normalise_answer(text or ""))
    return not cleaned or any(marker in cleaned for marker in ABSTENTION_MARKERS)
