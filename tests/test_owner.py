"""The store's owner ("I"), when a memory was said apart from what time it refers to, titles, and old stores."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from chats import new_memory, run, session, write_chat
from owner_chats import OWNER_CHAT, write

from ripplecli.api import Memory
from ripplecli.errors import InputError
from ripplecli.formats import read_conversations
from ripplecli.store import schema


@pytest.fixture
def owner_store(tmp_path, fake_settings, fake_extractor) -> Path:
    """The owner chat ingested with the fake encoder and extractor, the owner named Alex."""
    with new_memory(tmp_path / "store", fake_settings) as memory:
        report = memory.ingest(write(tmp_path / "sugar.json", OWNER_CHAT), owner="Alex")
    assert report.owner == "Alex"
    return tmp_path / "store"


def _rows(store: Path, sql: str) -> list[tuple]:
    """Rows of a query on a store on disk."""
    with Memory(store, read_only=True) as memory:
        return memory.store.con.execute(sql).fetchall()


def test_native_reads_roles_said_at_and_title(tmp_path):
    (chat,) = read_conversations(write(tmp_path / "sugar.json", OWNER_CHAT))
    turns = chat.sessions[0].turns
    assert chat.title == "Sugar trade history"
    assert [t.role for t in turns] == ["owner", "assistant", "owner", "assistant"]
    assert turns[0].said_at.isoformat() == "2024-03-02T10:00:05"
    bad = json.loads(json.dumps(OWNER_CHAT))
    bad["sessions"][0]["turns"][0]["role"] = "boss"
    with pytest.raises(InputError, match=r"role.*must be one of owner, assistant"):
        read_conversations(write(tmp_path / "bad.json", bad))


def test_owner_turns_take_the_owners_name_and_assistants_keep_theirs(owner_store):
    rows = _rows(owner_store, "SELECT turn_id, speaker, role, said_at FROM sources ORDER BY position")
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("m1", "Alex", "owner"),
        ("m2", "ChatGPT", "assistant"),
        ("m3", "Alex", "owner"),
        ("m4", "ChatGPT", "assistant"),
    ]
    assert rows[2][3].isoformat() == "2024-03-02T10:07:00"
    ((speakers, title),) = _rows(owner_store, "SELECT speakers, title FROM conversations")
    assert speakers == ["Alex", "ChatGPT"] and title == "Sugar trade history"


def test_renaming_the_owner_does_not_duplicate_a_re_export(owner_store, tmp_path):
    with Memory(owner_store) as memory:
        report = memory.ingest(write(tmp_path / "again.json", OWNER_CHAT), owner="Alexandra")
    assert (report.new_sources, report.duplicates) == (0, 4)


def test_what_did_i_ask_ranks_the_owners_turn_above_the_assistants(owner_store):
    with Memory(owner_store, read_only=True) as memory:
        neutral = memory.recall("What was asked about the sugar trade?", k=4)
        mine = memory.recall("What did I ask about the sugar trade?", k=4)
    first = {e.source_turns[0]: e.rank for e in neutral.evidence}
    assert first["m2"] < first["m1"]  # the assistant's article wins on words alone
    ranks = {e.source_turns[0]: e.rank for e in mine.evidence}
    assert ranks["m1"] < ranks["m2"]
    assert mine.trace.focus.speaker == "alex"
    cues = mine.trace.query_cues
    assert cues.owner == "Alex" and "alex" in cues.persons and cues.focus == "alex"
    assert cues.text == "What did Alex ask about the sugar trade?"


def test_what_did_i_ask_is_answered_with_the_owners_own_question(owner_store):
    """The answerer reads the question as the recall does ("What did Alex ask…"), and a question that asks what
    someone asked is answered by the question they asked, not passed over as a question."""
    with Memory(owner_store, read_only=True) as memory:
        found = memory.recall("What did I ask about the sugar trade?", k=4, answer="typed")
    assert found.answer is not None and found.answer.span.endswith("?")
    assert "Alex, " in found.answer.text and "[m" in found.answer.text


def test_a_named_speaker_before_me_keeps_the_focus(owner_store):
    with Memory(owner_store, read_only=True) as memory:
        told = memory.recall("What did ChatGPT tell me about the sugar trade?", k=4)
    assert told.trace.focus.speaker == "chatgpt"
    assert told.evidence[0].source_turns == ["m2"]


def test_what_you_told_me_is_not_focused_on_the_owners_turns(owner_store):
    """ "…you told me", "our previous conversation": the asker wants the assistant's words, so their own turns are
    not put first; a request ("can you suggest…") still is about the asker."""
    with Memory(owner_store, read_only=True) as memory:
        told = memory.recall("What did you tell me about the sugar trade?", k=4)
        asked = memory.recall("Can you suggest more reading for my sugar trade question?", k=4)
    assert told.trace.focus is None and told.evidence[0].source_turns == ["m2"]
    assert asked.trace.focus is not None and asked.trace.focus.speaker == "alex"


def test_said_and_refers_to_in_show_json_and_list(owner_store):
    with Memory(owner_store, read_only=True) as memory:
        ids = {m["memory_id"]: m for m in memory.list_memories()}
    by_turn = {}
    for mid in ids:
        shown = json.loads(run("show", f"m{mid}", "--store", str(owner_store), "--json").stdout)
        by_turn[shown["sources"][0]["turn_id"]] = shown
    asked = by_turn["m1"]
    assert asked["said_at"] == "2024-03-02T10:00:05" and asked["refers_to"] is None
    assert asked["title"] == "Sugar trade history"
    assert "time_start" not in asked and asked["sources"][0]["role"] == "owner"
    text = run("show", f"m{asked['memory_id']}", "--store", str(owner_store)).stdout
    assert "said: 2024-03-02T10:00:05" in text and "refers to: - (the text names no time)" in text
    assert "Sugar trade history (c0ffee-1234)" in text
    listed = run("memories", "list", "--store", str(owner_store)).stdout
    assert "said" in listed and "2024-03-02 10:07" in listed and "Sugar trade" in listed


def test_relative_time_is_grounded_on_the_message_not_the_session(tmp_path, fake_settings):
    """Through the rules extractor: "yesterday" in a message is the day before that message was said."""
    chat = json.loads(json.dumps(OWNER_CHAT))
    chat["sessions"][0]["turns"][2]["said_at"] = "2024-03-04T09:00:00"  # two days after the session began
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write(tmp_path / "sugar.json", chat), owner="Alex")
        (visit,) = [m for m in memory.list_memories() if "distillery" in m["restatement"]]
    assert visit["restatement"].startswith("Alex: Yesterday Alex visited a rum distillery")
    assert (
        "theo"
        in json.loads(run("show", str(visit["memory_id"]), "--store", str(tmp_path / "store"), "--json").stdout)[
            "cues"
        ]["persons"]
    )
    assert visit["refers_to"] == {"start": "2024-03-03T00:00:00", "end": "2024-03-03T23:59:59"}
    assert visit["said_at"] == "2024-03-04T09:00:00"


def test_trace_names_said_about_and_title(owner_store):
    text = run("ask", "What did I ask about the sugar trade?", "--store", str(owner_store), "--k", "3").stdout
    assert "focus · alex" in text
    assert "Sugar trade history" in text and "said 2024-03-02 10:00" in text
    data = json.loads(run("ask", "rum distillery", "--store", str(owner_store), "--json").stdout)
    top = data["evidence"][0]
    assert top["title"] == "Sugar trade history" and top["said_at"] == "2024-03-02T10:07:00"
    assert top["sources"][0]["said_at"] == "2024-03-02T10:07:00"


# --- the owner's name: config, asked once, or the default with a hint --------------------------------
@pytest.fixture
def cli_store(tmp_path, fake_settings, fake_extractor) -> Path:
    """A store whose recorded settings use the fake encoder, so CLI ingests into it need no model."""
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write_chat(tmp_path / "other.json", [session(1, [("Ana", "Hello Ben.")])]))
    return tmp_path / "store"


def _owner_speakers(store: Path) -> set[str]:
    """Names the owner's turns are stored under."""
    return {r[0] for r in _rows(store, "SELECT DISTINCT speaker FROM sources WHERE role = 'owner'")}


def test_first_ingest_asks_the_owners_name_once_on_a_terminal(cli_store, tmp_path, monkeypatch):
    monkeypatch.setattr("ripplecli.cli.ingest.stdin_is_terminal", lambda: True)
    chat = write(tmp_path / "sugar.json", OWNER_CHAT)
    result = run("ingest", str(chat), "--store", str(cli_store), "--json", stdin="Alex Doe\n")
    assert result.exit_code == 0, result.stderr
    typed, _, document = result.stdout.partition("\n")  # the runner echoes typed input where a terminal would
    assert typed.strip() == "Alex Doe" and json.loads(document)[0]["owner"] == "Alex Doe"  # the question went to stderr
    assert "Your name" in result.stderr and "[User]" in result.stderr  # the export's own name is the default
    assert run("config", "get", "me").stdout.strip() == "Alex Doe"
    assert _owner_speakers(cli_store) == {"Alex Doe"}
    second = dict(OWNER_CHAT, conversation_id="another")
    again = run("ingest", str(write(tmp_path / "b.json", second)), "--store", str(cli_store), stdin="")
    assert again.exit_code == 0 and "Your name" not in again.output  # asked once: now it is in the config


def test_without_a_terminal_the_exports_name_is_kept_with_a_hint(cli_store, tmp_path):
    result = run("ingest", str(write(tmp_path / "sugar.json", OWNER_CHAT)), "--store", str(cli_store))
    assert result.exit_code == 0, result.stderr
    (hint,) = result.stderr.strip().splitlines()
    assert "stored as 'User'" in hint and "ripple config set me NAME" in hint
    assert _owner_speakers(cli_store) == {"User"}


def test_a_real_name_from_one_export_wins_over_the_notes_me(cli_store, tmp_path):
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "Ideas.md").write_text("Start a herb garden on the balcony.\n")  # read first
    whatsapp = Path(__file__).parent / "fixtures" / "formats" / "WhatsApp Chat with Maya.txt"
    (folder / whatsapp.name).write_text(whatsapp.read_text())
    result = run("ingest", str(folder), "--store", str(cli_store))
    assert result.exit_code == 0, result.stderr
    assert "stored as 'Alex'" in result.stderr  # the notes' author is "me", not a name
    assert _owner_speakers(cli_store) == {"Alex"}


def test_a_claude_zip_stores_the_owner_under_the_account_holders_name(cli_store, tmp_path):
    """`ripple ingest data.zip` of a Claude export: users.json names the owner, so the store does not say "Human"."""
    import zipfile

    fixtures = Path(__file__).parent / "fixtures" / "formats"
    export = tmp_path / "data-2024-04-05.zip"
    with zipfile.ZipFile(export, "w") as out:
        out.writestr("conversations.json", (fixtures / "claude.json").read_text())
        out.writestr("users.json", '[{"uuid": "u-1", "full_name": "Jane Doe", "email_address": "jane@example.com"}]')
    result = run("ingest", str(export), "--store", str(cli_store))
    assert result.exit_code == 0, result.stderr
    assert "claude account (the owner's name): users.json" in result.stderr.replace("\n", " ")
    assert "stored as 'Jane Doe', the export's name for you" in result.stderr.replace("\n", " ")
    assert _owner_speakers(cli_store) == {"Jane Doe"}
    configured = run("ingest", str(export), "--store", str(cli_store), "--me", "Jay")
    assert configured.exit_code == 0  # the same messages again: nothing new, whatever the owner is called


def test_a_bare_role_word_is_capitalised_as_the_default_name(cli_store, tmp_path):
    chat = json.loads(json.dumps(OWNER_CHAT))
    for turn in chat["sessions"][0]["turns"]:
        turn["speaker"] = "user" if turn["role"] == "owner" else "assistant"
    result = run("ingest", str(write(tmp_path / "lower.json", chat)), "--store", str(cli_store))
    assert "stored as 'User'" in result.stderr
    assert _owner_speakers(cli_store) == {"User"}


def test_config_me_and_the_me_option(cli_store, tmp_path):
    assert run("config", "set", "me", "  Alex  ").exit_code == 0
    assert run("config", "get", "me").stdout.strip() == "Alex"
    assert run("config", "set", "me", " ").exit_code == 2
    run("ingest", str(write(tmp_path / "a.json", OWNER_CHAT)), "--store", str(cli_store))
    other = json.loads(json.dumps(OWNER_CHAT).replace("2024-03-02", "2024-03-09"))  # the same words a week later:
    other["conversation_id"] = "another"  # another chat (the same messages at the same times are stored once)
    run("ingest", str(write(tmp_path / "b.json", other)), "--store", str(cli_store), "--me", "Sam")
    assert _owner_speakers(cli_store) == {"Alex", "Sam"}


def test_chats_without_owner_turns_are_not_asked_about(cli_store, tmp_path, monkeypatch):
    monkeypatch.setattr("ripplecli.cli.ingest.stdin_is_terminal", lambda: True)
    chat = write_chat(tmp_path / "plain.json", [session(2, [("Ana", "I like tea.")])])
    result = run("ingest", str(chat), "--store", str(cli_store))
    assert result.exit_code == 0 and "Your name" not in result.output and not result.stderr.strip()


# --- an old store migrates ---------------------------------------------------------------------------
def _make_old(store: Path) -> None:
    """Turn a store into what ripple wrote before schema 3: no titles, said-at times or roles."""
    con = duckdb.connect(str(store / "ripple.duckdb"))
    con.execute("DROP INDEX sources_hash")  # DuckDB alters no table an index depends on
    con.execute("DROP INDEX sources_turn")
    for table, column in [
        ("conversations", "title"),
        ("sources", "said_at"),
        ("sources", "role"),
        ("memories", "said_at"),
        ("sources", "said_offset"),  # schema 4
        ("memories", "said_offset"),
        ("sources", "message_key"),  # schema 5
    ]:
        con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    con.execute("DROP TABLE passages")  # schema 6
    con.execute("DELETE FROM schema_migrations WHERE version >= 3")
    con.execute("CREATE INDEX sources_hash ON sources (content_hash)")
    con.execute("CREATE INDEX sources_turn ON sources (conversation_id, turn_id)")
    con.close()
    meta = store / "lexical" / "ripple.json"
    saved = json.loads(meta.read_text())
    saved.pop("tokenizer")
    meta.write_text(json.dumps(saved))


def test_an_old_store_migrates_when_first_read(tmp_path, fake_settings, fake_extractor):
    chat = write_chat(tmp_path / "chat.json", [session(1, [("Ana", "I went hiking with Maya."), ("Ben", "Nice!")])])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
    _make_old(tmp_path / "store")
    shown = json.loads(run("show", "m1", "--store", str(tmp_path / "store"), "--json").stdout)  # read-only
    assert shown["said_at"] == "2023-05-01T18:00:00" and shown["refers_to"] is None and shown["title"] is None
    rows = _rows(tmp_path / "store", "SELECT max(version) FROM schema_migrations")
    assert rows == [(schema.LATEST_VERSION,)]
    assert _rows(tmp_path / "store", "SELECT DISTINCT role FROM sources") == [("",)]
    meta = json.loads((tmp_path / "store" / "lexical" / "ripple.json").read_text())
    assert meta["tokenizer"] >= 2  # rebuilt: CJK tokens would not match an index of the old tokens
    with Memory(tmp_path / "store") as memory:
        assert memory.doctor()["ok"], memory.doctor()
        assert memory.ingest(chat).duplicates == 2


def test_an_older_export_imports(tmp_path, fake_settings, fake_extractor):
    chat = write_chat(tmp_path / "chat.json", [session(1, [("Ana", "I went hiking with Maya.")])])
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(chat)
        memory.export(tmp_path / "new.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "new.jsonl").read_text().splitlines()]
    lines[0]["schema_version"] = 2
    for record in lines[1:]:
        for key in ("said_at", "role", "title"):
            record.pop(key, None)
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    result = run("import", str(tmp_path / "old.jsonl"), "--store", str(tmp_path / "copy"))
    assert result.exit_code == 0, result.stderr
    assert _rows(tmp_path / "copy", "SELECT said_at, session_ts FROM memories")[0][0].isoformat() == (
        "2023-05-01T18:00:00"
    )
