"""Issue 29, points 2, 5, 6, 7 and 8: a folder holding several exports reads them all; every message a reader does
not store is counted by reason; one bad message does not refuse a file; Messenger and Instagram chats are read;
a refusal or a wrong --format says what the file looks like."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from chats import new_memory, one_error_line, run

from ripplecli.errors import InputError
from ripplecli.formats import read_conversations
from ripplecli.formats.load import Member, read_input
from ripplecli.ingest import message_keys
from ripplecli.model import Conversation, Turn

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
WHATSAPP = FIXTURES / "WhatsApp Chat with Maya.txt"
MESSENGER = FIXTURES / "messenger_message_1.json"


def turns(conversation: Conversation) -> list[Turn]:
    """Every turn of a conversation, in order."""
    return [turn for session in conversation.sessions for turn in session.turns]


def _store(tmp_path: Path, fake_settings) -> Path:
    """An empty store for CLI runs."""
    with new_memory(tmp_path / "store", fake_settings):
        pass
    return tmp_path / "store"


# --- point 2: a folder with a Slack export inside reads everything else too --------------------------------
def _exports_folder(folder: Path) -> Path:
    """A folder as a person keeps their exports: a Slack workspace beside ChatGPT, WhatsApp and Telegram files."""
    shutil.copytree(FIXTURES / "slack", folder / "Acme Slack export")
    for name in ("chatgpt.json", "WhatsApp Chat with Maya.txt", "telegram_chat.json"):
        shutil.copy(FIXTURES / name, folder / name)
    return folder


def test_a_folder_with_a_slack_export_reads_every_export_in_it(tmp_path, fake_settings, fake_extractor):
    folder = _exports_folder(tmp_path / "exports")
    result = run("ingest", str(folder), "--store", str(_store(tmp_path, fake_settings)), "--json")
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert (report["conversations"], report["new_sources"]) == (5, 4 + 4 + 7 + 3)
    said = result.stderr.replace("\n", " ")
    assert "exports: read 10 files: slack: Acme Slack export/D0DM1/2024-01-16.json" in said
    for read_as in ("chatgpt: chatgpt.json", "telegram: telegram_chat.json", "whatsapp: WhatsApp Chat with Maya.txt"):
        assert read_as in said
    assert "passed over" not in said


def test_two_folder_exports_side_by_side_are_both_read(tmp_path):
    folder = tmp_path / "exports"
    shutil.copytree(FIXTURES / "slack", folder / "acme")
    shutil.copytree(FIXTURES / "slack", folder / "other")
    (folder / "other" / "channels.json").write_text(
        (FIXTURES / "slack" / "channels.json").read_text().replace('"C01"', '"C99"')
    )
    reading = read_input(folder)
    ids = [c.conversation_id for c in reading.conversations]
    assert ids == ["slack-C01", "slack-D0DM1", "slack-C99", "slack-D0DM1"]
    assert all(m.format == "slack" for m in reading.members)


# --- point 5: every message a reader leaves out is counted, by reason ---------------------------------------
def test_a_slack_channel_counts_its_bot_messages_joins_and_file_events(tmp_path, fake_settings, fake_extractor):
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest(FIXTURES / "slack")
    assert report.new_sources == 4
    assert (report.skipped, report.skipped_by_reason) == (4, {"event": 2, "bot message": 1, "no text": 1})


def test_chatgpt_branches_off_the_shown_thread_are_counted(tmp_path):
    (chat,) = read_conversations(FIXTURES / "chatgpt_noid.json")
    assert [t.turn_id for t in turns(chat)] == ["q1", "r1b", "q2", "r2"]
    assert chat.skipped == {"other branch": 1}  # r1, the answer regenerated as r1b


def test_the_summary_and_json_say_why_messages_were_left_out(tmp_path, fake_settings, fake_extractor):
    store = _store(tmp_path, fake_settings)
    result = run("ingest", str(WHATSAPP), str(FIXTURES / "chatgpt_tree.json"), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    whatsapp, chatgpt = json.loads(result.stdout)
    assert (whatsapp["skipped"], whatsapp["skipped_by_reason"]) == (
        5,
        {"system line": 2, "media": 1, "deleted": 1, "call": 1},
    )
    assert chatgpt["skipped_by_reason"] == {"system message": 1, "sent to a tool": 1, "no text": 1, "other branch": 1}
    said = result.stderr.replace("\n", " ")
    assert "WhatsApp Chat with Maya.txt: left out 5 messages: system line 2, media 1, deleted 1, call 1" in said
    table = run("ingest", str(FIXTURES / "slack"), "--store", str(store))
    assert "slack: left out 4 messages: event 2, bot message 1, no text 1" in table.stderr.replace("\n", " ")


# --- point 6: one bad message does not refuse a whole file --------------------------------------------------
def test_a_telegram_chat_with_messages_dated_only_by_unixtime_is_read(tmp_path):
    (chat,) = read_conversations(FIXTURES / "telegram_unixtime_only.json")
    said = turns(chat)
    assert [t.turn_id for t in said] == ["2001", "2002", "2003", "2004"]
    assert said[1].said_at.isoformat() == "2024-05-10T17:35:00"  # its date_unixtime, in UTC
    assert chat.skipped == {"missing date": 1}  # 2005 has no time at all: left out and counted
    assert said[0].offset == timedelta(hours=2)  # date and date_unixtime: the exporter's clock was 2 hours ahead
    assert said[1].offset is None  # the instant alone says nothing of where it was said


def test_a_telegram_message_dated_only_by_unixtime_is_the_message_dated_by_both(tmp_path):
    (chat,) = read_conversations(FIXTURES / "telegram_unixtime_only.json")
    data = json.loads((FIXTURES / "telegram_unixtime_only.json").read_text())
    data["messages"][1]["date"] = "2024-05-10T10:35:00"  # the same message exported in California
    (tmp_path / "result.json").write_text(json.dumps(data))
    (dated,) = read_conversations(tmp_path / "result.json")
    assert turns(dated)[1].offset == timedelta(hours=-7) and turns(chat)[1].offset is None
    assert message_keys(dated) == message_keys(chat)  # keyed by the instant, wherever it was exported


def test_a_discord_file_with_a_repeated_message_id_is_read(tmp_path, fake_settings, fake_extractor):
    (chat,) = read_conversations(FIXTURES / "discord_repeated_id.json")
    assert [t.turn_id for t in turns(chat)] == ["2201", "2202", "2203"]
    assert chat.skipped == {"repeated message id": 1}
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest(FIXTURES / "discord_repeated_id.json")
    assert (report.new_sources, report.skipped_by_reason) == (3, {"repeated message id": 1})


def test_a_file_most_of_whose_messages_cannot_be_read_is_refused(tmp_path):
    data = json.loads((FIXTURES / "telegram_unixtime_only.json").read_text())
    for message in data["messages"][1:]:
        message.pop("date", None)
        message["date_unixtime"] = "soon"
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(InputError) as caught:
        read_conversations(path)
    assert str(caught.value) == (
        'result.json: messages[1].date_unixtime (line 24): is not a Unix time: "soon"; 4 of 5 messages cannot be read'
    )


# --- point 7: Messenger and Instagram ------------------------------------------------------------------------
def test_a_messenger_chat_is_read_oldest_first_with_its_text_repaired() -> None:
    (chat,) = read_conversations(MESSENGER)
    assert (chat.conversation_id, chat.title) == ("messenger-mayachen_10158234567890123", "Maya Chen")
    said = turns(chat)
    assert said[0].text == "Are we still on for the Café Lumière on Saturday? ☕"  # not "CafÃ© LumiÃ¨re"
    assert said[2].text == "Perfect. Zoë might join us 😀"
    assert said[0].said_at.isoformat() == "2024-03-08T18:02:11"
    assert [t.said_at for t in said] == sorted(t.said_at for t in said)
    assert [(t.speaker, t.role) for t in said[:2]] == [("Maya Chen", ""), ("Alex Moreau", "owner")]
    assert [s.session_id for s in chat.sessions] == ["2024-03-08", "2024-03-09"]
    assert chat.skipped == {"media without text": 1, "call": 1, "deleted": 1}


def test_an_instagram_chat_is_read_the_same_way() -> None:
    (chat,) = read_conversations(FIXTURES / "instagram_message_1.json")
    said = turns(chat)
    assert said[1].text == "Signed up yesterday — my first race since Zürich!"
    assert [t.speaker for t in said] == ["Sam Rivera", "jordan.runs", "Sam Rivera"]
    assert chat.skipped == {"reaction": 1, "media without text": 1}


def test_a_messenger_chat_without_its_thread_path_is_named_by_its_messages(tmp_path: Path) -> None:
    data = json.loads(MESSENGER.read_text())
    del data["thread_path"]
    path = tmp_path / "message_1.json"
    path.write_text(json.dumps(data))
    (chat,) = read_conversations(path)
    assert chat.conversation_id.startswith("messenger-maya-chen-") and chat.named_by_file


def test_a_long_messenger_chat_in_two_files_is_one_conversation(tmp_path, fake_settings, fake_extractor):
    data = json.loads(MESSENGER.read_text())
    folder = tmp_path / "messages" / "inbox" / "mayachen_10158234567890123"
    folder.mkdir(parents=True)
    (folder / "message_1.json").write_text(json.dumps({**data, "messages": data["messages"][:4]}))
    (folder / "message_2.json").write_text(json.dumps({**data, "messages": data["messages"][4:]}))
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest(tmp_path / "messages")
        again = memory.ingest(MESSENGER)
        chats = memory.store.con.execute("SELECT DISTINCT conversation_id FROM sources").fetchall()
    assert (report.new_sources, again.new_sources, again.duplicates) == (5, 0, 5)
    assert chats == [("messenger-mayachen_10158234567890123",)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"name": "Nora", "type": "personal_chat", "messages": [{"id": 1, "date": "2024-03-02", "text": "Hi"}]},
            'is not a chat export ripple knows: it looks like a Telegram export, but without "id"',
        ),
        (
            {"channel": {"id": "1"}, "messages": [{"id": "1", "timestamp": "2024-04-20T18:01:00Z", "author": {}}]},
            'it looks like a DiscordChatExporter file, but without "guild"',
        ),
        ({"alpha": 1, "beta": 2}, 'it looks like an object with keys "alpha", "beta", in no format ripple knows'),
        ([1, 2], "it looks like a list of numbers, in no format ripple knows"),
    ],
)
def test_a_refused_file_is_named_after_what_it_most_looks_like(tmp_path: Path, body: object, expected: str) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(body))
    with pytest.raises(InputError) as caught:
        read_conversations(path)
    assert expected in str(caught.value), str(caught.value)


# --- point 8: a wrong --format says what the file is ---------------------------------------------------------
@pytest.mark.parametrize(
    ("fixture", "fmt", "expected"),
    [
        ("chatgpt.json", "claude", "does not look like a Claude export: it is a ChatGPT export; try --format auto"),
        ("discord.json", "telegram", "does not look like a Telegram export: it is a DiscordChatExporter file"),
        ("messenger_message_1.json", "discord", "it is a Messenger or Instagram chat (message_1.json)"),
        ("claude.json", "chatgpt", "does not look like a ChatGPT export: it is a Claude export"),
    ],
)
def test_a_wrong_format_says_what_the_file_looks_like(tmp_path, fake_settings, fixture, fmt, expected):
    result = run("ingest", str(FIXTURES / fixture), "--format", fmt, "--store", str(_store(tmp_path, fake_settings)))
    assert result.exit_code == 2 and expected in one_error_line(result), result.output


def test_a_chat_read_as_notes_is_warned_about(tmp_path, fake_settings, fake_extractor):
    reading = read_input(WHATSAPP, "notes")
    assert reading.warnings == [
        "WhatsApp Chat with Maya.txt: looks like a WhatsApp chat export, but was read as a note (.md/.txt), "
        "as --format notes asks"
    ]
    assert not read_input(WHATSAPP).warnings and not read_input(FIXTURES / "notes_plain.txt", "notes").warnings
    result = run("ingest", str(WHATSAPP), "--format", "notes", "--store", str(_store(tmp_path, fake_settings)))
    assert result.exit_code == 0 and "looks like a WhatsApp chat export" in result.stderr.replace("\n", " ")


# --- done when: a mixed folder of every format reads every file ----------------------------------------------
def test_a_mixed_folder_of_every_format_reads_every_file(tmp_path, fake_settings, fake_extractor):
    folder = tmp_path / "everything"
    shutil.copytree(FIXTURES, folder)
    reading = read_input(folder)
    assert [m for m in reading.members if m.format is None] == []
    read_as = {m.format for m in reading.members}
    assert {"chatgpt", "claude", "telegram", "whatsapp", "slack", "discord", "messenger", "notes"} <= read_as
    assert {"native", "locomo", "longmemeval"} <= read_as
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(folder)
        separately = [memory.ingest(FIXTURES / name) for name in sorted(p.name for p in FIXTURES.iterdir())]
    assert [r.new_sources for r in separately] == [0] * len(separately)
    assert Member("slack/users.json", "slack") in reading.members
