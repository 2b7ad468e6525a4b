"""The export readers: what each one reads from its fixture, who is the owner, when each message was said."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ripplecli.errors import InputError
from ripplecli.formats import read_conversations
from ripplecli.model import Conversation, Turn

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
WHATSAPP = FIXTURES / "WhatsApp Chat with Maya.txt"


def turns(conversation: Conversation) -> list[Turn]:
    """Every turn of a conversation, in order."""
    return [turn for session in conversation.sessions for turn in session.turns]


def texts(conversation: Conversation) -> list[str]:
    """Every turn's text."""
    return [turn.text for turn in turns(conversation)]


def test_whatsapp_android_skips_system_lines_and_media_and_joins_lines() -> None:
    (chat,) = read_conversations(WHATSAPP)
    assert chat.title == "Maya" and chat.conversation_id.startswith("whatsapp-maya-")
    assert [s.session_id for s in chat.sessions] == ["2024-01-31", "2024-02-01", "2024-02-13"]
    said = texts(chat)
    assert said[2] == "Perfect. Can you send me the address?\nIt's for my mum, she worries.\nThanks!"
    assert not any("omitted" in t or "deleted" in t or "encrypted" in t or "Missed" in t for t in said)
    assert "Wednesdays work for me. I'll bring the chalk bag." in said  # the invisible mark is gone
    assert not any("changed the subject" in t for t in said)
    assert turns(chat)[0].said_at == datetime(2024, 1, 31, 9, 2)
    # notice and subject change, media, deleted, missed call: the summary's "skip", by reason
    assert chat.skipped == {"system line": 2, "media": 1, "deleted": 1, "call": 1}


def test_whatsapp_owner_is_the_other_person_of_a_chat_named_after_one() -> None:
    (chat,) = read_conversations(WHATSAPP)
    assert {(t.speaker, t.role) for t in turns(chat)} == {("Maya", ""), ("Alex", "owner")}


def test_whatsapp_ios_twelve_hour_clock_brackets_and_marks() -> None:
    (chat,) = read_conversations(FIXTURES / "whatsapp_ios.txt")
    said = turns(chat)
    assert [t.speaker for t in said] == ["Sam Rivera", "Jordan", "Sam Rivera", "Jordan", "Jordan"]
    assert said[0].said_at == datetime(2024, 1, 5, 21, 15, 2)  # 1/5/24 9:15 PM: month first (13 is a day)
    assert said[3].text == "From the outlet in Milwaukee.\nThe blue ones were half price."
    assert said[4].text == "Training plan attached"  # the edit note is dropped
    assert all(t.role == "" for t in said)  # the file name does not say whose phone it was


def test_whatsapp_day_month_order_is_decided_by_the_whole_file(tmp_path: Path) -> None:
    lines = "03/04/2024, 10:00 - Ana: first\n05/04/2024, 10:00 - Ben: second\n25/04/2024, 10:00 - Ana: third\n"
    (chat,) = read_conversations(_write(tmp_path, "chat.txt", lines))
    assert [t.said_at.date().isoformat() for t in turns(chat)] == ["2024-04-03", "2024-04-05", "2024-04-25"]
    us = "04/03/2024, 10:00 - Ana: first\n04/25/2024, 10:00 - Ben: second\n"
    (chat,) = read_conversations(_write(tmp_path, "us.txt", us))
    assert [t.said_at.date().isoformat() for t in turns(chat)] == ["2024-04-03", "2024-04-25"]
    (chat,) = read_conversations(FIXTURES / "whatsapp_us.txt")  # ambiguous days, 12-hour clock: month first
    assert turns(chat)[2].said_at == datetime(2024, 2, 4, 20, 45)


def test_whatsapp_other_locales(tmp_path: Path) -> None:
    german = "31.12.23, 23:59 - Lena: Frohes neues Jahr!\n01.01.24, 00:01 - Tom: Dir auch!\n"
    (chat,) = read_conversations(_write(tmp_path, "de.txt", german))
    assert turns(chat)[1].said_at == datetime(2024, 1, 1, 0, 1)
    iso = "[2024-01-02, 08:00:00] Lena: Guten Morgen\n"
    (chat,) = read_conversations(_write(tmp_path, "iso.txt", iso))
    assert turns(chat)[0].said_at == datetime(2024, 1, 2, 8, 0)


def test_whatsapp_ids_are_stable_and_repeats_distinct(tmp_path: Path) -> None:
    body = "01/02/2024, 10:00 - Ana: ok\n01/02/2024, 10:00 - Ana: ok\n"
    (one,) = read_conversations(_write(tmp_path, "a.txt", body))
    (two,) = read_conversations(_write(tmp_path, "a.txt", body + "01/02/2024, 10:05 - Ben: fine\n"))
    ids = [t.turn_id for t in turns(one)]
    assert len(set(ids)) == 2 and [t.turn_id for t in turns(two)][:2] == ids
    assert one.conversation_id == two.conversation_id  # file name + first message


def test_telegram_single_chat() -> None:
    (chat,) = read_conversations(FIXTURES / "telegram_chat.json")
    assert (chat.conversation_id, chat.title) == ("telegram-222", "Nora Klein")
    said = turns(chat)
    assert [t.turn_id for t in said] == ["1002", "1003", "1005"]  # service and sticker-only messages skipped
    assert sum(chat.skipped.values()) == 3 and chat.skipped["service message"] >= 1
    assert said[1].text == "Congrats! Is it the one near Harbor Grill? https://maps.example/elm"
    assert [t.role for t in said] == ["", "owner", ""]  # in a personal chat the peer's id is the chat's
    assert said[2].said_at == datetime(2024, 3, 3, 20, 30)  # date_unixtime (UTC); `date` is the local clock
    assert chat.sessions[1].timestamp == datetime(2024, 3, 3, 21, 30)


def test_telegram_full_export_lists_chats_and_names_the_owner() -> None:
    personal, group = read_conversations(FIXTURES / "telegram_full.json")
    assert personal.conversation_id == "telegram-222"
    assert (group.conversation_id, group.title) == ("telegram-1699999999", "Climbing crew")
    assert [(t.speaker, t.role) for t in turns(group)] == [("Sam", ""), ("Alex Moreau", "owner"), ("user444", "")]


def test_claude_export() -> None:
    (chat,) = read_conversations(FIXTURES / "claude.json")  # the conversation without messages is dropped
    assert (chat.conversation_id, chat.title) == ("4b1c-trip", "Lisbon trip planning")
    said = turns(chat)
    assert [(t.turn_id, t.speaker, t.role) for t in said] == [
        ("m-1", "human", "owner"),
        ("m-2", "Claude", "assistant"),  # the assistant as people call it; the export says "assistant"
        ("m-3", "human", "owner"),
        ("m-4", "Claude", "assistant"),
    ]
    assert said[1].text == "Alfama is charming and close to the river; Príncipe Real is quieter."  # no tool blocks
    assert said[2].text == "We picked Alfama. Any bakery nearby?"  # `text` when there is no content
    assert said[0].said_at == datetime(2024, 4, 2, 8, 0, 5, 123456)
    assert [s.session_id for s in chat.sessions] == ["2024-04-02", "2024-04-03"]


USERS_JSON = '[{"uuid": "u-1", "full_name": "Jane  Doe", "email_address": "jane@example.com"}]'


def test_a_claude_export_names_its_owner_from_users_json(tmp_path: Path) -> None:
    """The zip as Claude sends it: conversations.json beside users.json, whose one user's name the owner's turns get
    (the export itself calls them "human"); the listing says what users.json was read for."""
    from ripplecli.formats.load import read_input

    export = tmp_path / "data-2024-04-05.zip"
    with zipfile.ZipFile(export, "w") as out:
        out.writestr("conversations.json", (FIXTURES / "claude.json").read_text())
        out.writestr("users.json", USERS_JSON)
        out.writestr("projects.json", "[]")
    reading = read_input(export)
    (chat,) = reading.conversations
    assert [(t.speaker, t.role) for t in turns(chat)][:2] == [("Jane Doe", "owner"), ("Claude", "assistant")]
    formats = {m.path: m.format for m in reading.members}
    assert formats["users.json"] == "claude account (the owner's name)" and formats["projects.json"] is None
    unzipped = tmp_path / "unzipped"
    unzipped.mkdir()
    (unzipped / "conversations.json").write_text((FIXTURES / "claude.json").read_text())
    (unzipped / "users.json").write_text(USERS_JSON)
    (alone,) = read_conversations(unzipped / "conversations.json")  # the file given on its own, users.json beside
    assert turns(alone)[0].speaker == "Jane Doe"


@pytest.mark.parametrize(
    "users",
    ["not json", "[]", '[{"full_name": "A"}, {"full_name": "B"}]', '[{"full_name": 7}]', '[{"full_name": "  "}]'],
)
def test_a_users_json_that_names_nobody_leaves_the_owner_as_the_export_calls_them(tmp_path: Path, users: str) -> None:
    (tmp_path / "conversations.json").write_text((FIXTURES / "claude.json").read_text())
    (tmp_path / "users.json").write_text(users)
    (chat,) = read_conversations(tmp_path / "conversations.json")
    assert turns(chat)[0].speaker == "human"
    if users != "not json":  # in a folder every .json file is read, and a broken one is refused as before
        (in_folder,) = read_conversations(tmp_path)
        assert turns(in_folder)[0].speaker == "human"


def test_chatgpt_without_current_node_reads_the_newest_leaf() -> None:
    (chat,) = read_conversations(FIXTURES / "chatgpt_tree.json")
    assert (chat.conversation_id, chat.title) == ("67e1-recife", "Recife sugar tour")
    said = turns(chat)
    assert [t.turn_id for t in said] == ["a1", "a3", "a5", "a6", "a7"]  # not the older branch b2
    assert said[0].text == "Plan a 3-day sugar-trade history tour of Recife for me."  # the image part is not text
    assert (said[1].speaker, said[1].role) == ("web", "assistant")  # tool output kept
    assert said[3].text == "Recife sugar tour: museum, engenho, Olinda."  # the canvas document
    # hidden system prompt, code sent to a tool, reasoning; and the older branch b2
    assert chat.skipped == {"system message": 1, "sent to a tool": 1, "no text": 1, "other branch": 1}
    assert said[4].said_at == datetime(2024, 3, 10, 16, 1, 40)  # each message's own time
    assert [t.role for t in said] == ["owner", "assistant", "assistant", "assistant", "owner"]


def test_chatgpt_speakers_are_the_exports_user_and_chatgpt() -> None:
    (chat,) = read_conversations(FIXTURES / "chatgpt.json")
    assert [(t.turn_id, t.speaker, t.role) for t in turns(chat)] == [
        ("n1", "user", "owner"),
        ("n2", "ChatGPT", "assistant"),
        ("n3", "user", "owner"),
        ("n4", "ChatGPT", "assistant"),
    ]
    assert chat.title == "Trip packing list"


def test_discord_export() -> None:
    (chat,) = read_conversations(FIXTURES / "discord.json")
    assert (chat.conversation_id, chat.title) == ("discord-900000000000000002", "Book club / general")
    said = turns(chat)
    assert [(t.turn_id, t.speaker) for t in said] == [("1101", "Lena"), ("1102", "omar.h")]
    assert said[0].said_at == datetime(2024, 4, 20, 16, 1, 0, 123000)  # +02:00 converted to UTC
    assert chat.sessions[0].session_id == "2024-04-20" and sum(chat.skipped.values()) == 2


def test_slack_export_folder() -> None:
    general, direct = read_conversations(FIXTURES / "slack")
    assert (general.conversation_id, general.title) == ("slack-C01", "#general")
    assert texts(general) == [
        "Launch review moves to Thursday, @Priya Shah can you book the room?",
        "Booked: room 7 at 3pm",
        "Slides are in the shared drive & ready.",
    ]
    assert [t.speaker for t in turns(general)] == ["Alex", "Priya Shah", "Alex"]
    assert turns(general)[0].turn_id == "1705311000.000200"
    assert (direct.conversation_id, direct.title) == ("slack-D0DM1", "messages: Alex, Priya Shah")


def test_notes_one_turn_per_paragraph_dated_by_front_matter() -> None:
    (note,) = read_conversations(FIXTURES / "notes_trip.md")
    assert note.title == "Porto trip notes"
    assert texts(note) == [
        "Booked the 14:30 train to Porto for Friday; Maya is coming too.",
        "The hostel is on Rua da Ribeira, right by the river.\nCheck-in after 15:00.",
        "Must try a francesinha at Café Santiago.",
    ]
    assert {(t.role, t.said_at) for t in turns(note)} == {("owner", datetime(2024, 2, 20))}


def test_notes_without_front_matter_use_the_file_time(tmp_path: Path) -> None:
    path = _write(tmp_path, "todo.txt", (FIXTURES / "notes_plain.txt").read_text())
    import os

    os.utime(path, (1_700_000_000, 1_700_000_000))
    (note,) = read_conversations(path)
    assert note.sessions[0].timestamp == datetime(2023, 11, 14, 22, 13, 20) and len(turns(note)) == 2


def test_zip_of_an_export_is_read_as_it_comes(tmp_path: Path) -> None:
    archive = tmp_path / "WhatsApp Chat - Maya.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("_chat.txt", WHATSAPP.read_text())
        out.writestr("00000012-PHOTO-2024-01-31-09-06-00.jpg", b"\xff\xd8\xff")
    (chat,) = read_conversations(archive)
    assert chat.title == "Maya" and len(turns(chat)) == 7
    export = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(export, "w") as out:
        out.writestr("conversations.json", (FIXTURES / "chatgpt_tree.json").read_text())
        out.writestr("user.json", json.dumps({"id": "user-1", "email": "a@example.com"}))
        out.writestr("chat.html", "<html></html>")
    assert [c.conversation_id for c in read_conversations(export)] == ["67e1-recife"]


def test_zip_of_a_slack_export_with_a_top_folder(tmp_path: Path) -> None:
    archive = tmp_path / "slack.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted((FIXTURES / "slack").rglob("*.json")):
            out.write(path, "Acme Slack export/" + path.relative_to(FIXTURES / "slack").as_posix())
    assert [c.conversation_id for c in read_conversations(archive)] == ["slack-C01", "slack-D0DM1"]


def test_explicit_format_reads_the_named_format() -> None:
    assert read_conversations(WHATSAPP, "whatsapp")[0].title == "Maya"
    assert read_conversations(FIXTURES / "notes_plain.txt", "notes")[0].conversation_id == "note-notes_plain.txt"


@pytest.mark.parametrize(
    ("name", "body", "fmt", "expected"),
    [
        ("chat.txt", "01/02/2024, 10:00 - Ana: hi\n", "bogus", "unknown --format 'bogus' (choose from: auto, "),
        ("chat.txt", "01/02/2024, 10:00 - Ana: hi\n", "telegram", "is not JSON but a WhatsApp chat export"),
        ("plain.txt", "Just a line of text.\n", "whatsapp", "is plain text without WhatsApp message lines"),
        ("result.json", '{"messages": [], "id": 5}', "whatsapp", "is JSON (a Telegram export?), not a WhatsApp chat"),
        ("page.html", "<!DOCTYPE html><html></html>", "auto", "an HTML page"),
        (
            "log.txt",
            "2024-01-02 10:00 Ana hi\n2024-01-02 10:01 Ben yo\n",
            "auto",
            "dated lines, not in a WhatsApp form",
        ),
        ("data.csv", "a,b\n1,2\n", "auto", "plain text without WhatsApp message lines"),
        (
            "odd.json",
            '{"messages": [{"role": "user", "content": "hi"}]}',
            "auto",
            "an OpenAI-style message list",
        ),
        ("openai.json", '[{"role": "user", "content": "hi"}]', "auto", "an OpenAI-style message list"),
        ("keys.json", '{"alpha": 1, "beta": 2}', "auto", 'an object with keys "alpha", "beta"'),
        ("one.json", '{"messages": [], "id": 1}', "slack", "--format slack reads an export folder or its .zip"),
    ],
)
def test_refusals_name_what_the_file_looks_like(tmp_path: Path, name: str, body: str, fmt: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        read_conversations(_write(tmp_path, name, body), fmt)
    message = str(caught.value)
    assert expected in message and "\n" not in message


def test_unknown_json_points_to_help_and_the_native_format(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"ripple ingest --help.*native JSON"):
        read_conversations(_write(tmp_path, "odd.json", '{"alpha": 1}'))


def test_format_is_checked_before_the_file_is_read(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown --format 'whatsap'"):
        read_conversations(tmp_path / "does-not-exist.txt", "whatsap")


def test_zip_without_a_chat_names_its_files(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        out.writestr("user.json", "{}")
        out.writestr("photo.jpg", b"\xff\xd8")
    path = tmp_path / "export.zip"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(
        InputError, match=r"export\.zip: holds no chat export ripple knows \(1 readable files: user\.json\)"
    ):
        read_conversations(path)


def _write(folder: Path, name: str, body: str) -> Path:
    """A file with the given text."""
    path = folder / name
    path.write_text(body, encoding="utf-8")
    return path


def test_ios_system_lines_in_a_group_are_skipped() -> None:
    (chat,) = read_conversations(FIXTURES / "whatsapp_ios.txt")
    assert not any("icon" in text for text in texts(chat))  # "Sam Rivera: ‎Sam Rivera changed this group's icon"


# --- property tests: any text, WhatsApp-like or not, parses or is one InputError line ---------------------------
_PIECES = st.sampled_from(
    [
        "31/01/2024, 09:02 - ",
        "[1/5/24, 9:15:02\u202fPM] ",
        "13/13/2024, 25:61 - ",
        "2024-02-30, 10:00 - ",
        "Maya: ",
        "Alex: ",
        "\u200e",
        "<Media omitted>",
        "---\ndate: 2024-01-01\n---\n",
        "# Title",
        "\n",
        "\n\n",
        '"',
        ": ",
    ]
)
_TEXT = st.lists(_PIECES | st.text(max_size=12), max_size=30).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT, st.sampled_from(["chat.txt", "note.md", "WhatsApp Chat with Maya.txt"]), st.booleans())
def test_any_text_reads_or_raises_one_line(text: str, name: str, zipped: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / (name + ".zip" if zipped else name)
        if zipped:
            with zipfile.ZipFile(path, "w") as out:
                out.writestr(name, text)
        else:
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            conversations = read_conversations(path)
        except InputError as err:
            assert str(err).startswith(f"{path.name}: ") and "\n" not in str(err)
        else:
            assert all(turn.speaker and turn.text for c in conversations for turn in turns(c))


@pytest.mark.parametrize(
    "fixture",
    ["telegram_full.json", "claude.json", "discord.json", "chatgpt_tree.json", "notes_trip.md", "whatsapp_ios.txt"],
)
def test_each_export_reads_the_same_from_a_zip(tmp_path: Path, fixture: str) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(FIXTURES / fixture, f"Export 2024/{fixture}")
        out.writestr("Export 2024/media/photo.jpg", b"\xff\xd8\xff")

    def identity(conversations: list[Conversation]) -> list[tuple[str, list[str]]]:
        return [(c.conversation_id.replace("Export 2024/", ""), [t.turn_id for t in turns(c)]) for c in conversations]

    assert identity(read_conversations(archive)) == identity(read_conversations(FIXTURES / fixture))


def test_an_explicit_format_reads_only_its_files_from_a_zip(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(FIXTURES / "chatgpt_tree.json", "conversations.json")
        out.writestr("user.json", json.dumps({"id": "user-1"}))
        out.write(FIXTURES / "notes_plain.txt", "readme.txt")
    assert [c.conversation_id for c in read_conversations(archive, "chatgpt")] == ["67e1-recife"]
    assert [c.conversation_id for c in read_conversations(archive)] == ["67e1-recife", "note-readme.txt"]
    with pytest.raises(InputError, match="holds no chat export ripple knows"):
        read_conversations(archive, "telegram")


def test_claude_reads_only_the_shown_branch(tmp_path: Path) -> None:
    (chat,) = read_conversations(FIXTURES / "claude_branches.json")
    assert [t.turn_id for t in turns(chat)] == ["q1b", "a1b", "q2"]  # the edited prompt's branch, not q1 / a1
    assert chat.skipped == {"other branch": 2}
    data = json.loads((FIXTURES / "claude_branches.json").read_text())
    data[0]["current_leaf_message_uuid"] = "a1"  # the page shows the first branch
    (chat,) = read_conversations(_write(tmp_path, "claude.json", json.dumps(data)))
    assert [t.turn_id for t in turns(chat)] == ["q1", "a1"]


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("WhatsApp Chat with Maya (1).txt", "Maya"),  # a second download of the same chat: the same conversation
        ("WhatsApp-Chat mit Lena Schmidt.txt", "Lena Schmidt"),
        ("Chat de WhatsApp con Ana.txt", "Ana"),
        ("Discussion WhatsApp avec Zoé.txt", "Zoé"),
    ],
)
def test_whatsapp_chat_name_from_localised_file_names(tmp_path: Path, name: str, title: str) -> None:
    (chat,) = read_conversations(_write(tmp_path, name, WHATSAPP.read_text()))
    assert chat.title == title
    if title == "Maya":
        assert chat.conversation_id == read_conversations(WHATSAPP)[0].conversation_id
