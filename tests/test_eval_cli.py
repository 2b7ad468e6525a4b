"""`ripple eval locomo` / `ripple eval compare` through the CLI: bad input, comparison, resume, end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from eval_sets import assert_refused
from typer.testing import CliRunner

from ripplecli.cli import app

FIXTURES = Path(__file__).parent / "fixtures" / "eval"
TINY = FIXTURES / "locomo-tiny.json"
runner = CliRunner()


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _tiny() -> list[dict]:
    return json.loads(TINY.read_text(encoding="utf-8"))


def _bad_inputs(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """Each case: extra CLI arguments and a phrase the one-line error must contain."""
    no_qa = [{k: v for k, v in s.items() if k != "qa"} for s in _tiny()]
    no_questions = [{**s, "qa": [q for q in s["qa"] if q["category"] == 5]} for s in _tiny()]
    broken_turn = _tiny()
    del broken_turn[0]["conversation"]["session_1"][0]["speaker"]
    (tmp / "x.txt").write_text("{ not json")
    a_file = tmp / "a-file"
    a_file.write_text("x")
    tiny = str(TINY)
    return {
        "missing file": ([str(tmp / "absent.json")], "cannot read"),
        "not json": ([str(_write(tmp / "x.json", {}).with_name("x.txt"))], "not JSON"),
        "no conversation": ([str(_write(tmp / "nc.json", [{"qa": []}]))], "no 'conversation'"),
        "no qa": ([str(_write(tmp / "nq.json", no_qa))], "no 'qa'"),
        "bad turn": ([str(_write(tmp / "bt.json", broken_turn))], "speaker"),
        "no questions": ([str(_write(tmp / "nz.json", no_questions))], "no questions"),
        "unknown conversation": ([tiny, "--conversations", "fix-a,conv-99"], "conv-99"),
        "unknown mode": ([tiny, "--modes", "seeds,telepathy"], "telepathy"),
        "k zero": ([tiny, "--k", "0"], "--k"),
        "k too large": ([tiny, "--k", "51"], "--k"),
        "budget": ([tiny, "--budget-tokens", "0"], "--budget-tokens"),
        "answer": ([tiny, "--answer", "psychic"], "--answer"),
        "out not writable": ([tiny, "--out", str(a_file / "sub")], "--out"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "missing file",
        "not json",
        "no conversation",
        "no qa",
        "bad turn",
        "no questions",
        "unknown conversation",
        "unknown mode",
        "k zero",
        "k too large",
        "budget",
        "answer",
        "out not writable",
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_any_work(case: str, tmp_path: Path) -> None:
    args, phrase = _bad_inputs(tmp_path)[case]
    out = tmp_path / "out"
    if "--out" not in args:
        args = [*args, "--out", str(out)]
    assert_refused(runner.invoke(app, ["eval", "locomo", *args]), phrase)
    assert not (out / "stores").exists()


def test_compare_reports_deltas_and_flips() -> None:
    before, after = str(FIXTURES / "report-before.json"), str(FIXTURES / "report-after.json")
    result = runner.invoke(app, ["eval", "compare", before, after, "--json"])
    assert result.exit_code == 0, result.output
    comparison = json.loads(result.output)
    assert comparison["modes"] == ["ripple"]  # dense and seeds are each in only one report
    overall = comparison["deltas"]["ripple"]["overall"]
    assert overall["recall@30"]["before"] == pytest.approx(2.5 / 3)
    assert overall["recall@30"]["delta"] == pytest.approx(-0.5 / 3)
    assert overall["full@30"]["delta"] == pytest.approx(0.0)
    assert overall["full@10"]["delta"] == pytest.approx(1 / 3)
    flips = comparison["flips"]["ripple"]
    assert [q["index"] for q in flips["gained"]] == [0]
    assert [q["index"] for q in flips["lost"]] == [2]


def test_compare_table_and_bad_report(tmp_path: Path) -> None:
    result = runner.invoke(app, ["eval", "compare", str(FIXTURES / "report-before.json"), str(TINY)])
    assert result.exit_code == 2 and "metrics" in result.output
    before, after = str(FIXTURES / "report-before.json"), str(FIXTURES / "report-after.json")
    result = runner.invoke(app, ["eval", "compare", before, after])
    assert result.exit_code == 0, result.output
    assert "ripple" in result.output and "gained c1#0" in result.output and "lost c1#2" in result.output


@pytest.mark.parametrize(("command", "file"), [("locomo", TINY), ("longmemeval", FIXTURES / "longmemeval-tiny.json")])
def test_without_matplotlib_the_plot_is_skipped_in_one_line(
    command: str, file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ripplecli.eval

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # the demo install: `import matplotlib` fails
    monkeypatch.setattr(ripplecli.eval, "run", lambda plan, progress=None: [])
    out = tmp_path / "out"
    result = runner.invoke(app, ["eval", command, str(file), "--out", str(out), "--modes", "seeds"])
    assert result.exit_code == 0, result.output
    assert (out / "report.json").exists() and (out / "report.md").exists()
    assert not (out / "recall_at_k.png").exists()
    assert "plot skipped: matplotlib is not installed" in " ".join(result.output.split())


@pytest.mark.slow
def test_locomo_end_to_end_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "eval"
    args = ["eval", "locomo", str(TINY), "--out", str(out), "--modes", "dense,seeds,ripple", "--answer", "typed"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    for name in ("report.json", "report.md", "recall_at_k.png"):
        assert (out / name).stat().st_size > 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["metrics"]) == {"dense", "seeds", "ripple"}
    for groups in report["metrics"].values():
        for name, metrics in groups.items():
            if name == "abstention":
                assert 0.0 <= metrics["rate"] <= 1.0
                continue
            for key in ("recall@10", "full@10", "recall@30", "full@30", "recall@budget", "full@budget", "f1"):
                assert 0.0 <= metrics[key] <= 1.0
    assert report["counts"]["unresolved_evidence_ids"] == [
        {"conversation": "fix-a", "index": 3, "id": "D9:9"},
        {"conversation": "fix-b", "index": 3, "id": "D"},
    ]
    assert len(report["results"]) == 3 * 10  # every question of both conversations (cat 5 too, with answers)
    assert sorted(p.name for p in (out / "stores").iterdir())[0].startswith("fix-a-")

    journal = out / "partial-ripple.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])  # an interrupted last write
    from ripplecli.eval import runner as eval_runner

    asked: list[str] = []
    real_ask = eval_runner.ask
    monkeypatch.setattr(eval_runner, "ask", lambda *a: asked.append(a[-1]) or real_ask(*a))
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    rerun = json.loads((out / "report.json").read_text())
    assert len(rerun["results"]) == 30
    assert asked == ["ripple"]  # only the cut-off question is asked again
    assert len(journal.read_text().splitlines()) == len(lines)
