"""`ripple mcp` through an in-process MCP client session: tools, remember → recall → forget, tool errors."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_CHATS, FakeExtractor, use_fake_extractor
from mcp_raw import RawClient

from ripplecli.api import Memory
from ripplecli.mcp_server import DESCRIPTIONS, RippleTools, build_server

TOOLS = {"remember", "recall", "show", "forget", "stats"}


@asynccontextmanager
async def connect(memory: Memory) -> AsyncIterator[Any]:
    """A client session on a server over `memory`, through the SDK's in-memory transport (mcp 2.x or 1.x)."""
    server = build_server(RippleTools(memory))
    try:
        from mcp import Client
    except ImportError:  # mcp 1.x
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server._mcp_server) as session:
            yield session
        return
    async with Client(server) as client:
        yield client


async def call(client: Any, tool: str, arguments: dict[str, Any] | None = None) -> tuple[bool, Any]:
    """(is_error, payload): the tool's JSON result, or its error text."""
    result = await client.call_tool(tool, arguments or {})
    failed = bool(getattr(result, "is_error", getattr(result, "isError", False)))
    text = result.content[0].text if result.content else ""
    return failed, text if failed else json.loads(text)


def session_with(memory: Memory, script: Callable[[Any], Any]) -> Any:
    """Run an async script against a fresh client session and return what it returns."""

    async def main() -> Any:
        async with connect(memory) as client:
            return await script(client)

    return asyncio.run(main())


def test_tools_are_listed_with_when_to_use_them(fake_memory: Memory) -> None:
    async def script(client: Any) -> Any:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in session_with(fake_memory, script)}
    assert set(tools) == TOOLS == set(DESCRIPTIONS)
    assert "BEFORE answering" in tools["recall"].description
    assert "confirm=true" in tools["forget"].description
    assert "remember" in tools and "shares a fact" in tools["remember"].description


def test_remember_recall_show_forget(fake_memory: Memory) -> None:
    async def script(client: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["one"] = await call(
            client, "remember", {"speaker": "Alex", "text": "Maya loves Harbor Grill.", "timestamp": "2026-04-23T19:30"}
        )
        turns = [
            {"speaker": "Sam", "text": "Harbor Grill has an oyster bar."},
            {"speaker": "Alex", "text": "Maya is allergic to shellfish.", "timestamp": "2026-05-21T18:00:00+02:00"},
        ]
        out["two"] = await call(client, "remember", {"turns": turns, "timestamp": "2026-04-23T19:35"})
        out["recall"] = await call(client, "recall", {"question": "Is Maya allergic to shellfish?", "k": 5})
        target = out["two"][1]["memory_ids"][-1]
        out["show"] = await call(client, "show", {"memory_id": f"m{target}"})
        out["unconfirmed"] = await call(client, "forget", {"memory_id": target})
        out["still"] = await call(client, "show", {"memory_id": target})
        out["forget"] = await call(client, "forget", {"memory_id": target, "confirm": True})
        out["gone"] = await call(client, "show", {"memory_id": target})
        out["after"] = await call(client, "recall", {"question": "Is Maya allergic to shellfish?", "k": 5})
        out["stats"] = await call(client, "stats")
        return out

    out = session_with(fake_memory, script)
    assert out["one"] == (False, {"memory_ids": [1], "conversation": "mcp", "turns": 1})
    assert out["two"][1]["memory_ids"] == [2, 3]
    failed, recalled = out["recall"]
    assert not failed and recalled["evidence"][0]["memory_id"] == 3
    first = recalled["evidence"][0]
    assert first["sources"] == [  # said at 18:00 where it was said, with its offset (16:00 in UTC)
        {
            "turn_id": "D2026-05-21:1",
            "session_id": "2026-05-21",
            "speaker": "Alex",
            "said_at": "2026-05-21T18:00:00+02:00",
        }
    ]
    assert first["said_at"] == "2026-05-21T18:00:00+02:00"
    assert {"view", "rank", "seed"} <= set(first["provenance"][0])
    trajectory = recalled["trajectory"]
    assert {"query_cues", "seeds", "rounds", "found_by"} <= set(trajectory)
    assert 3 in trajectory["rounds"][0]["anchors"] and 3 in trajectory["found_by"]["dense"]
    hint = recalled["answer"]  # the rules' typed answer rides along: its type, span and citations
    assert hint["method"] == "typed" and hint["type"] == "yes-no" and hint["span"] and 3 in hint["citations"]
    assert out["show"][1]["restatement"].startswith("Alex: Maya is allergic")
    assert out["unconfirmed"][0] and "confirm=true" in out["unconfirmed"][1]
    assert not out["still"][0]
    assert out["forget"][1]["forgotten"] == [3]
    assert out["gone"][0] and "no memory m3" in out["gone"][1]
    assert 3 not in {e["memory_id"] for e in out["after"][1]["evidence"]}
    assert out["stats"][1]["memories"] == 2


BAD_CALLS = [
    ("recall", {"question": "x", "k": "many"}, "k"),
    ("recall", {"question": "x", "k": 0}, "--k must be at least 1"),
    ("recall", {"question": "   "}, "the question is empty"),
    ("recall", {"question": "x", "mode": "psychic"}, "unknown mode 'psychic'"),
    ("recall", {"question": "x", "as_of": "last Tuesday"}, "as_of: 'last Tuesday' is not a date"),
    ("recall", {}, "question"),
    ("remember", {}, "no turns to remember"),
    ("remember", {"speaker": "Alex"}, "turn 1: the text is empty"),
    ("remember", {"speaker": "Alex", "text": "hi", "timestamp": "yesterday"}, "timestamp: 'yesterday' is not a date"),
    ("remember", {"turns": [{"speaker": "Alex"}]}, "text"),
    ("remember", {"turns": [{"speaker": "A", "text": "t"}] * 51}, "at most 50"),
    ("show", {"memory_id": "fourteen"}, "'fourteen' is not a memory id"),
    ("forget", {"memory_id": "m1"}, "call forget again with confirm=true"),
    ("show", {"memory_id": 999}, "no memory m999"),
    ("forget", {"memory_id": 999, "confirm": True}, "no memory m999"),
    ("nonexistent", {}, "nonexistent"),
]


def test_malformed_arguments_are_tool_errors_and_the_server_keeps_serving(fake_memory: Memory) -> None:
    async def script(client: Any) -> list[tuple[bool, Any]]:
        results = [await call(client, "remember", {"speaker": "Alex", "text": "Maya loves Harbor Grill."})]
        for tool, arguments, _ in BAD_CALLS:
            try:
                results.append(await call(client, tool, arguments))
            except Exception as exc:  # an unknown tool may come back as a protocol error instead
                results.append((True, str(exc)))
        results.append(await call(client, "recall", {"question": "Harbor Grill?", "as_of": "2026-05-01T10:00+02:00"}))
        results.append(await call(client, "stats"))
        return results

    results = session_with(fake_memory, script)
    assert not results[0][0]
    for (tool, arguments, expected), (failed, message) in zip(BAD_CALLS, results[1:-2], strict=True):
        assert failed, (tool, arguments)
        assert expected in message, (tool, message)
    assert not results[-2][0]  # a zone-aware as_of is taken in UTC, as stored times are
    assert results[-1] == (False, results[-1][1]) and results[-1][1]["memories"] == 1


def test_a_read_only_server_refuses_writes(tmp_path: Path, fake_settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from ripplecli.api import NewTurn

    use_fake_extractor(monkeypatch)
    with Memory(tmp_path / "store") as memory:
        memory.configure(fake_settings)
        memory.remember(NewTurn("Alex", "Maya loves Harbor Grill."))
    with Memory(tmp_path / "store", read_only=True) as memory:

        async def script(client: Any) -> list[tuple[bool, Any]]:
            return [
                await call(client, "remember", {"speaker": "Alex", "text": "More."}),
                await call(client, "recall", {"question": "Harbor Grill?"}),
            ]

        (wrote, message), (read, recalled) = session_with(memory, script)
    assert wrote and "read-only" in message
    assert not read and recalled["evidence"][0]["memory_id"] == 1


@pytest.mark.slow
def test_ripple_mcp_over_stdio_holds_the_store(tmp_path: Path) -> None:
    """`ripple mcp` as an assistant starts it; meanwhile another command gets "in use" and exit code 3."""
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from typer.testing import CliRunner

    from ripplecli.cli import app

    store = tmp_path / "store"
    ripple = str(Path(sys.executable).with_name("ripple"))
    params = StdioServerParameters(command=ripple, args=["mcp", "--store", str(store)], env=dict(os.environ))

    async def script() -> tuple[Any, Any, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            written = await call(session, "remember", {"speaker": "Alex", "text": "Maya loves Harbor Grill."})
            other = CliRunner().invoke(app, ["ask", "Harbor Grill?", "--store", str(store)])
            recalled = await call(session, "recall", {"question": "Who loves Harbor Grill?"})
        return written, other, recalled

    written, other, recalled = asyncio.run(script())
    assert written == (False, {"memory_ids": [1], "conversation": "mcp", "turns": 1})
    assert other.exit_code == 3 and f"store {store} is in use by process" in other.output
    assert recalled[1]["evidence"][0]["restatement"] == "Alex: Maya loves Harbor Grill."
    after = CliRunner().invoke(app, ["ask", "Harbor Grill?", "--store", str(store), "--no-trace"])
    assert after.exit_code == 0, after.output  # the server released the store when the client hung up


class WarmedExtractor(FakeExtractor):
    """The fake extractor, counting how often its models were loaded ahead of use."""

    warmed = 0

    def warm(self) -> None:
        """Count the warm-up."""
        type(self).warmed += 1


def test_the_server_loads_encoder_and_extractor_at_start(fake_memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up a server starts with loads what a first `remember` would otherwise pay for."""
    from ripplecli.registry import EXTRACTORS

    monkeypatch.setitem(EXTRACTORS, "rules", f"{__name__}:WarmedExtractor")
    monkeypatch.setattr(WarmedExtractor, "warmed", 0)
    assert fake_memory._encoder is None
    RippleTools(fake_memory).warm_in_background().join()
    assert fake_memory._encoder is not None and WarmedExtractor.warmed == 1
    monkeypatch.setattr(fake_memory.store, "read_only", True)
    fake_memory.warm()  # a read-only server never writes, so it does not load the extractor
    assert WarmedExtractor.warmed == 1


def test_an_extractor_that_needs_the_local_model_is_not_loaded_at_start(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that may only recall does not load a GGUF model for the LLM extractor before it writes."""
    from ripplecli.api import Memory as MemoryClass

    fake_memory.settings.extractor = "llm"
    monkeypatch.setattr(MemoryClass, "llm", property(lambda self: pytest.fail("the local model was loaded")))
    fake_memory.warm()
    assert fake_memory._encoder is not None


# --- end to end through the real encoder and spaCy -----------------------------------------------------
@pytest.mark.slow
def test_the_real_warm_up_loads_spacy_and_the_encoder(tmp_path: Path) -> None:
    """Through the real parts: after warming, the spaCy pipeline and the ONNX encoder are loaded."""
    from ripplecli.extract.nlp import load_nlp

    load_nlp.cache_clear()
    with Memory(tmp_path / "store") as memory:
        memory.warm()
        assert load_nlp.cache_info().currsize == 1 and memory._encoder is not None
        assert memory._encoder._one_thread is not None  # what a write encodes on while spaCy parses


@pytest.mark.slow
def test_agent_remembers_a_chat_and_recalls_through_the_graph(tmp_path: Path) -> None:
    """The dinner chat told turn by turn; the seafood turn is found only by spreading activation, then forgotten."""
    chat = json.loads((SAMPLE_CHATS / "dinner.json").read_text(encoding="utf-8"))
    question = "What kind of food is Harbor Grill known for?"
    seafood = "D2026-04-30:11"  # D2:11 of the file: "everyone crowding around their oyster bar"

    async def script(client: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"ids": []}
        for session in chat["sessions"]:
            for turn in session["turns"]:
                arguments = {**turn, "timestamp": session["timestamp"], "conversation": "dinner-plans"}
                failed, written = await call(client, "remember", arguments)
                assert not failed, written
                out["ids"] += written["memory_ids"]
        out["ripple"] = (await call(client, "recall", {"question": question, "k": 10}))[1]
        out["seeds"] = (await call(client, "recall", {"question": question, "k": 10, "mode": "seeds"}))[1]
        hit = next(e for e in out["ripple"]["evidence"] if seafood in [s["turn_id"] for s in e["sources"]])
        out["forget"] = await call(client, "forget", {"memory_id": hit["memory_id"], "confirm": True})
        out["after"] = (await call(client, "recall", {"question": question, "k": 30}))[1]
        out["hit"] = hit
        return out

    with Memory(tmp_path / "store") as memory:
        out = session_with(memory, script)
    turns = lambda result: {s["turn_id"] for e in result["evidence"] for s in e["sources"]}  # noqa: E731
    assert len(out["ids"]) == sum(len(s["turns"]) for s in chat["sessions"]) == len(set(out["ids"]))
    assert seafood in turns(out["ripple"]) and seafood not in turns(out["seeds"])
    hit = out["hit"]
    assert any(p.get("channel") == "activation" for p in hit["provenance"])
    assert hit["memory_id"] in out["ripple"]["trajectory"]["found_by"]["activation"]
    assert hit["sources"][0]["said_at"] == "2026-04-30T20:10:00" and hit["sources"][0]["speaker"] == "Alex"
    round_one = out["ripple"]["trajectory"]["rounds"][0]
    assert round_one["decision"] == "continue" and 1 <= len(round_one["anchors"]) <= 3 and round_one["target"]
    assert hit["memory_id"] in round_one["support"]["activation"]
    assert not out["forget"][0] and out["forget"][1]["forgotten"] == [hit["memory_id"]]
    assert seafood not in turns(out["after"])
    assert hit["memory_id"] not in {e["memory_id"] for e in out["after"]["evidence"]}


# --- hardening: every request gets a reply, limits as the CLI's, one-line errors ------------------------------------
def test_oversize_text_is_refused_like_the_cli_refuses_it(fake_memory: Memory) -> None:
    """The CLI's limit for one turn (formats.fields.MAX_TEXT_CHARS), in one line, never spaCy's E088 text."""
    from ripplecli.formats.fields import MAX_TEXT_CHARS

    turns = [{"speaker": "Alex", "text": "ok"}, {"speaker": "B" * 300_000, "text": "hi"}]

    async def script(client: Any) -> list[tuple[bool, Any]]:
        return [
            await call(client, "remember", {"speaker": "Alex", "text": "a" * (MAX_TEXT_CHARS + 1)}),
            await call(client, "remember", {"speaker": "Alex", "text": "word " * 2_000_000}),  # 10 MB
            await call(client, "remember", {"turns": turns}),
            await call(client, "remember", {"speaker": "Alex", "text": "a" * MAX_TEXT_CHARS}),
            await call(client, "stats"),
        ]

    *refused, (long_failed, _), (_, stats) = session_with(fake_memory, script)
    limit = "ripple takes at most 200,000 a turn"
    assert [message.removeprefix("Error executing tool remember: ") for _, message in refused] == [
        f"turn 1: the text is 200,001 characters long; {limit}",
        f"turn 1: the text is 9,999,999 characters long; {limit}",
        f"turn 2: the speaker is 300,000 characters long; {limit}",
    ]
    assert all(failed for failed, _ in refused)
    assert not long_failed and stats["memories"] == 1  # the limit itself is allowed; nothing refused was written


def test_forget_takes_only_the_boolean_true_as_consent(fake_memory: Memory) -> None:
    async def script(client: Any) -> list[tuple[bool, Any]]:
        await call(client, "remember", {"speaker": "Alex", "text": "Maya loves Harbor Grill."})
        tries = [{"confirm": "true"}, {"confirm": 1}, {"confirm": "yes"}, {"confirm": False}]
        results = [await call(client, "forget", {"memory_id": 1, **extra}) for extra in tries]
        return [*results, await call(client, "show", {"memory_id": 1})]

    *refused, (gone, _) = session_with(fake_memory, script)
    assert all(failed for failed, _ in refused) and not gone  # the memory is still there
    assert refused[0][1] == "Error executing tool forget: confirm: Input should be a valid boolean"


@pytest.mark.parametrize(
    "memory_id", [99999999999999999999999, "m99999999999999999999999", "9" * 5000, "m²", 2**63, -1, "x" * 10_000]
)
def test_show_and_forget_a_bad_id_in_one_clean_line(fake_memory: Memory, memory_id: Any) -> None:
    async def script(client: Any) -> list[tuple[bool, Any]]:
        return [
            await call(client, "show", {"memory_id": memory_id}),
            await call(client, "forget", {"memory_id": memory_id, "confirm": True}),
        ]

    for failed, message in session_with(fake_memory, script):
        assert failed and "is not a memory id" in message, message
        assert "\n" not in message and "SELECT" not in message and len(message) < 200, message


def test_arguments_that_fail_the_schema_are_one_line(fake_memory: Memory) -> None:
    async def script(client: Any) -> list[tuple[bool, Any]]:
        return [
            await call(client, "recall", {"question": "x", "k": "many"}),
            await call(client, "remember", {"turns": [{"speaker": "Alex"}]}),
        ]

    (_, k), (_, text) = session_with(fake_memory, script)
    assert k == "Error executing tool recall: k: Input should be a valid integer, unable to parse string as an integer"
    assert text == "Error executing tool remember: turns[0].text: Field required"


SERVE_ON_FAKES = """
import sys
sys.path.insert(0, sys.argv[2])  # tests/: conftest's fakes, registered as the tests register them
from ripplecli.registry import EXTRACTORS
from ripplecli.registry import ENCODERS
ENCODERS["fake"], EXTRACTORS["rules"] = "conftest:FakeEncoder", "conftest:FakeExtractor"
from ripplecli.api import Memory
from ripplecli.config import Settings
from ripplecli.mcp_server import serve
with Memory(sys.argv[1]) as memory:
    memory.configure(Settings(encoder_backend="fake", encoder_model="fake"))
serve(sys.argv[1])
"""


RAW_LINES = [  # (what the client sends, the error code, text the message holds, the id the reply carries)
    (r'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"x":"\ud800"}}}', -32602, "surrogate", 1),
    (
        r'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember",'
        r'"arguments":{"speaker":"Alex","text":"Maya \udc00 loves oysters"}}}',
        -32602,
        "params.arguments.text holds a lone UTF-16 surrogate",
        2,
    ),
    (r'{"jsonrpc":"2.0","id":"\ud800x","method":"tools/list"}', -32600, "surrogate", None),
    ('{"jsonrpc":', -32700, "Parse error", None),
    ('[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]', -32600, "batch", None),
    ("[]", -32600, "batch", None),
    ('{"hello":"world","id":4}', -32600, "not a JSON-RPC 2.0 message", 4),
    ('{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"x":NaN}}', -32700, "NaN", None),
    ("42", -32600, "not a JSON-RPC message object", None),
    (b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"x":"\xff"}}}', -32700, "not UTF-8", None),
]


def test_every_malformed_line_gets_an_error_reply_and_the_server_keeps_serving(tmp_path: Path) -> None:
    """Over real stdio: lines the SDK used to drop without a reply (the client waited until its own timeout)."""
    tests = str(Path(__file__).parent)
    client = RawClient([sys.executable, "-c", SERVE_ON_FAKES, str(tmp_path / "store"), tests])
    try:
        client.start()
        client.send("")  # a blank line is no message and gets no reply
        for line, code, text, request_id in RAW_LINES:
            client.send(line)
            reply = client.reply()
            assert reply["error"]["code"] == code and text in reply["error"]["message"], (line, reply)
            assert reply["id"] == request_id and "\n" not in reply["error"]["message"], (line, reply)
        client.send('{"jsonrpc":"2.0","id":7,"method":"tools/list"}')
        assert {tool["name"] for tool in client.reply()["result"]["tools"]} == TOOLS
        assert client.call_tool(8, "stats")["memories"] == 0
    finally:
        assert client.close() == 0


@pytest.mark.parametrize(
    "line, code, message",
    [
        (r'{"jsonrpc":"2.0","id":1,"method":"x","params":{"\ud83d":1}}', -32602, "params holds a lone UTF-16"),
        ('{"jsonrpc":"2.0","id":1,"method":"x\\udfff"}', -32600, "method holds a lone UTF-16 surrogate"),
        ("[" * 100_000 + "]" * 100_000, -32700, "Parse error"),  # deeper than json.loads (or a recursive walk) goes
        ('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":Infinity}}', -32700, "Infinity is not a JSON value"),
        ('{"jsonrpc":"1.0","id":1,"method":"x"}', -32600, "not a JSON-RPC 2.0 message"),
    ],
)
def test_screen_refuses_what_the_sdk_would_drop(line: str, code: int, message: str) -> None:
    from ripplecli.mcp_stdio import Refusal, screen

    refused = screen(line.encode())
    assert isinstance(refused, Refusal) and refused.code == code and message in refused.message, refused


def test_screen_passes_good_lines_unchanged_and_skips_blank_ones() -> None:
    from ripplecli.mcp_stdio import screen

    line = '{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"x":"caf\\u00e9 \\ud83d\\ude00"}}}\n'
    assert screen(line.encode()) == line  # a surrogate pair is one character, not a lone half
    assert screen(b"  \r\n") is None


def test_a_bug_is_reported_by_its_first_line_only(fake_memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database error's text goes on with the SQL it ran: the client gets the first line, the log the rest."""

    def broken() -> None:
        raise RuntimeError("Conversion Error: out of range\n\nLINE 1: SELECT memory_id FROM memories")

    monkeypatch.setattr(fake_memory, "stats", broken)

    async def script(client: Any) -> tuple[bool, Any]:
        return await call(client, "stats")

    assert session_with(fake_memory, script) == (
        True,
        "Error executing tool stats: stats failed: RuntimeError: Conversion Error: out of range",
    )
