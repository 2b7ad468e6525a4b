"""Export files through the write path: a newer export of the same chats adds only what is new, a refusal writes
nothing, and the CLI checks --format before it reads a file."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

from chats import counts, new_memory, one_error_line, run, stored_counts

from ripplecli.api import Memory
from ripplecli.formats import read_conversations

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
WHATSAPP = (FIXTURES / "WhatsApp Chat with Maya.txt").read_text()
LATER = "14/02/2024, 08:00 - Maya: Pepper chewed my running shoes.\n14/02/2024, 08:03 - Alex: Oh no!\n"


def stored_turns(memory, conversation: str) -> list[tuple[str, str]]:
    """(session, turn id) of every stored source turn of a conversation."""
    return memory.store.con.execute(
        "SELECT session_id, turn_id FROM sources WHERE conversation_id = ? ORDER BY position", [conversation]
    ).fetchall()


def test_newer_whatsapp_export_adds_only_new_messages(tmp_path, fake_settings, fake_extractor):
    old = tmp_path / "old" / "WhatsApp Chat with Maya.txt"
    new = tmp_path / "new" / "WhatsApp Chat with Maya.txt"
    old.parent.mkdir()
    new.parent.mkdir()
    old.write_text(WHATSAPP)
    new.write_text(WHATSAPP + LATER)  # the same chat exported a day later
    with new_memory(tmp_path / "store", fake_settings) as memory:
        first = memory.ingest(old)
        second = memory.ingest(new)
        again = memory.ingest(new)
        (conversation,) = memory.store.con.execute("SELECT conversation_id FROM conversations").fetchone()
        turns = stored_turns(memory, conversation)
    assert (first.new_sources, second.new_sources, second.duplicates) == (7, 2, 7)
    assert (again.new_sources, again.duplicates) == (0, 9)
    assert len(turns) == len(set(turns)) == 9 and turns[-1][0] == "2024-02-14"


def _chat_file(folder: Path, name: str, text: str) -> Path:
    """A WhatsApp export as the phone names it, in its own folder."""
    folder.mkdir()
    (folder / f"WhatsApp Chat with {name}.txt").write_text(text)
    return folder / f"WhatsApp Chat with {name}.txt"


def test_a_capped_whatsapp_export_lands_in_the_chat_it_continues(tmp_path, fake_settings, fake_extractor):
    lines = WHATSAPP.splitlines(keepends=True)
    capped = "".join(lines[5:]) + LATER  # WhatsApp cut the oldest messages, up to the address
    other = "02/03/2024, 10:00 - Maya: Hi, it's Maya from the climbing gym.\n02/03/2024, 10:01 - Alex: Hi Maya!\n"
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(_chat_file(tmp_path / "old", "Maya", WHATSAPP))
        newer = memory.ingest(_chat_file(tmp_path / "new", "Maya", capped))
        namesake = memory.ingest(_chat_file(tmp_path / "other", "Maya", other))  # another Maya, no shared message
        chats = memory.store.con.execute(
            "SELECT conversation_id, count(*) FROM sources GROUP BY 1 ORDER BY 2 DESC"
        ).fetchall()
    assert (newer.new_sources, newer.duplicates) == (2, 4)
    assert (namesake.new_sources, namesake.duplicates) == (2, 0)
    assert [n for _, n in chats] == [9, 2] and all(c.startswith("whatsapp-maya-") for c, _ in chats)
    assert read_conversations(tmp_path / "old")[0].conversation_id == chats[0][0]


def test_overlapping_telegram_exports_never_duplicate(tmp_path, fake_settings, fake_extractor):
    chat = json.loads((FIXTURES / "telegram_chat.json").read_text())
    full = json.loads((FIXTURES / "telegram_full.json").read_text())  # holds the chat's first two messages
    later = tmp_path / "later.json"
    extra = {**chat["messages"][2], "id": 1010, "date": "2024-03-05T08:00:00", "date_unixtime": "1709622000"}
    later.write_text(json.dumps({**chat, "messages": [*chat["messages"][2:], {**extra, "text": "See you Friday!"}]}))
    with new_memory(tmp_path / "store", fake_settings) as memory:
        reports = [memory.ingest(FIXTURES / "telegram_full.json"), memory.ingest(FIXTURES / "telegram_chat.json")]
        reports.append(memory.ingest(later))
        turns = stored_turns(memory, "telegram-222")
    assert [r.new_sources for r in reports] == [5, 1, 1]
    assert [r.duplicates for r in reports] == [0, 2, 2]
    assert [t for _, t in turns] == ["1002", "1003", "1005", "1010"]
    assert full["chats"]["list"][0]["id"] == 222


def test_same_chatgpt_conversation_from_two_files_is_stored_once(tmp_path, fake_settings, fake_extractor):
    first = tmp_path / "a" / "conversations.json"
    second = tmp_path / "b" / "renamed.json"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text((FIXTURES / "chatgpt_tree.json").read_text())
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(first)
        report = memory.ingest(second)
        stored = memory.store.con.execute("SELECT DISTINCT conversation_id FROM sources").fetchall()
    assert (report.new_sources, report.duplicates, report.skipped) == (0, 5, 4)
    assert stored == [("67e1-recife",)]


def test_zip_through_the_cli_and_the_summary_counts_skipped(tmp_path, fake_settings, fake_extractor):
    archive = tmp_path / "chatgpt.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("conversations.json", (FIXTURES / "chatgpt_tree.json").read_text())
        out.writestr("user.json", "{}")
    store = tmp_path / "store"
    with new_memory(store, fake_settings):
        pass
    result = run("ingest", str(archive), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert (report["new_sources"], report["skipped"]) == (5, 4)


def test_refused_exports_leave_the_store_unchanged(tmp_path, fake_settings, fake_extractor):
    store = tmp_path / "store"
    with new_memory(store, fake_settings) as memory:
        memory.ingest(FIXTURES / "discord.json")
        before = counts(memory)
    bad = tmp_path / "bad.txt"
    bad.write_text("01/02/2024, 10:00 - Ana: hi\n")
    cases = [
        (["--format", "bogus", str(bad)], "unknown --format 'bogus'"),
        (["--format", "whatsap", str(tmp_path / "missing.txt")], "unknown --format 'whatsap'"),
        (["--format", "telegram", str(bad)], "bad.txt: is not JSON but a WhatsApp chat export"),
        (["--format", "whatsapp", str(FIXTURES / "telegram_chat.json")], "(a Telegram export?)"),
        ([str(FIXTURES / "claude.json"), str(bad), str(tmp_path / "plain.md")], "plain.md: no such file"),
    ]
    for args, expected in cases:
        result = run("ingest", *args, "--store", str(store))
        assert result.exit_code == 2 and expected in one_error_line(result), (args, result.output)
    assert stored_counts(store) == before


def test_an_export_folder_through_the_cli(tmp_path, fake_settings, fake_extractor):
    store = tmp_path / "store"
    with new_memory(store, fake_settings):
        pass
    first = run("ingest", str(FIXTURES / "slack"), "--store", str(store), "--json")
    again = run("ingest", str(FIXTURES / "slack"), "--store", str(store), "--json")
    assert first.exit_code == again.exit_code == 0, first.output
    assert json.loads(first.stdout)[0]["new_sources"] == 4
    assert (json.loads(again.stdout)[0]["new_sources"], json.loads(again.stdout)[0]["duplicates"]) == (0, 4)


def test_a_folder_ingest_says_what_it_read_and_what_it_passed_over(tmp_path, fake_settings, fake_extractor):
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "WhatsApp Chat with Maya.txt").write_text(WHATSAPP)
    (folder / "README.md").write_text("# Project\n\nHow to build it.\n")
    (folder / "package.json").write_text('{"name": "project", "version": "1.0.0"}')
    (folder / "logo.png").write_bytes(b"\x89PNG")
    store = tmp_path / "store"
    with new_memory(store, fake_settings):
        pass
    result = run("ingest", str(folder), "--store", str(store))
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[:2] == [
        "project: read 2 files: notes: README.md; whatsapp: WhatsApp Chat with Maya.txt",
        "project: passed over 3 files: hidden: .git/HEAD; not .json, .txt or .md: logo.png; in no format ripple "
        "reads: package.json",
    ]


def test_a_slack_export_in_a_folder_is_read_with_the_files_beside_it(tmp_path):
    """Issue 29, point 2: the Slack export is read as a whole, and every other file as what it is."""
    import shutil

    from ripplecli.formats.load import Member, read_input

    folder = tmp_path / "exports"
    shutil.copytree(FIXTURES / "slack", folder / "slack")
    shutil.copy(FIXTURES / "chatgpt.json", folder / "chatgpt.json")  # beside the Slack export: read on its own
    (folder / "slack" / "notes.md").write_text("A note.\n")
    reading = read_input(folder)
    ids = [c.conversation_id for c in reading.conversations]
    assert ids == ["slack-C01", "slack-D0DM1", "conv-trip", "note-slack/notes.md"]
    assert [m for m in reading.members if m.format != "slack"] == [
        Member("chatgpt.json", "chatgpt"),
        Member("slack/notes.md", "notes"),
    ]
    read = [m for m in reading.members if m.format == "slack"]
    assert read and all(m.path.startswith("slack/") and not m.passed_over for m in read)


def test_a_long_conversation_is_written_in_batches_with_the_same_result(
    tmp_path, fake_settings, fake_extractor, monkeypatch
):
    import ripplecli.ingest

    whatsapp = FIXTURES / "WhatsApp Chat with Maya.txt"
    results = []
    for batch in (500, 3):
        monkeypatch.setattr(ripplecli.ingest, "BATCH_TURNS", batch)
        with new_memory(tmp_path / f"store-{batch}", fake_settings) as memory:
            report = memory.ingest(whatsapp)
            edges = memory.store.con.execute(
                "SELECT m1.position, m2.position FROM edges e JOIN memories m1 ON m1.memory_id = e.src "
                "JOIN memories m2 ON m2.memory_id = e.dst WHERE channel = 'contiguity' ORDER BY 1"
            ).fetchall()
            results.append((report.new_sources, report.memories, counts(memory)["sources"], edges))
    assert results[0] == results[1]
    assert results[0][3] == [(0, 1), (1, 2), (2, 3), (4, 5)]  # a link across the batch border (2 → 3) too


def test_an_edited_message_in_a_newer_export_keeps_its_stored_text(tmp_path, fake_settings, fake_extractor):
    chat = json.loads((FIXTURES / "telegram_chat.json").read_text())
    edited = [
        {**m, "text": "I signed the lease for the flat on Elm Street!"} if m["id"] == 1002 else m
        for m in chat["messages"]
    ]
    extra = {**chat["messages"][2], "id": 1010, "date": "2024-03-05T08:00:00", "date_unixtime": "1709622000"}
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**chat, "messages": [*edited, {**extra, "text": "See you Friday!"}]}))
    store = tmp_path / "store"
    with new_memory(store, fake_settings) as memory:
        memory.ingest(FIXTURES / "telegram_chat.json")
    result = run("ingest", str(newer), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert (report["new_sources"], report["duplicates"], report["edited"]) == (1, 2, 1)
    assert "1 message changed since it was stored" in result.stderr
    with Memory(store, read_only=True) as memory:
        (text,) = memory.store.con.execute("SELECT text FROM sources WHERE turn_id = '1002'").fetchone()
    assert text == "I signed the lease for the apartment on Elm Street!"


def test_assistants_are_called_chatgpt_and_claude_and_an_older_store_sees_no_edit(
    tmp_path, fake_settings, fake_extractor
):
    store = tmp_path / "store"
    with new_memory(store, fake_settings) as memory:
        memory.ingest(FIXTURES / "chatgpt.json", owner="Alex")
        chats = read_conversations(FIXTURES / "claude.json")
        as_before = [  # how ripple stored Claude's replies before they were given its name
            replace(c, sessions=[
                replace(s, turns=[replace(t, speaker="assistant") if t.role == "assistant" else t for t in s.turns])
                for s in c.sessions
            ])
            for c in chats
        ]  # fmt: skip
        memory.ingest(FIXTURES / "claude.json", conversations=as_before, owner="Alex")
        again = memory.ingest(FIXTURES / "claude.json", owner="Alex")
        speakers = memory.store.con.execute("SELECT DISTINCT speaker, role FROM sources ORDER BY 1").fetchall()
    assert (again.new_sources, again.edited, again.duplicates) == (0, 0, 4)
    assert speakers == [("Alex", "owner"), ("ChatGPT", "assistant"), ("assistant", "assistant")]
    shown = run("show", "m2", "--store", str(store))
    assert "ChatGPT: " in shown.stdout and "ChatGPT" in shown.stdout.split("source turns")[1]
