"""Chat readers: each format parsed and detected, every bad file refused with one line naming the file."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ripplecli.errors import InputError
from ripplecli.formats import FORMATS, detect_format, read_conversations
from ripplecli.formats.chatgpt import parse_chatgpt
from ripplecli.formats.locomo import parse_locomo
from ripplecli.formats.longmemeval import parse_longmemeval
from ripplecli.formats.native import parse_native
from ripplecli.model import Turn

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
LOCOMO_DEV = Path("/work/shared/data/locomo-dev.json")
PARSERS = [parse_native, parse_locomo, parse_longmemeval, parse_chatgpt]


def refusal(path: Path, fmt: str = "auto") -> str:
    """The message of the InputError reading `path` must raise; it must be one line naming the file."""
    with pytest.raises(InputError) as caught:
        read_conversations(path, fmt)
    message = str(caught.value)
    assert message.startswith(f"{path.name}: ")
    assert "\n" not in message
    return message


def write(tmp_path: Path, name: str, content: object) -> Path:
    """A file holding `content` (bytes as they are, anything else as JSON)."""
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("native.json", "native"),
        ("locomo.json", "locomo"),
        ("longmemeval.json", "longmemeval"),
        ("chatgpt.json", "chatgpt"),
        ("chatgpt_edited.json", "chatgpt"),
    ],
)
def test_detects_each_format(fixture: str, expected: str) -> None:
    assert detect_format(json.loads((FIXTURES / fixture).read_text())) == expected
    assert {"native", "locomo", "longmemeval", "chatgpt", "claude", "telegram", "whatsapp", "slack"} <= set(FORMATS)


def test_native_defaults_captions_and_utc() -> None:
    (conversation,) = read_conversations(FIXTURES / "native.json")
    first, second, third = conversation.sessions
    assert conversation.conversation_id == "book-club"
    assert [s.session_id for s in conversation.sessions] == ["s1", "2", "3"]
    assert first.timestamp == datetime(2024, 3, 2, 18, 15)
    assert second.timestamp == datetime(2024, 3, 9, 9, 0)  # +01:00 converted to UTC, stored naive
    assert third.timestamp is None
    assert first.turns[2] == Turn("D1:3", "Priya", "[image: a paperback with a folded corner on a kitchen table]")
    assert [t.turn_id for t in second.turns] == ["t-final", "D2:2"]
    assert conversation.speakers == ["Priya", "Tom"]


def test_native_default_conversation_ids_come_from_the_file_stem(tmp_path: Path) -> None:
    doc = {"sessions": [{"turns": [{"speaker": "A", "text": "hi"}]}]}
    assert read_conversations(write(tmp_path, "trip.json", doc))[0].conversation_id == "trip"
    ids = [c.conversation_id for c in read_conversations(write(tmp_path, "two.json", [doc, doc]))]
    assert ids == ["two-1", "two-2"]


def test_locomo_sessions_in_numeric_order_with_captions() -> None:
    (conversation,) = read_conversations(FIXTURES / "locomo.json")
    assert conversation.conversation_id == "tiny-1"
    assert [s.session_id for s in conversation.sessions] == ["1", "2", "10"]
    assert conversation.sessions[0].timestamp == datetime(2023, 6, 3, 9, 5)
    assert conversation.sessions[1].timestamp == datetime(2023, 6, 17, 19, 40)
    assert conversation.sessions[0].turns[2].text == (
        "Look at them! [image: a photo of small green plants in clay pots]"
    )


def test_longmemeval_entry_becomes_one_conversation() -> None:
    (conversation,) = read_conversations(FIXTURES / "longmemeval.json")
    assert conversation.conversation_id == "tiny-q1"
    assert [s.session_id for s in conversation.sessions] == ["sess-a", "sess-b"]
    assert conversation.sessions[0].timestamp == datetime(2023, 5, 20, 2, 21)
    assert conversation.speakers == ["User", "Assistant"]
    assert [t.turn_id for t in conversation.sessions[1].turns] == ["D2:1", "D2:3"]  # empty D2:2 skipped
    roles = {t.speaker: t.role for s in conversation.sessions for t in s.turns}
    assert roles == {"User": "owner", "Assistant": "assistant"}  # "What did I say…" asks for the user's turns


def test_chatgpt_keeps_visible_user_and_assistant_text() -> None:
    (conversation,) = read_conversations(FIXTURES / "chatgpt.json")
    (session,) = conversation.sessions
    assert conversation.conversation_id == "conv-trip"
    assert session.timestamp == datetime(2023, 11, 14, 22, 13, 30)  # its day's first message
    assert [(t.turn_id, t.speaker) for t in session.turns] == [
        ("n1", "user"),
        ("n2", "ChatGPT"),
        ("n3", "user"),
        ("n4", "ChatGPT"),
    ]
    assert session.turns[2].text == "Is this jacket warm enough?"


def test_chatgpt_follows_only_the_current_branch() -> None:
    (conversation,) = read_conversations(FIXTURES / "chatgpt_edited.json")
    texts = [t.text for t in conversation.sessions[0].turns]
    assert texts == [
        "Gift ideas for my brother who likes climbing?",
        "A chalk bag with his initials, or a day pass at a bouldering gym.",
    ]


def test_whole_locomo_file_parses() -> None:
    """How fast is a figure of bench/ingest.py (its `parse` line), not an assertion here."""
    if not LOCOMO_DEV.exists():
        pytest.skip("LoCoMo dev file not available")
    conversations = read_conversations(LOCOMO_DEV)
    assert len(conversations) == 5
    assert sum(len(s.turns) for c in conversations for s in c.sessions) > 2000


def test_missing_directory_and_empty_files(tmp_path: Path) -> None:
    assert "no such file" in refusal(tmp_path / "absent.json")
    (tmp_path / "folder.json").mkdir()
    assert "directory" in refusal(tmp_path / "folder.json")
    assert "empty" in refusal(write(tmp_path, "zero.json", b""))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    assert "not a regular file" in refusal(tmp_path / "pipe.json")


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "latin.json", b'{\n"sessions": [\n"caf\xe9"]}')
    assert "not UTF-8" in refusal(path) and "line 3" in refusal(path)


def test_malformed_json_gives_line_and_column(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, "cut.json", b'{\n  "sessions": [\n    {"turns": [}\n'))
    assert "line 3, column" in message


def test_deep_nesting_is_an_input_error(tmp_path: Path) -> None:
    assert "nested too deeply" in refusal(write(tmp_path, "deep.json", b"[" * 100_000 + b"]" * 100_000))


def test_undetectable_shape_says_what_it_looks_like(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, "odd.json", {"messages": []}))
    assert 'an object with keys "messages", in no format ripple knows' in message and "ripple ingest --help" in message
    with pytest.raises(InputError, match="native"):
        detect_format({"messages": []})


def test_wrong_type_names_json_path_and_line(tmp_path: Path) -> None:
    text = '{"sessions": [\n  {"turns": [\n    {"speaker": "A", "text": "x"},\n    {"speaker": null, "text": "y"}\n]}]}'
    message = refusal(write(tmp_path, "typed.json", text.encode()))
    assert message == "typed.json: sessions[0].turns[1].speaker (line 4): must be a string, got null"


def test_wrong_explicit_format_and_unknown_format(tmp_path: Path) -> None:
    wrong = refusal(FIXTURES / "native.json", fmt="locomo")
    assert "does not look like a LoCoMo file: it is ripple's native JSON" in wrong
    assert "unknown --format" in refusal(FIXTURES / "native.json", fmt="whatsap")
    refused = refusal(FIXTURES / "native.json", fmt="whatsapp")
    assert "is JSON (ripple's native JSON?), not a WhatsApp" in refused
    assert "try --format auto, or see `ripple ingest --help`" in refused  # one sentence, not '. see'


def test_oversized_turn_is_refused(tmp_path: Path) -> None:
    doc = {"sessions": [{"turns": [{"speaker": "A", "text": "x" * (10 * 1024 * 1024)}]}]}
    assert "at most" in refusal(write(tmp_path, "big.json", doc))


def test_parsers_called_directly_name_the_source() -> None:
    with pytest.raises(InputError, match=r"^chat\.json: sessions: must be an array"):
        parse_native({"sessions": 3}, "chat.json")


# --- property tests -------------------------------------------------------------------------------

clean_text = (
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).map(str.strip).filter(bool)
)
timestamps = st.none() | st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1))
turn_specs = st.tuples(clean_text, clean_text, st.booleans())  # speaker, text, give an explicit id
session_specs = st.tuples(timestamps, st.lists(turn_specs, max_size=5))


def native_document(sessions: list) -> tuple[dict, list]:
    """A native document and the (session id, timestamp, turns) it must parse back to."""
    doc_sessions, expected = [], []
    for number, (stamp, turns) in enumerate(sessions, start=1):
        doc_turns, expected_turns = [], []
        for position, (speaker, text, explicit) in enumerate(turns, start=1):
            turn_id = f"t{number}-{position}" if explicit else f"D{number}:{position}"
            doc_turns.append({"speaker": speaker, "text": text, **({"id": turn_id} if explicit else {})})
            expected_turns.append(Turn(turn_id, speaker, text))
        doc_sessions.append({"timestamp": stamp.isoformat() if stamp else None, "turns": doc_turns})
        expected.append((str(number), stamp, expected_turns))
    return {"conversation_id": "prop", "sessions": doc_sessions}, expected


@settings(max_examples=100, deadline=None)
@given(st.lists(session_specs, min_size=1, max_size=4))
def test_valid_native_documents_round_trip(sessions: list) -> None:
    document, expected = native_document(sessions)
    (conversation,) = parse_native(json.loads(json.dumps(document)), "prop.json")
    assert [(s.session_id, s.timestamp, s.turns) for s in conversation.sessions] == expected


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
near_turns = st.fixed_dictionaries(
    {"speaker": json_values, "text": json_values}, optional={"id": json_values, "image_caption": json_values}
)
near_sessions = st.fixed_dictionaries(
    {"turns": json_values | st.lists(near_turns | json_values, max_size=4)},
    optional={
        "timestamp": json_values | st.sampled_from(["2024-01-01T10:00", "2024-01-01T10:00+99:00"]),
        "id": json_values,
    },
)
near_native = st.fixed_dictionaries(
    {"sessions": json_values | st.lists(near_sessions, max_size=3)}, optional={"conversation_id": json_values}
)


@settings(max_examples=100, deadline=None)
@given(json_values | near_native | st.lists(near_native, max_size=3))
def test_any_json_parses_or_raises_input_error(value: object) -> None:
    for parser in PARSERS:
        try:
            parser(value, "any.json")
        except InputError as err:
            assert str(err).startswith("any.json: ") and "\n" not in str(err)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200) | (json_values | near_native).map(lambda v: json.dumps(v).encode()))
def test_any_file_content_reads_or_raises_input_error(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "blob.json"
        path.write_bytes(content)
        try:
            read_conversations(path)
        except InputError as err:
            assert str(err).startswith("blob.json: ") and "\n" not in str(err)


@pytest.mark.parametrize("name", ["dinner.json", "running.json", "moving.json"])
def test_sample_chats_are_native_and_sized_for_the_demo(name: str) -> None:
    path = Path(__file__).parent.parent / "sample_chats" / name
    assert detect_format(json.loads(path.read_text())) == "native"
    (conversation,) = read_conversations(path)
    turn_count = sum(len(session.turns) for session in conversation.sessions)
    assert 3 <= len(conversation.sessions) <= 5 and 40 <= turn_count <= 90
    assert len(conversation.speakers) == 2
    assert all(session.timestamp is not None for session in conversation.sessions)
