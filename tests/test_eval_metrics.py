"""Metric functions of the evaluation against hand-computed cases, and evidence-id normalisation."""

from __future__ import annotations

import math

import pytest

from ripplecli.eval.locomo import normalise_evidence_id, resolve_evidence, split_evidence
from ripplecli.eval.metrics import (
    bleu1,
    budget_cut,
    evidence_recall,
    full_evidence,
    is_abstention,
    percentile,
    token_f1,
)
from ripplecli.eval.report import group_metrics

TURNS = [["D1:1"], ["D1:2", "D1:3"], ["D2:1"], ["D2:5"]]


def test_partial_evidence_recall_and_full_evidence() -> None:
    assert evidence_recall(["D1:3", "D2:5"], TURNS, 2) == 0.5
    assert full_evidence(["D1:3", "D2:5"], TURNS, 2) == 0.0
    assert evidence_recall(["D1:3", "D2:5"], TURNS, 4) == 1.0
    assert full_evidence(["D1:3", "D2:5"], TURNS, 4) == 1.0


def test_a_memory_from_several_turns_covers_each_of_them() -> None:
    assert evidence_recall(["D1:2", "D1:3"], TURNS, 2) == 1.0


def test_duplicate_gold_ids_count_once() -> None:
    assert evidence_recall(["D1:1", "D1:1", "D9:9"], TURNS, 4) == 0.5


def test_empty_evidence_list_and_empty_gold() -> None:
    assert evidence_recall(["D1:1"], [], 10) == 0.0
    with pytest.raises(ValueError):
        evidence_recall([], TURNS, 10)


def test_budget_cut_keeps_the_prefix_that_fits() -> None:
    assert budget_cut([10, 20, 30], 30) == 2
    assert budget_cut([10, 20, 30], 29) == 1
    assert budget_cut([40, 1], 30) == 0
    assert budget_cut([1, 2], 1500) == 2


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("D1:3", "D1:3"), ("D:11:26", "D11:26"), ("D30:05", "D30:5"), (" D2:7 ", "D2:7"), ("D", None), ("S1:2", None)],
)
def test_normalise_evidence_id(raw: str, expected: str | None) -> None:
    assert normalise_evidence_id(raw) == expected


def test_split_and_resolve_evidence() -> None:
    assert split_evidence(["D8:6; D9:17", "D1:1"]) == ["D8:6", "D9:17", "D1:1"]
    turn_ids = {"D8:6": "D8:6", "D9:17": "D9:17", "D11:26": "D11:26"}
    gold, unresolved = resolve_evidence(["D8:6; D9:17", "D:11:26", "D8:6", "D", "D40:1"], turn_ids)
    assert gold == ["D8:6", "D9:17", "D11:26"]
    assert unresolved == ["D", "D40:1"]


def test_token_f1_is_set_based_and_ignores_case_and_punctuation() -> None:
    assert token_f1("Pepper!", "pepper") == 1.0
    assert token_f1("a dog called Pepper [m3]", "Pepper") == pytest.approx(2 * 0.25 * 1 / 1.25)
    assert token_f1("the the cat", "the cat") == 1.0
    assert token_f1("", "cat") == 0.0


def test_bleu1_clips_counts_and_penalises_brevity() -> None:
    assert bleu1("the the the", "the cat sat") == pytest.approx(1 / 3 * math.exp(0))
    assert bleu1("cat", "the cat sat") == pytest.approx(math.exp(1 - 3))
    assert bleu1("the cat sat on", "the cat sat") == 0.75
    assert bleu1("", "cat") == 0.0


def test_percentile_interpolates() -> None:
    assert percentile([1, 2, 3, 4], 0.5) == 2.5
    assert percentile([5], 0.95) == 5
    assert percentile([], 0.5) == 0.0


def test_abstention() -> None:
    assert is_abstention("")
    assert is_abstention("That is not mentioned in the conversation.")
    assert not is_abstention("She baked a lemon cake. [m7]")


def test_group_metrics_means_over_questions_and_skips_questions_without_gold() -> None:
    def record(gold: list[str], turns: list[list[str]], tokens: list[int]) -> dict:
        return {"gold": gold, "source_turns": turns, "tokens": tokens, "seconds": 0.01, "category": 1}

    records = [
        record(["D1:1", "D2:1"], [["D1:1"], ["D2:1"]], [1000, 1000]),  # budget 1500 keeps 1 memory: recall .5
        record(["D1:3"], [["D9:9"]] * 12 + [["D1:3"]], [10] * 13),  # found at rank 13: missed at 10, found at 30
        record([], [["D1:1"]], [5]),  # no resolvable gold: not scored
    ]
    metrics = group_metrics(records, [10, 30], 1500)
    assert metrics["questions"] == 2 and metrics["asked"] == 3
    assert metrics["recall@10"] == 0.5 and metrics["full@10"] == 0.5
    assert metrics["recall@30"] == 1.0 and metrics["full@30"] == 1.0
    assert metrics["tokens@10"] == (2000 + 100) / 2
    assert metrics["recall@budget"] == (0.5 + 1.0) / 2
    assert metrics["full@budget"] == 0.5
