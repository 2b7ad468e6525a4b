"""LLM query analysis with a scripted fake LLM: names checked against the store, concepts from the rules, one
retry, and the rules cues with a recorded failure when the model's output cannot be used."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ripplecli.api import Memory
from ripplecli.recall.index import RecallIndex
from ripplecli.recall.llm_query import MAX_NAMES, LLMQueryAnalyzer, QueryOut
from ripplecli.recall.query import RulesQueryAnalyzer
from ripplecli.registry import QUERY_ANALYZERS
from ripplecli.runtime.llm import CallLog

AS_OF = datetime(2023, 6, 2, 10, 0)
QUESTION = "Where did Alice and Maya go in May 2023?"


def index() -> RecallIndex:
    """A small store's recall maps: two speakers, Maya, two places, a few concept forms."""
    idx = RecallIndex(version=1, texts={1: "Alice went to Paris with Maya.", 2: "Bob likes the Louvre museum."})
    idx.person_holders.update({"maya": [1], "alice": [1]})
    idx.location_holders.update({"paris": [1], "louvre": [2]})
    idx.forms = {"paris": "paris", "museum": "museum", "trip": "trip", "louvre": "louvre"}
    idx.speakers = {"alice", "bob"}
    return idx


def query_out(**changes) -> dict:
    """The model's reply; `changes` override single fields."""
    base = {
        "semantic_query": "Alice and Maya went on a trip to a museum.",
        "keywords": ["Alice", "Maya", "go"],
        "persons": ["Maya", "Zed"],
        "locations": [],
        "time_range": ["2023-05-01", "2023-05-31"],
    }
    return {**base, **changes}


def analyze(llm, question: str = QUESTION) -> tuple[LLMQueryAnalyzer, CallLog, object]:
    """Run the analyzer once over the small index."""
    log = CallLog()
    analyzer = LLMQueryAnalyzer(llm, log)
    return analyzer, log, analyzer.analyze(question, index(), AS_OF)


def test_registered_and_every_list_bounded():
    assert QUERY_ANALYZERS["llm"] == "ripplecli.recall.llm_query:LLMQueryAnalyzer"
    props = QueryOut.model_json_schema()["properties"]
    assert all(props[k]["maxItems"] <= 6 for k in ("keywords", "persons", "locations"))
    assert props["semantic_query"]["maxLength"] == 200


def test_valid_output_keeps_known_persons_and_takes_concepts_from_the_rules(fake_llm):
    analyzer, log, cues = analyze(fake_llm(query_out()))
    assert cues.text == QUESTION  # the views read the question, as the rules do
    assert "zed" not in cues.persons
    assert set(cues.persons) == {"maya", "alice"}  # the rules' exact name matches stay
    assert cues.concepts == []  # the restatement's "trip" and "museum" are not words of the question
    assert cues.keywords == ["alice", "maya"]  # "go" is no content word of the question
    assert cues.time_range == (datetime(2023, 5, 1), datetime(2023, 5, 31, 23, 59, 59))
    assert "persons the question does not name dropped: zed" in analyzer.last_failure
    assert log.calls[0].component == "query" and "zed" in log.calls[0].note


def test_the_prompt_carries_the_date_and_the_known_names(fake_llm):
    llm = fake_llm(query_out(persons=[]))
    analyzer, _, _ = analyze(llm)
    user = llm.requests[0][0][-1]["content"]
    assert json.dumps(QUESTION) in user and "2023-06-02" in user
    assert '"maya"' in user and '"louvre"' not in user  # only names sharing a word with the question are shown
    assert analyzer.last_failure is None


def test_known_names_are_capped_mentioned_ones_first(fake_llm):
    idx = index()
    for i in range(120):
        idx.person_holders[f"person{i}"] = [1]
    llm = fake_llm(query_out())
    LLMQueryAnalyzer(llm, CallLog()).analyze("What did Maya say?", idx, AS_OF)
    user = llm.requests[0][0][-1]["content"]
    persons = json.loads(user.split("Known persons: ")[1].splitlines()[0])
    locations = json.loads(user.split("Known locations: ")[1])
    assert persons == ["maya"] and locations == []  # the 120 others share no word with the question
    assert len(persons) + len(locations) <= MAX_NAMES


def test_invalid_json_is_retried_then_falls_back_to_the_rules(fake_llm):
    analyzer, log, cues = analyze(fake_llm("{not json"))
    rules = RulesQueryAnalyzer().analyze(QUESTION, index(), AS_OF)
    assert cues == rules
    assert [c.ok for c in log.calls] == [False, False]
    assert analyzer.last_failure.startswith("LLM query analysis failed (invalid JSON")
    assert analyzer.last_failure.endswith("rules cues used")


def test_one_bad_reply_then_a_good_one_is_used(fake_llm):
    analyzer, log, cues = analyze(fake_llm('{"semantic_query": ""}', query_out(persons=["maya"])))
    assert [c.ok for c in log.calls] == [False, True] and "schema violation" in log.calls[0].error
    assert cues.text == QUESTION and analyzer.last_failure is None


def test_a_backend_error_falls_back(fake_llm):
    analyzer, _, cues = analyze(fake_llm(TimeoutError("model timed out")))
    assert "model timed out" in analyzer.last_failure and cues.text == QUESTION


@pytest.mark.parametrize("days", [["2023-05-31", "2023-05-01"], ["2023-02-30", "2023-03-01"]])
def test_a_bad_time_range_is_replaced_by_the_rules_one(fake_llm, days):
    analyzer, _, cues = analyze(fake_llm(query_out(persons=[], time_range=days)))
    assert cues.time_range == (datetime(2023, 5, 1), datetime(2023, 5, 31, 23, 59, 59))  # "May 2023" by the rules
    assert "time range" in analyzer.last_failure and "rules time range used" in analyzer.last_failure


def test_no_time_from_the_model_keeps_the_rules_time_without_a_failure(fake_llm):
    analyzer, _, cues = analyze(fake_llm(query_out(persons=[], time_range=None)), "What did Alice do last week?")
    assert cues.time_range == (datetime(2023, 5, 22), datetime(2023, 5, 28, 23, 59, 59))
    assert analyzer.last_failure is None


def test_the_model_time_is_used_when_the_rules_find_none(fake_llm):
    days = ["2023-03-01", "2023-05-31"]
    analyzer, _, cues = analyze(fake_llm(query_out(persons=[], time_range=days)), "What did Alice do this spring?")
    assert cues.time_range == (datetime(2023, 3, 1), datetime(2023, 5, 31, 23, 59, 59))
    assert analyzer.last_failure is None


def test_an_explicit_time_resolved_by_the_rules_wins_over_the_model(fake_llm):
    analyzer, _, cues = analyze(fake_llm(query_out(persons=[], time_range=["2023-06-02", "2023-06-02"])))
    assert cues.time_range == (datetime(2023, 5, 1), datetime(2023, 5, 31, 23, 59, 59))
    assert "differs from the question's explicit time" in analyzer.last_failure


def test_a_restatement_sharing_no_word_with_the_question_is_replaced(fake_llm):
    analyzer, _, cues = analyze(fake_llm(query_out(persons=[], semantic_query="whereamigos")))
    assert cues.text == QUESTION and "shares no word with the question" in analyzer.last_failure


def test_unknown_locations_are_dropped_and_recorded(fake_llm):
    question = "Did Alice see Paris or Atlantis in May 2023?"
    analyzer, _, cues = analyze(fake_llm(query_out(persons=[], locations=["  PARIS ", "Atlantis"])), question)
    assert cues.locations == ["paris"] and "does not know dropped: atlantis" in analyzer.last_failure


def test_an_empty_store_asks_no_model(fake_llm):
    llm = fake_llm(query_out())
    cues = LLMQueryAnalyzer(llm).analyze(QUESTION, RecallIndex(version=0), AS_OF)
    assert llm.requests == [] and cues.text == QUESTION


# --- through Memory.recall, the trace and the CLI ----------------------------------------------------
def chat_file(tmp_path: Path) -> Path:
    """A native chat: Alice and Bob talk about a trip with Maya."""
    turns = [
        {"speaker": "Alice", "text": "I went to Paris yesterday with Maya."},
        {"speaker": "Bob", "text": "Nice! Did you see the Louvre?"},
    ]
    data = {"conversation_id": "trip", "sessions": [{"id": "1", "timestamp": "2023-05-08T14:00", "turns": turns}]}
    path = tmp_path / "trip.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_recall_with_the_llm_analyzer_traces_its_call_and_failure(tmp_path, fake_settings, fake_llm):
    from ripplecli.cli.render import trace_tree

    with Memory(tmp_path / "store") as memory:
        memory.configure(fake_settings)
        memory.ingest(chat_file(tmp_path), extractor="rules")
        memory._llm = fake_llm(query_out(persons=["Alice", "Zed"]))
        result = memory.recall("Where did Alice go with Maya?", k=5, analyzer="llm")
        rules = memory.recall("Where did Alice go with Maya?", k=5)
    assert [c["component"] for c in result.trace.llm_calls] == ["query"]
    assert result.trace.query_cues.persons[0] == "alice" and "zed" in result.trace.query_cues.failure
    assert rules.trace.query_cues.failure is None and rules.trace.llm_calls is None
    assert "failure" not in rules.to_dict()["trace"]["query_cues"] and "llm_calls" not in rules.to_dict()["trace"]
    console = Console(record=True, width=160)
    console.print(trace_tree(result))
    text = console.export_text()
    assert "model fallback: persons the question does not name dropped: zed" in text
    assert "time range 2023-05-01 … 2023-05-31 dropped: the question states no time" in text
    assert result.trace.query_cues.time_range is None


def test_the_llm_planner_does_not_imply_the_llm_analyzer(tmp_path, fake_settings, fake_llm):
    with Memory(tmp_path / "store") as memory:
        memory.configure(fake_settings)
        memory.ingest(chat_file(tmp_path), extractor="rules")
        memory._llm = fake_llm("{not json")
        result = memory.recall("Where did Alice go?", k=5, planner="llm")
    assert {c["component"] for c in result.trace.llm_calls} == {"planner"}


def test_unknown_analyzer_is_an_input_error(tmp_path):
    from ripplecli.errors import InputError

    with Memory(tmp_path / "store") as memory, pytest.raises(InputError, match="unknown analyzer"):
        memory.recall("x", analyzer="oracle")


def test_ask_analyzer_llm_on_the_command_line(tmp_path, fake_settings, fake_llm, monkeypatch):
    from ripplecli.cli import app

    store = tmp_path / "store"
    with Memory(store) as memory:
        memory.configure(fake_settings)
        memory.ingest(chat_file(tmp_path), extractor="rules")
    monkeypatch.setattr("ripplecli.local_models.load_llm", lambda path=None: fake_llm("{not json"))
    args = ["ask", "Where did Alice go?", "--analyzer", "llm", "--no-answer", "--json", "--store", str(store)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    trace = json.loads(result.output)["trace"]
    assert trace["query_cues"]["failure"].startswith("LLM query analysis failed")
    assert [c["component"] for c in trace["llm_calls"]] == ["query", "query"]


@pytest.mark.llm
@pytest.mark.slow
def test_smollm2_output_validates_or_falls_back_cleanly(real_llm):
    log = CallLog()
    analyzer = LLMQueryAnalyzer(real_llm, log)
    cues = analyzer.analyze(QUESTION, index(), AS_OF)
    known = {"alice", "bob", "maya"}
    assert set(cues.persons) <= known and set(cues.locations) <= {"paris", "louvre"}
    assert cues.concepts == [c for c in cues.concepts if c in index().forms.values()]
    assert cues.time_range is None or cues.time_range[0] <= cues.time_range[1]
    assert 1 <= len(log.calls) <= 2 and all(c.component == "query" for c in log.calls)
    if not log.calls[-1].ok:  # both attempts failed: the rules cues, and the failure says so
        assert analyzer.last_failure.endswith("rules cues used") and cues.text == QUESTION
    else:
        assert 0 < len(cues.text) <= 200 and len(cues.keywords) <= 6


# --- gates: the model may only add what the question says ---------------------------------------------
def test_a_person_the_question_does_not_name_is_dropped_though_the_store_knows_them(fake_llm):
    analyzer, _, cues = analyze(fake_llm(query_out(persons=["Bob", "maya"])), "Where did Maya's sister go in May 2023?")
    assert cues.persons == ["maya"]  # Bob is a speaker of the store, but the question never names him
    assert analyzer.last_failure == "persons the question does not name dropped: bob"


def test_a_place_the_question_does_not_name_is_dropped(fake_llm):
    analyzer, _, cues = analyze(fake_llm(query_out(persons=[], locations=["Louvre", "Paris"])), "Did Alice like Paris?")
    assert cues.locations == ["paris"]
    assert "locations the question does not name dropped: louvre" in analyzer.last_failure


def test_the_store_owner_stands_for_i_me_my(fake_llm):
    idx = index()
    idx.owner = "Bob"
    llm = fake_llm(query_out(persons=["Bob", "Alice"], time_range=None))
    analyzer = LLMQueryAnalyzer(llm, CallLog())
    cues = analyzer.analyze("Where did I meet Maya?", idx, AS_OF)
    assert cues.persons == ["maya", "bob"]  # the rules' Maya kept, the owner (my) added, Alice dropped
    assert analyzer.last_failure == "persons the question does not name dropped: alice"


def test_a_time_the_question_does_not_state_is_dropped(fake_llm):
    llm = fake_llm(query_out(persons=[], time_range=["2023-06-02", "2023-06-02"]))
    analyzer, _, cues = analyze(llm, "Where did Alice and Maya go?")
    assert cues.time_range is None
    assert analyzer.last_failure == "time range 2023-06-02 … 2023-06-02 dropped: the question states no time"


def test_concepts_come_only_from_the_store_cue_forms(fake_llm):
    out = query_out(persons=[], semantic_query="Alice went on a zeppelin trip.", keywords=["zeppelin", "alice"])
    _, _, cues = analyze(fake_llm(out), "Did Alice go on a trip in May 2023?")
    assert cues.concepts == ["trip"]  # "zeppelin" is the model's word, no cue form of the store
    assert cues.keywords == ["alice"]  # a keyword the question does not contain is no cue


@pytest.mark.parametrize(("mode", "text"), [("restatement", "Alice went to Paris."), ("both", None)])
def test_the_text_mode_chooses_what_the_views_read(fake_llm, monkeypatch, mode, text):
    monkeypatch.setattr(LLMQueryAnalyzer, "text_mode", mode)
    _, _, cues = analyze(fake_llm(query_out(semantic_query="Alice went to Paris.")))
    assert cues.text == (text or f"{QUESTION} Alice went to Paris.")


@pytest.mark.llm
@pytest.mark.slow
def test_ask_with_the_model_analyzer_and_planner_through_smollm2(tmp_path, fake_settings, smollm2, monkeypatch):
    """The mechanics end to end through llama.cpp: both model steps run, are traced, and their gates hold."""
    from ripplecli.cli import app

    monkeypatch.setenv("RIPPLE_CONFIG", str(tmp_path / "config.json"))
    store = tmp_path / "store"
    with Memory(store) as memory:
        memory.configure(fake_settings)
        memory.ingest(chat_file(tmp_path), extractor="rules")
    question = "Where did Alice go with Maya?"
    args = ["ask", question, "--analyzer", "llm", "--planner", "llm", "--no-answer", "--json"]
    result = CliRunner().invoke(app, [*args, "--store", str(store), "--model", str(smollm2)])
    assert result.exit_code == 0, result.output
    trace = json.loads(result.output)["trace"]
    calls = trace["llm_calls"]
    assert calls[0]["component"] == "query" and "planner" in {c["component"] for c in calls}
    assert all(c["tokens_in"] > 0 and c["seconds"] > 0 for c in calls)
    cues = trace["query_cues"]
    assert set(cues["persons"]) | set(cues["locations"]) <= {"alice", "maya"}  # only what the question names
    assert cues["text"] == question and cues.get("time_range") is None  # the question states no time
    failure = cues.get("failure")
    assert failure is None or "dropped" in failure or "rules cues used" in failure or "shares no word" in failure
    plan = trace["rounds"][0]["planner"]
    seeds = {row["id"] for rows in trace["seeds"].values() for row in rows}
    assert plan["decision"] in ("continue", "stop") and {a["id"] for a in plan["anchors"]} <= seeds
    assert plan.get("failure") is None or "overruled" in plan["failure"] or "rules plan used" in plan["failure"]
