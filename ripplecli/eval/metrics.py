"""Pure metric functions (docs/evaluation.md): evidence coverage at K and at a token budget, LongMemEval's ranked
retrieval metrics, answer F1, BLEU-1, containment and preference rubrics."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ripplecli.cues import STOPWORDS, content_tokens
from ripplecli.timewords import MONTHS

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


def first_seen(groups: Iterable[Iterable[str]]) -> list[str]:
    """Ids in the order they first appear: sessions (or turns) ranked by the best memory that comes from them."""
    return list(dict.fromkeys(unit for group in groups for unit in group))


def recall_any(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when at least one gold id is among the first k (LongMemEval's recall_any@k)."""
    return float(not set(gold).isdisjoint(ranked[:k]))


def recall_all(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when every gold id is among the first k (LongMemEval's recall_all@k)."""
    return float(set(gold) <= set(ranked[:k]))


def ndcg(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Binary-gain NDCG@k discounted as LongMemEval's scorer does (rank 1 by 1, rank r > 1 by log2 r); the ideal
    ranking puts every gold id first."""
    wanted = set(gold)
    if not wanted:
        raise ValueError("NDCG needs at least one gold id")
    gains = [float(unit in wanted) for unit in ranked[:k]]
    return _dcg(gains) / _dcg([1.0] * min(len(wanted), k))


def _dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain with LongMemEval's discount."""
    return sum(gain / (math.log2(rank) if rank > 1 else 1.0) for rank, gain in enumerate(gains, start=1))


_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
_NUMBER_WORDS = {word: n for n, word in enumerate(f"{_UNITS} seventeen eighteen nineteen".split())}
_TENS = {word: 10 * n for n, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
_MONTHS = [max((name for name, n in MONTHS.items() if n == number), key=len) for number in range(1, 13)]  # in full
_MONTH_OF = {name: _MONTHS[number - 1] for name, number in MONTHS.items()}  # "sept" -> "september"
_ISO_DATE = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_US_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
_WORD = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+(?:'[^\W\d_]+)*")
_ARTICLES = frozenset({"a", "an", "the"})


def answer_words(text: str) -> list[str]:
    """An answer's words for containment: lower case without citations, punctuation or articles; numbers as digits
    ("twenty-five", "1,200", "7th"); dates month first ("7 May 2023", "the 7th of May, 2023", "2023-05-07" and
    "5/7/2023" all read `may 7 2023`)."""
    lowered = _CITATION.sub(" ", str(text)).lower()
    lowered = _ISO_DATE.sub(lambda m: _date_words(m[2], m[3], m[1]), lowered)
    lowered = _US_DATE.sub(lambda m: _date_words(m[1], m[2], m[3]), lowered)
    lowered = _ORDINAL.sub(r"\1", _THOUSANDS.sub("", lowered))
    words = [_MONTH_OF.get(word, word) for word in _WORD.findall(lowered) if word not in _ARTICLES]
    return _month_first(_as_digits(words))


def _date_words(month: str, day: str, year: str) -> str:
    """A numeric date as words in the one order answer_words uses (unchanged when it is no date)."""
    if not 1 <= int(month) <= 12 or not 1 <= int(day) <= 31:
        return f" {year} {month} {day} "
    return f" {_MONTHS[int(month) - 1]} {int(day)} {year} "


def _as_digits(words: list[str]) -> list[str]:
    """Number words as digits; a tens word followed by a unit is one number ("twenty five" -> 25)."""
    out: list[str] = []
    after_tens = False
    for word in words:
        if after_tens and 0 < _NUMBER_WORDS.get(word, 0) < 10:
            out[-1] = str(int(out[-1]) + _NUMBER_WORDS[word])
            after_tens = False
            continue
        after_tens = word in _TENS
        value = _TENS.get(word, _NUMBER_WORDS.get(word))
        out.append(word if value is None else str(value))
    return out


def _month_first(words: list[str]) -> list[str]:
    """`7 may` and `7 of may` as `may 7`."""
    out = list(words)
    for at, word in enumerate(out):
        if not (word.isdigit() and 1 <= int(word) <= 31):
            continue
        month_at = at + 2 if out[at + 1 : at + 2] == ["of"] else at + 1
        if month_at < len(out) and out[month_at] in _MONTHS:
            out[at : month_at + 1] = [out[month_at], word] + [""] * (month_at - at - 1)
    return [word for word in out if word]


def contains_answer(prediction: str, gold: str) -> float:
    """1.0 when the answer holds the gold answer's words in order, or the gold answer (often a long-form one:
    "30 days. 31 days (including the last day) is also acceptable.") holds the answer's and the answer says
    something (a number or a content word); numbers and dates normalised by answer_words."""
    said, wanted = answer_words(prediction), answer_words(gold)
    if not said or not wanted:
        return 0.0
    if _holds(said, wanted):
        return 1.0
    return float(_holds(wanted, said) and any(w[0].isdigit() or (len(w) > 1 and w not in STOPWORDS) for w in said))


def _holds(words: Sequence[str], part: Sequence[str]) -> bool:
    """Whether `part` occurs in `words` as a contiguous run."""
    size = len(part)
    return any(list(words[at : at + size]) == list(part) for at in range(len(words) - size + 1))


# The stock wording of LongMemEval's preference rubrics: not what the user's history names.
_RUBRIC_WORDS = frozenset(
    content_tokens(
        """user users prefer prefers preferred preferably would may might suggestion suggest suggesting response
        responses recommendation recommend recommending especially particularly specifically specific utilize
        utilizing utilizes previous previously mention mentioned mentions account consider considering acknowledge
        acknowledging build builds building existing current currently interest interests interested experience
        experiences appreciate tip tips idea ideas option options related focus include including offer offering
        highlight highlighting provide providing potential possibly also well take taking into upon similar
        aspect aspects general generic particular individual align aligned cater tailored based additionally"""
    )
)
_NEGATED = re.compile(r"\bnot\b|n't\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def rubric_terms(rubric: str, question: str, history: str | None = None) -> list[str]:
    """What a preference rubric ("The user would prefer suggestions of Sony-compatible gear… They may not prefer…")
    names as wanted: content words of its sentences that say nothing negative, less the question's own words and
    the rubrics' stock wording; with `history` (the question's evidence turns), only those the user's history names
    too ("sony", not "high", "quality"), unless that leaves none."""
    wanted = " ".join(s for s in _SENTENCE_END.split(rubric) if not _NEGATED.search(s))
    asked = set(content_tokens(question))
    terms = (w for w in content_tokens(wanted) if w not in asked and w not in _RUBRIC_WORDS and not w.isdigit())
    named = list(dict.fromkeys(terms))
    said = set(content_tokens(history or ""))
    return [w for w in named if w in said] or named


def rubric_share(answer: str, terms: Sequence[str]) -> float:
    """The share of a rubric's terms (rubric_terms) that an answer uses (0.0 for a rubric that names nothing)."""
    if not terms:
        return 0.0
    used = set(content_tokens(_CITATION.sub(" ", answer)))
    return sum(term in used for term in terms) / len(terms)
