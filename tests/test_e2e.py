"""End to end through the real encoder, spaCy and dateparser: sample chats plus LoCoMo conv-30 in one store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from conftest import LOCOMO_DEV, SAMPLE_CHATS
from typer.testing import CliRunner

from ripplecli.api import Memory
from ripplecli.cli import app
from ripplecli.cues import canonical_name

pytestmark = pytest.mark.slow
SAMPLES = ("dinner", "moving", "running")
LOCOMO_ID = "conv-30"


def _locomo_file(source: Path, folder: Path) -> tuple[Path, list[int]]:
    """One LoCoMo sample written as its own file, and the number of turns of each of its sessions."""
    sample = next(s for s in json.loads(source.read_text()) if s["sample_id"] == LOCOMO_ID)
    path = folder / f"{LOCOMO_ID}.json"
    path.write_text(json.dumps([sample]))
    sessions = [v for k, v in sample["conversation"].items() if k.startswith("session_") and isinstance(v, list)]
    return path, [len(turns) for turns in sessions if turns]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, shared_cache: Path) -> dict:
    """One real store shared by this module's tests: building it is the expensive part."""
    if not LOCOMO_DEV.exists():
        pytest.skip("shared/data/locomo-dev.json is not beside the repo")
    folder = tmp_path_factory.mktemp("e2e")
    locomo, locomo_sessions = _locomo_file(LOCOMO_DEV, folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RIPPLE_CACHE", str(shared_cache))
        with Memory(folder / "store") as memory:
            reports = [memory.ingest(SAMPLE_CHATS / f"{name}.json") for name in SAMPLES]
            reports.append(memory.ingest(locomo))
    return {"store": folder / "store", "reports": reports, "locomo_sessions": locomo_sessions}


def _rows(store: Path, sql: str, params: list | None = None) -> list[tuple]:
    """Rows of a read-only query against the built store."""
    with Memory(store, read_only=True) as memory:
        return memory.store.con.execute(sql, params or []).fetchall()


def _memory_of(store: Path, conversation: str, turn_id: str) -> tuple:
    """(persons, time_start, time_end, time_grounded, speaker) of the memory made from one turn."""
    (row,) = _rows(
        store,
        "SELECT m.persons, m.time_start, m.time_end, m.time_grounded, s.speaker FROM memories m "
        "JOIN provenance USING (memory_id) JOIN sources s USING (source_id) "
        "WHERE s.conversation_id = ? AND s.turn_id = ?",
        [conversation, turn_id],
    )
    return row


def _sample_turns(name: str) -> int:
    """Turns in one sample chat file."""
    return sum(len(s["turns"]) for s in json.loads((SAMPLE_CHATS / f"{name}.json").read_text())["sessions"])


def test_one_memory_per_turn(built):
    turns = [_sample_turns(name) for name in SAMPLES]
    reports = built["reports"]
    assert [r.new_sources for r in reports] == [*turns, sum(built["locomo_sessions"])]
    assert all(r.memories == r.new_sources and r.duplicates == 0 and r.failures == 0 for r in reports)
    ((memories, sources, provenance),) = _rows(
        built["store"],
        "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM sources), (SELECT count(*) FROM provenance)",
    )
    assert memories == sources == provenance == sum(r.memories for r in reports)


@pytest.mark.parametrize(
    "turn_id, start, end",
    [
        ("D1:2", datetime(2023, 1, 19), datetime(2023, 1, 19, 23, 59, 59)),  # "yesterday", 20 January 2023
        ("D15:1", datetime(2023, 6, 12), datetime(2023, 6, 18, 23, 59, 59)),  # "last week", 19 June 2023
        ("D14:1", datetime(2023, 6, 15), datetime(2023, 6, 15, 23, 59, 59)),  # "yesterday", 16 June 2023
    ],
)
def test_relative_time_is_grounded_on_the_session_date(built, turn_id, start, end):
    _, time_start, time_end, grounded, _ = _memory_of(built["store"], LOCOMO_ID, turn_id)
    assert (time_start, time_end, grounded) == (start, end, True)


def test_persons_include_the_speaker(built):
    rows = _rows(
        built["store"],
        "SELECT m.persons, s.speaker FROM memories m "
        "JOIN provenance USING (memory_id) JOIN sources s USING (source_id)",
    )
    assert rows and all(canonical_name(speaker) in persons for persons, speaker in rows)
    persons, *_ = _memory_of(built["store"], "dinner-plans", "D1:7")
    assert "maya" in persons


def test_edges_respect_recorded_thresholds_caps_and_direction(built):
    with Memory(built["store"], read_only=True) as memory:
        graph = memory.store.get_meta("settings")["graph"]
        edges = memory.store.con.execute("SELECT src, dst, channel, weight FROM edges").fetchall()
        place = dict(
            (mid, (conv, sess))
            for mid, conv, sess in memory.store.con.execute(
                "SELECT memory_id, conversation_id, session_id FROM memories"
            ).fetchall()
        )
    channels = Counter(channel for _, _, channel, _ in edges)
    assert channels["contiguity"] > 0 and channels["structural"] > 0
    assert all(src < dst for src, dst, _, _ in edges)
    assert all(w >= graph["semantic_threshold"] for _, _, c, w in edges if c == "semantic")
    assert all(w >= graph["structural_threshold"] for _, _, c, w in edges if c == "structural")
    assert all(place[src] == place[dst] for src, dst, c, _ in edges if c == "contiguity")
    for channel, cap in (("semantic", graph["semantic_cap"]), ("structural", graph["structural_cap"])):
        degrees = Counter(node for src, dst, c, _ in edges if c == channel for node in (src, dst))
        assert max(degrees.values(), default=0) <= cap, channel


def test_graph_stats_json(built):
    result = CliRunner().invoke(app, ["graph", "stats", "--json", "--store", str(built["store"])])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    total = sum(r.memories for r in built["reports"])
    assert stats["memories"] == stats["sources"] == total and stats["conversations"] == 4
    assert stats["encoder"] == {"name": "all-MiniLM-L6-v2", "dim": 384}
    assert set(stats["channels"]) >= {"contiguity", "structural"}
    assert stats["all"]["edges"] == sum(c["edges"] for c in stats["channels"].values())
    assert stats["isolated"] + sum(stats["degree_histogram"].values()) - stats["degree_histogram"]["0"] == total
    assert stats["settings"]["graph"]["semantic_threshold"] == 0.85 and stats["largest_component"] <= total
    assert stats["cues"]["persons"] > 0 and stats["sessions"] == 4 * len(SAMPLES) + len(built["locomo_sessions"])


def test_ask_json_returns_cited_evidence_and_a_trace(built):
    env = {**os.environ, "COLUMNS": "120"}
    question = "Should Alex take Maya to Harbor Grill?"
    command = [str(Path(sys.executable).with_name("ripple")), "ask", question, "--json", "--no-answer"]
    done = subprocess.run(
        [*command, "--store", str(built["store"])], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {"query_cues", "seeds", "rounds", "evidence"} <= set(result["trace"])
    evidence = result["evidence"]
    assert evidence and len(evidence) <= 30
    for item in evidence:
        assert item["source_turns"] and item["sources"]
        assert all(source["turn_id"] in item["source_turns"] and source["timestamp"] for source in item["sources"])
    cited = {turn for item in evidence for turn in item["source_turns"]}
    assert {"D1:10", "D3:8"} & cited


def _this_checkout(*args: str) -> list[str]:
    """`ripple ARGS` run from this checkout's code (not whatever the venv's console script points at)."""
    return [sys.executable, "-m", "ripplecli.cli", *args]


def test_a_read_only_command_leaves_at_once_with_its_output_and_exit_code(built):
    """`ask` ends without the interpreter's teardown (cli.FAST_EXIT_COMMANDS): the whole JSON still arrives, an error
    keeps its exit code and one line, and a reader that stops early (`| head -c 100`) sees no traceback."""
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "COLUMNS": "120", "PYTHONPATH": str(repo)}
    question = "Should Alex take Maya to Harbor Grill?"
    ask = _this_checkout("ask", question, "--json", "--no-answer", "--store", str(built["store"]))
    done = subprocess.run(ask, capture_output=True, text=True, env=env, cwd=repo, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["evidence"]
    missing = _this_checkout("ask", question, "--store", str(built["store"].parent / "no-such-store"))
    refused = subprocess.run(missing, capture_output=True, text=True, env=env, cwd=repo, timeout=120)
    assert refused.returncode != 0 and refused.stderr.startswith("ripple: error:")
    assert len(refused.stderr.strip().splitlines()) == 1
    reader = subprocess.Popen(ask, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=repo)
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.read(100)
    reader.stdout.close()
    assert "Traceback" not in reader.stderr.read().decode()
    reader.wait(timeout=120)


def test_an_ingest_that_leaves_at_once_has_written_and_closed_its_store(tmp_path, shared_cache):
    """`ingest` also skips the teardown (spaCy's alone cost ~260 ms): its store is complete and clean afterwards."""
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(repo), "RIPPLE_CACHE": str(shared_cache)}
    store = tmp_path / "store"
    chat = SAMPLE_CHATS / "dinner.json"
    done = subprocess.run(
        _this_checkout("ingest", str(chat), "--store", str(store), "--json"),
        capture_output=True, text=True, env=env, cwd=repo, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)
    assert report["memories"] == _sample_turns("dinner")
    doctor = subprocess.run(
        _this_checkout("doctor", "--store", str(store)), capture_output=True, text=True, env=env, cwd=repo, timeout=120
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    with Memory(store, read_only=True) as memory:
        assert memory.store.count("memories") == report["memories"]
