"""The runner's checks, resume journal and query-vector cache, without ingesting anything."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ripplecli.errors import InputError
from ripplecli.eval.locomo import load_samples
from ripplecli.eval.runner import EvalConfig, Journal, QueryVectors, asked, prepare, store_dir

TINY = Path(__file__).parent / "fixtures" / "eval" / "locomo-tiny.json"


def _record(plan, sample, question, mode: str) -> dict:
    return {
        "conversation": sample.sample_id,
        "store": sample.content_hash[:12],
        "index": question.index,
        "question": question.text,
        "mode": mode,
    }


def test_prepare_resolves_modes_and_dates(tmp_path: Path) -> None:
    plan = prepare(EvalConfig(TINY, tmp_path / "out", conversations=["fix-b"], k=20, modes=["seeds", "seeds"]))
    assert plan.modes == ["seeds"] and plan.config.ks == [10, 20, 30]
    assert [s.sample_id for s in plan.samples] == ["fix-b"]
    assert plan.samples[0].as_of.isoformat() == "2022-08-28T16:30:00"
    assert len(asked(plan, plan.samples[0])) == 4  # category 5 only with answers
    assert store_dir(plan.config.out, plan.samples[0]).name.startswith("fix-b-")


def test_prepare_defaults_to_every_mode(tmp_path: Path) -> None:
    from ripplecli.recall.modes import MODES

    assert prepare(EvalConfig(TINY, tmp_path)).modes == list(MODES)


def test_journal_resumes_and_drops_a_cut_off_line(tmp_path: Path) -> None:
    plan = prepare(EvalConfig(TINY, tmp_path, modes=["seeds"]))
    sample = plan.samples[0]
    first, second = asked(plan, sample)[:2]
    journal = Journal(plan)
    journal.add("seeds", _record(plan, sample, first, "seeds"))
    journal.add("seeds", _record(plan, sample, second, "seeds"))
    journal.close()
    path = journal.path("seeds")
    path.write_text(path.read_text()[:-10])  # interrupted mid-write
    resumed = Journal(plan)
    assert resumed.has("seeds", sample, first) and not resumed.has("seeds", sample, second)
    resumed.add("seeds", _record(plan, sample, second, "seeds"))
    resumed.close()
    assert [json.loads(line).get("index") for line in path.read_text().splitlines()] == [None, 0, 1]


def test_journal_of_other_code_or_settings_is_discarded(tmp_path: Path) -> None:
    plan = prepare(EvalConfig(TINY, tmp_path, modes=["seeds"]))
    sample, question = plan.samples[0], plan.samples[0].questions[0]
    journal = Journal(plan)
    journal.add("seeds", _record(plan, sample, question, "seeds"))
    journal.close()
    other = prepare(EvalConfig(TINY, tmp_path, modes=["seeds"], answer="extractive"))
    assert other.fingerprint != plan.fingerprint
    assert not Journal(other).has("seeds", sample, question)


def test_query_vectors_encode_each_question_once() -> None:
    class Counting:
        name, dim, calls = "counting", 2, 0

        def encode(self, texts):
            self.calls += 1
            return np.ones((len(texts), 2))

    inner = Counting()
    cached = QueryVectors(inner)
    cached.encode(["q"])[0][0] = 5.0  # a caller changing its copy does not change the cache
    assert cached.encode(["q"])[0][0] == 1.0 and inner.calls == 1
    cached.encode(["a", "b"])
    assert inner.calls == 2


def test_evidence_of_the_fixture_is_resolved() -> None:
    samples = {s.sample_id: s for s in load_samples(TINY)}
    assert samples["fix-a"].questions[1].gold == ["D2:4"]  # "D2:04"
    assert samples["fix-a"].questions[2].gold == ["D1:6", "D2:4"]  # "D1:6; D2:4"
    assert samples["fix-b"].questions[1].gold == ["D1:3", "D2:3"]  # a duplicate id
    with pytest.raises(InputError):
        load_samples(TINY, ["fix-c"])


def test_questions_sample_is_fixed_and_per_category(tmp_path: Path) -> None:
    first = prepare(EvalConfig(TINY, tmp_path, modes=["seeds"], answer="typed", questions=1))
    again = prepare(EvalConfig(TINY, tmp_path, modes=["seeds"], answer="typed", questions=1))
    assert first.chosen == again.chosen and first.chosen is not None
    asked_now = [q for s in first.samples for q in asked(first, s)]
    categories = [q.category for q in asked_now]
    assert sorted(categories) == sorted(set(categories)) and 5 in categories  # one per category, cat 5 answered
    with pytest.raises(InputError, match="--questions"):
        prepare(EvalConfig(TINY, tmp_path, questions=0))


def test_answer_scoring_per_category_with_latency_and_tokens() -> None:
    from ripplecli.eval.report import abstention_rate, answer_metrics, group_metrics

    records = [
        {
            "category": 2,
            "gold": ["D1:1"],
            "source_turns": [["D1:1"]],
            "tokens": [5],
            "seconds": 0.01,
            "answer": "7 May 2023",
            "gold_answer": "the 7th of May, 2023",
            "f1": 1.0,
            "bleu1": 1.0,
            "answer_seconds": 0.002,
            "prompt_tokens": 400,
            "generated_tokens": 6,
            "first_token_seconds": 1.5,
        },
        {
            "category": 2,
            "gold": ["D1:2"],
            "source_turns": [["D1:3"]],
            "tokens": [5],
            "seconds": 0.01,
            "answer": "not found in your chats",
            "gold_answer": "7 May 2023",
            "f1": 0.0,
            "bleu1": 0.0,
            "answer_seconds": 0.004,
        },
    ]
    metrics = group_metrics(records, [10], 100)
    assert metrics["f1"] == 0.5 and metrics["answered"] == 2 and metrics["prompt_tokens"] == 200
    assert metrics["contains"] == 0.5  # the same date in other words
    assert 2.0 <= metrics["answer_p50_ms"] <= 4.0 and answer_metrics([]) == {}
    assert metrics["first_words_p50_ms"] == 1500.0  # only the streamed answer has first words
    adversarial = [{**records[1], "category": 5}, {**records[0], "category": 5}]
    assert abstention_rate(adversarial)["rate"] == 0.5


def test_compare_lists_flipped_answers() -> None:
    from ripplecli.eval.compare import compare_reports

    def report(f1: float, answer: str) -> dict:
        record = {
            "conversation": "c1",
            "index": 0,
            "question": "When?",
            "category": 2,
            "gold": ["D1:1"],
            "gold_answer": "7 May 2023",
            "mode": "ripple",
            "source_turns": [["D1:1"]],
            "f1": f1,
            "answer": answer,
        }
        return {"metrics": {"ripple": {"overall": {"f1": f1}}}, "results": [record]}

    comparison = compare_reports(report(0.0, "8 May"), report(1.0, "7 May 2023"))
    gained = comparison["answer_flips"]["ripple"]["gained"]
    assert [(g["before"], g["after"]) for g in gained] == [("8 May", "7 May 2023")]
    assert comparison["deltas"]["ripple"]["overall"]["f1"]["delta"] == 1.0
