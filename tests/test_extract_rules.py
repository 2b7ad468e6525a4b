"""End to end through real spaCy: the rules extractor on LoCoMo turns."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime

import pytest
from extract_helpers import locomo_conversation

from ripplecli.cues import cue_key, match_cues
from ripplecli.extract.rules import RulesExtractor
from ripplecli.extract.windows import make_windows
from ripplecli.model import Conversation, MemoryDraft, Session, Turn
from ripplecli.registry import EXTRACTORS, resolve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def drafts() -> dict[str, MemoryDraft]:
    """Every draft of LoCoMo conv-26, by its source turn."""
    extractor = RulesExtractor()
    windows = list(make_windows(locomo_conversation("conv-26")))
    batches = extractor.extract_many(windows)  # how long this takes is a bench/ingest.py figure
    return {d.source_turns[0]: d for batch in batches for d in batch}


def test_one_draft_per_turn_citing_that_turn(drafts: dict[str, MemoryDraft]) -> None:
    conversation = locomo_conversation("conv-26")
    assert sorted(drafts) == sorted(t.turn_id for s in conversation.sessions for t in s.turns)
    assert all(d.extractor == "rules" and len(d.source_turns) == 1 for d in drafts.values())


def test_support_group_turn(drafts: dict[str, MemoryDraft]) -> None:
    draft = drafts["D1:3"]
    assert draft.restatement.startswith("Caroline: Caroline went to a LGBTQ support group yesterday")
    assert draft.persons == ["caroline"]
    assert (draft.time_start, draft.time_end, draft.time_grounded) == (
        datetime(2023, 5, 7),
        datetime(2023, 5, 7, 23, 59, 59),
        True,
    )
    assert {"lgbtq", "lgbtq support group", "support group"} <= set(draft.concepts)
    assert "powerful" not in draft.concepts  # adjectives are not cues


def test_persons_include_speaker_addressee_and_named_people(drafts: dict[str, MemoryDraft]) -> None:
    assert drafts["D1:2"].persons[:2] == ["melanie", "caroline"]  # "What's up with you?" names Caroline
    assert "melanie" in drafts["D1:1"].persons  # "Hey Mel!": the nickname of the other speaker
    assert all(d.persons[0] in ("caroline", "melanie") for d in drafts.values())


def test_locations_are_named_places_only(drafts: dict[str, MemoryDraft]) -> None:
    assert "sweden" in drafts["D4:3"].locations
    assert drafts["D1:3"].locations == []


def test_speakers_are_never_concepts(drafts: dict[str, MemoryDraft]) -> None:
    assert "mel" not in drafts["D1:1"].concepts  # "Hey Mel!": a nickname of the other speaker
    for draft in drafts.values():
        assert not {"caroline", "melanie"} & {t for c in draft.concepts for t in c.split()}
        assert len(draft.concepts) <= 12
        assert all(len(key) > 1 and key == cue_key(key) for key in draft.concepts)


def test_question_words_find_the_evidence_concepts(drafts: dict[str, MemoryDraft]) -> None:
    vocabulary = {f: key for d in drafts.values() for key, forms in d.concept_forms.items() for f in forms}
    cues = match_cues("What did Caroline research about adoption agencies?", vocabulary)
    assert cue_key("adoption agencies") in cues
    assert cue_key("adoption agencies") in drafts["D2:8"].concepts
    painted = match_cues("When did Melanie paint a sunrise?", vocabulary)
    assert cue_key("sunrise") in painted and "paint" in painted


def test_forms_map_surface_words_to_lemma_keys(drafts: dict[str, MemoryDraft]) -> None:
    forms = drafts["D1:14"].concept_forms  # "Yeah, I painted that lake sunrise last year!"
    assert "painted" in forms["paint"]


def test_ungrounded_turn_gets_the_session_day(drafts: dict[str, MemoryDraft]) -> None:
    draft = drafts["D2:8"]
    assert (draft.time_start, draft.time_grounded) == (datetime(2023, 5, 25), False)


def test_multi_party_chat_resolves_first_person_only() -> None:
    turns = [
        Turn("t1", "Ana", "I met you at Olive Garden restaurant with Tom"),
        Turn("t2", "Ben", "hi"),
        Turn("t3", "Cy", "hello"),
    ]
    conversation = Conversation("c", [Session("s", None, turns)])
    extractor = resolve(EXTRACTORS, "extractor", "rules")()
    (window,) = make_windows(conversation)
    draft = extractor.extract(window)[0]
    assert draft.restatement == "Ana: Ana met you at Olive Garden restaurant with Tom"
    assert draft.persons == ["ana", "tom"]
    assert draft.locations == ["olive garden"]
    assert (draft.time_start, draft.time_end, draft.time_grounded) == (None, None, False)


def test_a_town_spacy_calls_a_person_is_a_place_where_a_place_stands() -> None:
    texts = [
        "Morning! Did you book the train to Porto?",
        "We flew back from Porto on Sunday.",
        "I got a lovely gift from Emma and talked to Tom about it.",
        "We went to Emma's for dinner.",
    ]
    speakers = ["Maya", "Alex", "Maya", "Alex"]
    turns = [Turn(f"t{i}", speaker, text) for i, (speaker, text) in enumerate(zip(speakers, texts, strict=True))]
    conversation = Conversation("c", [Session("s", None, turns)])
    (window,) = make_windows(conversation)
    porto, back, gift, dinner = RulesExtractor().extract(window)
    assert "porto" in porto.locations and "porto" not in porto.persons
    assert "porto" in back.locations and "porto" not in back.persons
    assert {"emma", "tom"} <= set(gift.persons) and not {"emma", "tom"} & set(gift.locations)
    assert "emma" in dinner.persons and "emma" not in dinner.locations


@pytest.mark.parametrize("name", ["ok_native_calendar_edge_first_day.json", "ok_native_calendar_edge_last_day.json"])
def test_relative_times_at_the_calendar_edge_keep_every_turn_ungrounded(name: str) -> None:
    """Year 1 "last week" and year 9999 "next week" have no date: each turn is kept with its session's day."""
    from pathlib import Path

    from ripplecli.formats import read_conversations

    (conversation,) = read_conversations(Path(__file__).parent / "fuzz" / name)
    extractor = resolve(EXTRACTORS, "extractor", "rules")()
    drafts = [d for window in make_windows(conversation) for d in extractor.extract(window)]
    day = conversation.sessions[0].timestamp.date()
    assert [d.source_turns for d in drafts] == [[t.turn_id] for t in conversation.sessions[0].turns]
    assert all(not d.time_grounded and d.time_start.date() == day for d in drafts)


def test_spacy_loads_without_importing_torch_or_its_command_line() -> None:
    """torch costs seconds to import and is only for the one-time ONNX export, spaCy's command line (weasel,
    requests) is never used by ripple; both must stay importable after."""
    code = (
        "import sys; from ripplecli.extract.nlp import load_nlp; nlp = load_nlp(); "
        "assert not {'torch', 'spacy.cli', 'weasel'} & set(sys.modules), 'imported'; "
        "assert [t.lemma_ for t in nlp('Ana went hiking')] == ['Ana', 'go', 'hike']; "
        "import torch, spacy.cli; print('ok', torch.__name__, callable(spacy.cli.download))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok torch True", done.stderr


def test_turns_are_parsed_in_passes_of_bounded_words_with_the_same_drafts(drafts, monkeypatch) -> None:
    """Memory does not grow with turn length (issue 28 point 4): each spaCy pass holds at most PARSE_WORDS words of
    parses (a longer turn alone), and the drafts are those of one pass over everything."""
    import ripplecli.extract.rules as rules

    passes: list[int] = []
    real_parse = rules.parse

    def counted(texts, familiar):
        passes.append(sum(len(text.split()) for text in texts))
        return real_parse(texts, familiar)

    monkeypatch.setattr(rules, "parse", counted)
    monkeypatch.setattr(rules, "PARSE_WORDS", 500)
    windows = list(make_windows(locomo_conversation("conv-26")))
    sliced = {d.source_turns[0]: d for batch in RulesExtractor().extract_many(windows) for d in batch}
    assert len(passes) > 10 and max(passes) <= 500
    assert sliced == drafts


def test_an_assistants_long_answer_is_parsed_for_its_head_and_read_whole_for_time_and_known_names() -> None:
    """Cheaper ingest of assistant chats (issue 28): spaCy reads an assistant's first ASSISTANT_PARSE_WORDS words, so a
    name NER would find in the tail is no cue; the day it speaks of and a person the chat knows still count."""
    from ripplecli.extract.rules import ASSISTANT_PARSE_WORDS, parsed_text

    filler = " ".join(["Keep the pace easy and drink water often."] * 20)
    tail = "Zanzibar is lovely in June. Ask Maya about it next Friday."
    turns = [
        Turn("t1", "Sam", "I'm training for a marathon with Maya. Any tips?", role="owner"),
        Turn("t2", "Assistant", f"{filler} {tail}", role="assistant"),
        Turn("t3", "Sam", f"{filler} {tail}", role="owner"),
    ]
    assert len(parsed_text(turns[1]).split()) == ASSISTANT_PARSE_WORDS
    assert parsed_text(turns[2]) == turns[2].text and parsed_text(turns[0]) == turns[0].text
    conversation = Conversation("c", [Session("s", datetime(2023, 5, 1, 12, 0), turns)])
    (window,) = make_windows(conversation, known_persons=["Maya"])
    _, answer, owner_said = RulesExtractor().extract(window)
    assert "zanzibar" not in answer.concepts and "zanzibar" in owner_said.concepts
    assert "maya" in answer.persons
    assert answer.time_grounded and answer.time_start == owner_said.time_start
