"""`ripple eval longmemeval`: the metrics against hand-computed cases, the reader of the benchmark's layout, the runner
through the fake encoder, and the whole command through the real parts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from eval_sets import assert_refused
from typer.testing import CliRunner

from ripplecli.cli import app
from ripplecli.eval.lme_report import build_report, ranked_metrics, with_answer_scores
from ripplecli.eval.longmemeval import load_questions
from ripplecli.eval.metrics import (
    answer_words,
    contains_answer,
    first_seen,
    ndcg,
    recall_all,
    recall_any,
    rubric_share,
    rubric_terms,
)
from ripplecli.eval.runner import EvalConfig, asked, prepare, run, store_dir

FIXTURES = Path(__file__).parent / "fixtures" / "eval"
TINY = FIXTURES / "longmemeval-tiny.json"
runner = CliRunner()


def _tiny() -> list[dict]:
    return json.loads(TINY.read_text(encoding="utf-8"))


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- metrics ------------------------------------------------------------------------------------------------------
def test_sessions_rank_where_a_memory_from_them_first_appears() -> None:
    assert first_seen([["s2"], ["s1", "s2"], ["s2"], ["s3"]]) == ["s2", "s1", "s3"]
    assert first_seen([]) == []


def test_recall_any_and_recall_all_at_k() -> None:
    ranked = ["x", "a", "y", "b"]
    assert recall_any(ranked, ["a", "b"], 1) == 0.0
    assert recall_any(ranked, ["a", "b"], 2) == 1.0
    assert recall_all(ranked, ["a", "b"], 3) == 0.0
    assert recall_all(ranked, ["a", "b"], 4) == 1.0
    assert recall_all(ranked, ["a", "z"], 10) == 0.0  # a gold id never retrieved


def test_ndcg_at_10_with_longmemevals_discount() -> None:
    # gains 0,1,0,1: DCG = 1/log2(2) + 1/log2(4) = 1.5; ideal 1,1: 1 + 1/log2(2) = 2
    assert ndcg(["x", "a", "y", "b"], ["a", "b"], 10) == pytest.approx(0.75)
    assert ndcg(["a", "b"], ["a", "b"], 10) == 1.0
    assert ndcg(["x"] * 10 + ["a"], ["a"], 10) == 0.0  # below the cut
    assert ndcg(["a"], ["a", "b", "c"], 1) == 1.0  # the ideal at k = 1 holds one gold id
    with pytest.raises(ValueError):
        ndcg(["a"], [], 10)


def test_ranked_metrics_skip_questions_without_gold() -> None:
    records = [
        {"source_sessions": [["s1"], ["s2"]], "gold_sessions": ["s2"]},
        {"source_sessions": [["s9"]], "gold_sessions": []},
    ]
    metrics = ranked_metrics(records, "session", "source_sessions", "gold_sessions")
    assert metrics["session_questions"] == 1
    assert metrics["session_any@1"] == 0.0 and metrics["session_any@3"] == 1.0 and metrics["session_all@3"] == 1.0
    assert metrics["session_ndcg@10"] == 1.0  # rank 2 is not discounted by LongMemEval's scorer


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("7 May 2023", ["may", "7", "2023"]),
        ("the 7th of May, 2023", ["may", "7", "2023"]),
        ("2023-05-07", ["may", "7", "2023"]),
        ("5/7/2023", ["may", "7", "2023"]),
        ("Sept 3", ["september", "3"]),
        ("Twenty-five dollars", ["25", "dollars"]),
        ("$1,200.50", ["1200.50"]),
        ("Five months ago [m3]", ["5", "months", "ago"]),
    ],
)
def test_answer_words_normalise_numbers_and_dates(text: str, words: list[str]) -> None:
    assert answer_words(text) == words


def test_containment_reads_long_form_answers_both_ways() -> None:
    assert contains_answer("It was on May 7th, 2023 [m2]", "7 May 2023") == 1.0  # the answer holds the gold
    assert contains_answer("eleven days", "11 days (or 12 days, if April 15th to 22nd counts as 8 days)") == 1.0
    assert contains_answer("5 months ago", "Five months ago") == 1.0
    assert contains_answer("$1,200", "1200 dollars") == 1.0
    assert contains_answer("12 May 2023", "7 May 2023") == 0.0
    assert contains_answer("days", "11 days") == 0.0  # the gold holds it, but it says nothing
    assert contains_answer("the", "the cat") == 0.0
    assert contains_answer("", "cat") == 0.0


RUBRIC = (
    "The user would prefer suggestions of vegetarian dinners that use their cast-iron skillet, such as crispy "
    "tofu or mushroom dishes. They may not prefer suggestions that include meat or need an oven."
)
ASKED = "Can you suggest a dinner I could cook tonight?"


def test_rubric_terms_are_what_the_rubric_names_as_wanted() -> None:
    terms = rubric_terms(RUBRIC, ASKED)
    assert {"vegetarian", "cast", "iron", "skillet", "crispy", "tofu", "mushroom"} <= set(terms)
    assert not {"meat", "oven", "user", "prefer", "suggestion", "dinner"} & set(terms)  # unwanted, stock, asked


def test_with_the_history_only_what_the_user_named_counts() -> None:
    history = "I went vegetarian and I cook everything in my cast-iron skillet; crispy tofu is my favourite."
    assert rubric_terms(RUBRIC, ASKED, history) == ["vegetarian", "cast", "iron", "skillet", "crispy", "tofu"]
    assert rubric_terms(RUBRIC, ASKED, "I like soup.") == rubric_terms(RUBRIC, ASKED)  # names none: all count


def test_rubric_share_counts_the_terms_an_answer_uses() -> None:
    terms = rubric_terms(RUBRIC, ASKED)
    assert rubric_share("Crispy tofu in your cast-iron skillet [m2]", terms) == pytest.approx(5 / len(terms))
    assert rubric_share("A roast chicken in the oven", terms) == 0.0
    assert rubric_share("anything", rubric_terms("The user would prefer suggestions.", ASKED)) == 0.0  # names nothing


def test_answers_are_judged_by_their_kind() -> None:
    base = {"question": ASKED, "answer_only": False, "category": "multi-session", "gold_answer": "3"}
    assert with_answer_scores({**base, "answer": "3 bikes"})["correct"] == 1.0
    assert "correct" not in with_answer_scores(base)  # not answered
    unanswerable = {**base, "answer_only": True}
    assert with_answer_scores({**unanswerable, "answer": "not found in your chats"})["correct"] == 1.0
    assert with_answer_scores({**unanswerable, "answer": "3"})["correct"] == 0.0
    preference = {**base, "category": "single-session-preference", "gold_answer": RUBRIC, "answer": "Likely yes"}
    judged = with_answer_scores({**preference, "answer_text": "likely yes: crispy tofu in your cast-iron skillet"})
    assert judged["correct"] == 1.0 and judged["rubric"] > 0.5
    named = with_answer_scores({**preference, "answer_text": "try tofu"}, "I love tofu and mushrooms")
    assert named["rubric"] == 0.5 and named["correct"] == 1.0  # one of the two things the history names
    not_found = with_answer_scores({**preference, "answer": "not found in your chats", "answer_text": "tofu"})
    assert not_found["rubric"] == 0.0 and not_found["correct"] == 0.0


# --- reading the benchmark's layout -------------------------------------------------------------------------------
def test_questions_with_their_evidence_date_and_kind(tmp_path: Path) -> None:
    gz = tmp_path / "tiny.json.gz"
    gz.write_bytes(gzip.compress(TINY.read_bytes()))
    for path in (TINY, gz):
        samples = {s.sample_id: s for s in load_questions(path)}
        assert list(samples) == ["tiny_multi", "tiny_pref", "tiny_update_abs"]
        multi = samples["tiny_multi"]
        question = multi.questions[0]
        assert question.gold == ["D2:1", "D4:1"] and question.category == "multi-session"
        assert question.gold_sessions == ["answer_tiny_multi_1", "answer_tiny_multi_2"]
        assert multi.session_of["D4:1"] == "answer_tiny_multi_2"
        assert multi.as_of.isoformat() == "2023-06-10T09:00:00"
        assert not question.answer_only and samples["tiny_update_abs"].questions[0].answer_only
        sessions = [s.session_id for s in samples["tiny_update_abs"].conversation.sessions]
        assert sessions == ["answer_tiny_abs_1", "s_filler_b", "s_filler_b#2"]  # a repeated session is kept
    assert [s.content_hash for s in load_questions(TINY)] == [s.content_hash for s in load_questions(gz)]


def test_the_types_take_turns(tmp_path: Path) -> None:
    sorted_by_type = sorted(_tiny() + _tiny(), key=lambda q: q["question_type"])
    for number, entry in enumerate(sorted_by_type):
        entry["question_id"] = f"{entry['question_id']}_{number}"
    order = [s.questions[0].category for s in load_questions(_write(tmp_path / "sorted.json", sorted_by_type))]
    assert order == ["knowledge-update", "multi-session", "single-session-preference"] * 2


def test_types_and_ids_choose_questions() -> None:
    assert [s.sample_id for s in load_questions(TINY, types=["multi-session"])] == ["tiny_multi"]
    assert [s.sample_id for s in load_questions(TINY, ids=["tiny_update_abs", "tiny_pref"])] == [
        "tiny_pref",
        "tiny_update_abs",
    ]


def test_questions_sample_per_kind_and_unanswerable_only_with_answers(tmp_path: Path) -> None:
    config = EvalConfig(TINY, tmp_path, benchmark="longmemeval", questions=1, modes=["dense"])
    plan = prepare(config)
    assert [s.sample_id for s in plan.samples] == ["tiny_multi", "tiny_pref"]  # no store for the `_abs` question
    answering = prepare(EvalConfig(TINY, tmp_path, benchmark="longmemeval", questions=1, answer="typed"))
    assert [len(asked(answering, s)) for s in answering.samples] == [1, 1, 1]
    assert prepare(config).chosen == plan.chosen


BAD_INPUTS = (
    "missing file",
    "not json",
    "broken gzip",
    "locomo file",
    "bad date",
    "bad role",
    "bad type",
    "unknown type option",
    "unknown id",
    "unknown mode",
    "questions zero",
    "nothing to ask",
)


def _bad_inputs(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """Each case: CLI arguments and a phrase its one-line error must contain."""
    bad_date, bad_role, bad_type = _tiny(), _tiny(), _tiny()
    bad_date[1]["question_date"] = "yesterday"
    bad_role[2]["haystack_sessions"][0][1]["role"] = "narrator"
    bad_type[0]["question_type"] = "trivia"
    (tmp / "broken.json.gz").write_bytes(gzip.compress(b'[{"question_id": ')[:-4])
    not_json = tmp / "x.json"
    not_json.write_text("{ not json")
    tiny = str(TINY)
    return {
        "missing file": ([str(tmp / "absent.json")], "cannot read"),
        "not json": ([str(not_json)], "not JSON"),
        "broken gzip": ([str(tmp / "broken.json.gz")], "cannot read"),
        "locomo file": ([str(FIXTURES / "locomo-tiny.json")], "not a LongMemEval file"),
        "bad date": ([str(_write(tmp / "d.json", bad_date))], "[1].question_date"),
        "bad role": ([str(_write(tmp / "r.json", bad_role))], "[2].haystack_sessions[0][1].role"),
        "bad type": ([str(_write(tmp / "t.json", bad_type))], "[0].question_type"),
        "unknown type option": ([tiny, "--types", "trivia"], "trivia"),
        "unknown id": ([tiny, "--ids", "tiny_multi,nope"], "nope"),
        "unknown mode": ([tiny, "--modes", "seeds,telepathy"], "telepathy"),
        "questions zero": ([tiny, "--questions", "0"], "--questions"),
        "nothing to ask": ([tiny, "--ids", "tiny_update_abs"], "--answer"),
    }


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_line_and_exit_2_before_any_work(case: str, tmp_path: Path) -> None:
    args, phrase = _bad_inputs(tmp_path)[case]
    out = tmp_path / "out"
    assert_refused(runner.invoke(app, ["eval", "longmemeval", *args, "--out", str(out)]), phrase)
    assert not (out / "stores").exists()


# --- the runner through the fake encoder --------------------------------------------------------------------------
@pytest.fixture
def fake_parts(fake_settings, monkeypatch: pytest.MonkeyPatch):
    """Store settings with the fake encoder, and the fake extractor (no model, no spaCy)."""
    from conftest import use_fake_extractor

    use_fake_extractor(monkeypatch)
    return fake_settings


def test_one_store_per_question_scored_per_kind(tmp_path: Path, fake_parts) -> None:
    config = EvalConfig(TINY, tmp_path, benchmark="longmemeval", modes=["dense", "seeds"], answer="typed")
    plan = prepare(config)
    stages: list[str] = []
    records = run(plan, lambda stage, done, total: stages.append(stage), settings=fake_parts)
    assert len(records) == 2 * 3 and "questions" in stages and "ingest tiny_pref" in stages
    assert sorted(p.name for p in (tmp_path / "stores").iterdir()) == sorted(
        store_dir(tmp_path, s).name for s in plan.samples
    )
    multi = next(r for r in records if r["conversation"] == "tiny_multi" and r["mode"] == "dense")
    assert multi["gold_sessions"] == ["answer_tiny_multi_1", "answer_tiny_multi_2"]
    assert len(multi["source_sessions"]) == len(multi["source_turns"])
    assert set(plan.ingest_by_sample) == {"tiny_multi", "tiny_pref", "tiny_update_abs"}

    report = build_report(plan, records)
    assert report["groups"] == ["overall", "single-session-preference", "multi-session", "knowledge-update"]
    overall = report["metrics"]["dense"]["overall"]
    assert overall["session_questions"] == 2 and overall["turn_questions"] == 2  # `_abs` has no retrieval gold
    for key in ("session_any@5", "session_all@10", "session_ndcg@10", "turn_any@1", "full@10", "full@budget"):
        assert 0.0 <= overall[key] <= 1.0
    assert overall["session_any@10"] == 1.0  # every haystack session fits in 50 memories
    assert overall["answered"] == 3 and "abstention" in overall and "rubric" in overall
    preference = report["metrics"]["dense"]["single-session-preference"]
    assert "f1" not in preference and preference["preference_answers"] == 1  # a rubric is not scored by F1
    assert report["metrics"]["dense"]["knowledge-update"]["abstention_questions"] == 1
    assert report["timing"]["stores_ingest_seconds"] > 0
    assert all("correct" in r for r in report["results"])


def test_a_rerun_reuses_the_stores_and_the_answers(tmp_path: Path, fake_parts, monkeypatch) -> None:
    from ripplecli.eval import runner as eval_runner

    config = EvalConfig(TINY, tmp_path, benchmark="longmemeval", modes=["dense"])
    first_plan = prepare(config)
    first = run(first_plan, settings=fake_parts)
    asked_again: list[str] = []
    monkeypatch.setattr(eval_runner, "ask", lambda *a: asked_again.append(a[-1]))
    plan = prepare(config)
    again = run(plan, settings=fake_parts)
    assert again == first and asked_again == []
    assert plan.ingest_by_sample == first_plan.ingest_by_sample  # a reused store keeps the seconds it first took
    assert len(list((tmp_path / "stores").iterdir())) == 2


def test_compare_reads_question_types_and_judged_answers() -> None:
    from ripplecli.errors import InputError
    from ripplecli.eval.compare import compare_reports

    def report(correct: float, full: float) -> dict:
        record = {
            "conversation": "q1",
            "index": 0,
            "question": "How many bikes?",
            "category": "multi-session",
            "gold": ["D2:1"],
            "gold_answer": "3",
            "mode": "ripple",
            "source_turns": [["D2:1"]] if full else [["D1:1"]] * 40,
            "f1": 0.0,
            "answer": "3 bikes" if correct else "2",
            "correct": correct,
        }
        metrics = {"overall": {"full@30": full, "accuracy": correct}, "multi-session": {"session_all@5": full}}
        return {
            "benchmark": "longmemeval",
            "groups": ["overall", "multi-session"],
            "metrics": {"ripple": metrics},
            "results": [record],
        }

    comparison = compare_reports(report(0.0, 0.0), report(1.0, 1.0))
    assert comparison["deltas"]["ripple"]["multi-session"]["session_all@5"]["delta"] == 1.0
    assert comparison["deltas"]["ripple"]["overall"]["accuracy"]["delta"] == 1.0
    assert [q["after"] for q in comparison["answer_flips"]["ripple"]["gained"]] == ["3 bikes"]  # judged, not F1
    assert [q["conversation"] for q in comparison["flips"]["ripple"]["gained"]] == ["q1"]
    with pytest.raises(InputError, match="different benchmarks"):
        compare_reports(report(0.0, 0.0), {**report(1.0, 1.0), "benchmark": "locomo"})


# --- through the real parts ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_longmemeval_end_to_end_resume_and_compare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gz = tmp_path / "tiny.json.gz"
    gz.write_bytes(gzip.compress(TINY.read_bytes()))
    out = tmp_path / "eval"
    args = ["eval", "longmemeval", str(gz), "--out", str(out), "--modes", "dense,seeds,ripple", "--answer", "typed"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    for name in ("report.json", "report.md", "recall_at_k.png"):
        assert (out / name).stat().st_size > 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["metrics"]) == {"dense", "seeds", "ripple"} and len(report["results"]) == 3 * 3
    for groups in report["metrics"].values():
        assert groups["overall"]["session_any@10"] == 1.0
        assert groups["multi-session"]["full@30"] == 1.0  # both evidence turns among 30 of ~10 memories
        for metrics in groups.values():
            for key in ("session_all@5", "turn_ndcg@10", "full@budget", "accuracy"):
                assert 0.0 <= metrics[key] <= 1.0
    assert "LongMemEval retrieval and answers" in (out / "report.md").read_text()

    from ripplecli.eval import runner as eval_runner

    asked: list[str] = []
    monkeypatch.setattr(eval_runner, "ask", lambda *a: asked.append(a[-1]))
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and asked == []  # every store and answer reused
    compared = runner.invoke(app, ["eval", "compare", str(out / "report.json"), str(out / "report.json"), "--json"])
    assert compared.exit_code == 0, compared.output
    comparison = json.loads(compared.output)
    assert comparison["deltas"]["ripple"]["multi-session"]["full@30"]["delta"] == 0.0
    assert comparison["flips"]["ripple"] == {"gained": [], "lost": []}
