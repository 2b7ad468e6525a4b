"""The owner in chats whose export does not say who exported them (WhatsApp and Telegram groups, Slack, Discord):
`me` names them among the chat's people, or one line says it names none; a Telegram account's owner is its id; a
Claude export without users.json says how to name its owner; quoted words keep their own "I"."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from chats import new_memory, run, session, write_chat

from ripplecli.api import Memory
from ripplecli.extract.rules import RulesExtractor
from ripplecli.formats import read_conversations
from ripplecli.model import Window, WindowTurn

FIXTURES = Path(__file__).parent / "fixtures"
GROUP = FIXTURES / "owner" / "WhatsApp Chat with Climbing crew.txt"
TELEGRAM_GROUP = FIXTURES / "owner" / "telegram_group.json"
TELEGRAM_ACCOUNT = FIXTURES / "owner" / "telegram_account.json"
SLACK = FIXTURES / "owner" / "slack"
DISCORD = FIXTURES / "formats" / "discord.json"
MAYA = FIXTURES / "formats" / "WhatsApp Chat with Maya.txt"


@pytest.fixture
def cli_store(tmp_path, fake_settings, fake_extractor) -> Path:
    """A store whose recorded settings use the fake encoder, so CLI ingests into it need no model."""
    with new_memory(tmp_path / "store", fake_settings) as memory:
        memory.ingest(write_chat(tmp_path / "other.json", [session(1, [("Ana", "Hello Ben.")])]))
    return tmp_path / "store"


def _rows(store: Path, sql: str) -> list[tuple]:
    """Rows of a query on a store on disk."""
    with Memory(store, read_only=True) as memory:
        return memory.store.con.execute(sql).fetchall()


def _owners(store: Path, conversation: str = "%") -> list[tuple[str, str]]:
    """(speaker, text) of the owner's stored turns in the conversations matching a LIKE pattern."""
    return _rows(
        store,
        "SELECT speaker, text FROM sources WHERE role = 'owner' AND conversation_id LIKE "
        f"'{conversation}' ORDER BY conversation_id, position",
    )


def _ingest(store: Path, *args: str):
    """`ripple ingest … --json` into the store, checked to succeed."""
    result = run("ingest", *args, "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    return result


# --- the readers: which chats leave their owner to `me` ----------------------------------------------------------
def test_group_chats_slack_and_discord_leave_the_owner_to_me_and_personal_chats_do_not():
    (group,) = read_conversations(GROUP)
    assert group.owner_by_name and {t.role for s in group.sessions for t in s.turns} == {""}
    assert group.speakers == ["Sam", "Alex", "Jo"]
    (maya,) = read_conversations(MAYA)
    assert not maya.owner_by_name  # a chat with one person: the other side is the owner
    (telegram_group,) = read_conversations(TELEGRAM_GROUP)
    assert telegram_group.owner_by_name
    assert not any(c.owner_by_name for c in read_conversations(TELEGRAM_ACCOUNT))  # the account names its owner
    (general,) = read_conversations(SLACK)
    assert general.owner_by_name and general.aliases["alex moreau"] == general.aliases["amoreau"] == "Alex M"
    assert general.aliases["ken ito"] == "Ken Ito"  # a name Slack shows, found by the handle too
    (channel,) = read_conversations(DISCORD)
    assert channel.owner_by_name and channel.aliases["lena_k"] == "Lena"


# --- point 3: `me` names the owner of a group chat ------------------------------------------------------------
def test_me_names_the_owner_of_a_whatsapp_group(cli_store):
    result = _ingest(cli_store, str(GROUP), "--me", "alex")  # the name whatever its case
    (report,) = json.loads(result.stdout)
    assert report["owner"] == "alex" and report["no_owner"] == []
    assert [text for _, text in _owners(cli_store, "whatsapp-%")] == [
        "Fine by me, I'll bring the rope and my new harness.",
        "I booked the bouldering wall at Rockhouse for 7pm.",
    ]
    assert result.stderr.strip().splitlines() == [  # what the reader left out, and no word of the owner
        "WhatsApp Chat with Climbing crew.txt: left out 4 messages: system line 3, media 1"
    ]


def test_config_me_names_the_owner_of_a_telegram_groups_own_export(cli_store):
    assert run("config", "set", "me", "Alex Moreau").exit_code == 0
    _ingest(cli_store, str(TELEGRAM_GROUP))
    assert _owners(cli_store, "telegram-%") == [("Alex Moreau", "Fine by me, I'll bring the rope.")]


def test_me_names_the_owner_of_a_slack_export_by_real_name_or_handle(cli_store, tmp_path):
    _ingest(cli_store, str(SLACK), "--me", "Alex Moreau")  # Slack shows "Alex M"
    assert _owners(cli_store, "slack-%") == [
        ("Alex Moreau", "> I moved the launch review to Thursday\nGood, I will have my slides ready by then.")
    ]
    other = tmp_path / "other"
    with new_memory(other, Memory(cli_store, read_only=True).settings) as memory:
        report = memory.ingest(SLACK, owner="ken")  # the handle of someone who wrote nothing else
    assert report.owner == "ken" and report.no_owner == []


def test_me_names_the_owner_of_a_discord_channel(cli_store):
    _ingest(cli_store, str(DISCORD), "--me", "Omar.H")
    assert _owners(cli_store, "discord-%") == [("Omar.H", "I'll host at my place on the 18th.")]


def test_me_naming_no_one_says_so_in_one_line_and_stores_the_chat_without_an_owner(cli_store):
    result = _ingest(cli_store, str(GROUP), "--me", "Zoe")
    (report,) = json.loads(result.stdout)
    assert report["new_sources"] == 5 and report["owner"] is None
    assert report["no_owner"] == [{"chat": "Climbing crew", "people": ["Sam", "Alex", "Jo"]}]
    (line,) = [line for line in result.stderr.strip().splitlines() if ": left out " not in line]
    assert "you are 'Zoe'" in line and "'Climbing crew' (Sam, Alex, Jo)" in line and "stored without an owner" in line
    assert "--me NAME" in line
    assert _owners(cli_store) == []


def test_a_group_ingested_before_me_named_its_owner_is_not_taken_for_edited(cli_store):
    _ingest(cli_store, str(GROUP))
    (report,) = json.loads(_ingest(cli_store, str(GROUP), "--me", "Alex").stdout)
    assert (report["new_sources"], report["duplicates"], report["edited"]) == (0, 5, 0)
    (report,) = json.loads(_ingest(cli_store, str(GROUP), "--me", "Jo").stdout)
    assert (report["new_sources"], report["edited"]) == (0, 0)


def test_a_default_owner_name_never_names_the_owner_of_a_group(cli_store, tmp_path):
    """Without `me`, the WhatsApp chat's own name for its owner ("Alex") stores that chat's owner turns; it is no
    `me`, so the group in the same ingest keeps no owner and no line says `me` names no one."""
    result = _ingest(cli_store, str(MAYA), str(GROUP))
    assert _owners(cli_store, "whatsapp-climbing-%") == []
    assert {speaker for speaker, _ in _owners(cli_store, "whatsapp-maya-%")} == {"Alex"}
    assert "none of the people" not in result.stderr


# --- point 3: a Telegram account's owner is its id ---------------------------------------------------------
def test_the_owner_of_a_telegram_account_export_is_its_user_id(cli_store):
    """A message in a personal chat from an id other than the account's is not the owner's, and its author's name
    does not become the owner's name for the other exports of the same ingest."""
    personal, _ = read_conversations(TELEGRAM_ACCOUNT)
    roles = {t.speaker: t.role for s in personal.sessions for t in s.turns}
    assert roles == {"Lena Park": "", "Nora Klein": "", "Alex Moreau": "owner"}
    result = _ingest(cli_store, str(TELEGRAM_ACCOUNT), str(MAYA))
    assert {speaker for speaker, _ in _owners(cli_store)} == {"Alex Moreau"}
    assert "stored as 'Alex Moreau'" in result.stderr
    assert _rows(cli_store, "SELECT role FROM sources WHERE speaker = 'Lena Park'") == [("",)]


def test_me_never_makes_another_person_of_a_telegram_account_its_owner(cli_store):
    _ingest(cli_store, str(TELEGRAM_ACCOUNT), "--me", "Sam")
    assert _rows(cli_store, "SELECT role FROM sources WHERE turn_id = '8' AND conversation_id LIKE 'telegram-%'") == [
        ("",)
    ]


# --- point 3: a Claude export without users.json ---------------------------------------------------------------
def test_a_claude_export_without_users_json_says_how_to_name_its_owner(cli_store, tmp_path):
    export = tmp_path / "data-2024-04-05.zip"
    with zipfile.ZipFile(export, "w") as out:
        out.writestr("conversations.json", (FIXTURES / "formats" / "claude.json").read_text())
    result = run("ingest", str(export), "--store", str(cli_store))
    assert result.exit_code == 0, result.output
    (hint,) = [line for line in result.stderr.strip().splitlines() if "stored as" in line]
    assert "stored as 'Human'" in hint and "--me NAME" in hint
    assert {speaker for speaker, _ in _owners(cli_store)} == {"Human"}
    assert run("ingest", str(export), "--store", str(tmp_path / "named"), "--me", "Jane Doe").exit_code == 0
    assert {speaker for speaker, _ in _owners(tmp_path / "named")} == {"Jane Doe"}


# --- point 9: quoted words keep their author ------------------------------------------------------------------
def test_a_slack_quote_keeps_its_i_in_the_restatement_the_ingest_encodes():
    """The rules' restatements (what the ingest encodes) of the Slack export, with Alex as its owner."""
    (general,) = read_conversations(SLACK)
    turns = [WindowTurn(t, s.session_id, s.timestamp) for s in general.sessions for t in s.turns]
    window = Window(general.conversation_id, general.speakers, turns)
    quoted = RulesExtractor().restatements([window])[1]
    assert quoted == (
        "Alex M: > I moved the launch review to Thursday\nGood, Alex M will have Alex M's slides ready by then."
    )


# --- through the real parts: "I" in a group chat, with --me ---------------------------------------------------
@pytest.mark.slow
def test_what_did_i_book_in_a_whatsapp_group_with_me(tmp_path, shared_cache, monkeypatch):
    monkeypatch.setenv("RIPPLE_CACHE", str(shared_cache))
    chat = tmp_path / GROUP.name
    shutil.copy(GROUP, chat)
    store = tmp_path / "store"
    result = run("ingest", str(chat), "--me", "Alex", "--store", str(store))
    assert result.exit_code == 0, result.output
    asked = run("ask", "What did I book at Rockhouse?", "--json", "--no-answer", "--k", "5", "--store", str(store))
    assert asked.exit_code == 0, asked.output
    found = json.loads(asked.stdout)
    cues = found["trace"]["query_cues"]
    assert cues["owner"] == "Alex" and cues["focus"] == "alex"
    top = found["evidence"][0]
    assert top["sources"][0]["text"] == "I booked the bouldering wall at Rockhouse for 7pm."
    assert top["restatement"].startswith("Alex: Alex booked the bouldering wall")
    with Memory(store, read_only=True) as memory:
        (restated,) = [m["restatement"] for m in memory.list_memories() if "rope" in m["restatement"]]
    assert restated == "Alex: Fine by Alex, Alex will bring the rope and Alex's new harness."
