"""The LongMemEval dev split: two disjoint halves covering the dev file, each question type cut in half."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest
from conftest import REPO

SPLIT = REPO / "eval" / "longmemeval-split.json"
DEV = REPO.parent / "shared" / "data" / "longmemeval-s-dev.json.gz"


def _kind(entry: dict[str, str]) -> str:
    return "abstention" if entry["question_id"].endswith("_abs") else entry["question_type"]


def test_halves_are_disjoint_and_even() -> None:
    split = json.loads(SPLIT.read_text())
    tuning, report = split["tuning"], split["report"]
    assert len(tuning) == len(set(tuning)) == len(report) == len(set(report)) == 80
    assert not set(tuning) & set(report)


@pytest.mark.skipif(not DEV.exists(), reason="the LongMemEval dev file sits beside a checkout, not in it")
def test_halves_cover_the_dev_file_type_by_type() -> None:
    split = json.loads(SPLIT.read_text())
    entries = {e["question_id"]: e for e in json.loads(gzip.decompress(DEV.read_bytes()))}
    assert set(entries) == set(split["tuning"]) | set(split["report"])
    tuning = Counter(_kind(entries[q]) for q in split["tuning"])
    report = Counter(_kind(entries[q]) for q in split["report"])
    assert all(abs(tuning[k] - report[k]) <= 1 for k in tuning | report)
