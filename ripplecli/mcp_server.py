"""`ripple mcp`: the ripple API as MCP tools over stdio, so the assistant a person uses remembers through ripple.

A thin shell over `ripplecli.api.Memory`: argument parsing, one call at a time, errors as tool errors. The store and
the encoder stay open for the life of the server, so every recall is warm.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, Field, StrictBool, ValidationError

from ripplecli.api import REMEMBER_CONVERSATION, Memory, NewTurn, compact_result, parse_memory_id, parse_time
from ripplecli.errors import InputError, RippleError
from ripplecli.formats.fields import MAX_TEXT_CHARS, json_path
from ripplecli.mcp_stdio import serve_stdio

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x calls the same server FastMCP (the ignores: mypy checks against the 2.x installed)
    from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef, attr-defined, unused-ignore]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef, import-not-found, unused-ignore]

log = logging.getLogger("ripplecli.mcp")
F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "ripple is the user's long-term memory of past conversations, kept locally. Call `recall` before answering "
    "anything about the user's past (people, plans, events, preferences, what was said or decided); answer from "
    "the evidence it returns and cite memory ids. Call `remember` when the user shares a fact worth keeping. "
    "`forget` removes a memory for good and needs confirm=true."
)

DESCRIPTIONS: dict[str, str] = {
    "remember": (
        "Store what the user told you so it can be recalled in later conversations. Use it when the user shares a "
        "fact about themselves or people, places, plans, events or preferences. Pass one turn (speaker + text) or "
        "up to 50 in `turns`; the speaker is who said it (the user's name, not 'I'); text is their words "
        f"(at most {MAX_TEXT_CHARS:,} characters a turn). "
        "timestamp: ISO 8601 when it was said (default now; 'yesterday' in the text is resolved against it). "
        "conversation (default 'mcp') and session (default the timestamp's date) group turns. "
        "Returns the new memory ids."
    ),
    "recall": (
        "Recall evidence from the user's past conversations for a question. Call it BEFORE answering any question "
        "about the user's past, people they know, their plans, events or preferences. Returns ranked evidence (memory "
        "id, restatement, source turns with dates, how each was found) and the recall trajectory (anchors, the "
        "missing-support target, which channel found what), and `answer`: a rules-only hint (type, span, citations; "
        "found=false when nothing matched, sure=false when no span of the asked kind was found). You answer from the "
        "evidence, citing memory ids. k: how many memories (default 10). mode: ripple (default), seeds, dense, "
        "lexical, ... as_of: the question's date, ISO 8601 (default now) for 'last week'-style questions."
    ),
    "show": "One memory in full: restatement, persons, places, time, cues, source turns and graph edges. "
    "memory_id as recall returns it (14 or 'm14').",
    "forget": (
        "Delete one memory for good: its text, source turns no other memory uses, vector, cues and edges. Only when "
        "the user asks you to forget something. Requires confirm=true; without it nothing is deleted."
    ),
    "stats": "How much the memory holds: memories, turns, conversations, sessions, edges per channel, time span, "
    "encoder.",
}


class TurnArg(BaseModel):
    """One turn of a `remember` call."""

    speaker: str = Field(description="Who said it (a name, e.g. the user's name)")
    text: str = Field(description="What they said")
    timestamp: str | None = Field(default=None, description="ISO 8601 date-time; default now")


def jsonable(value: Any) -> Any:
    """Plain JSON types (dates and paths as strings), as the tool result carries them."""
    return json.loads(json.dumps(value, default=str))


def tool_call(method: F) -> F:
    """One call at a time on the store; ripple's errors become tool errors with its one-line message."""

    @functools.wraps(method)
    def wrapper(self: RippleTools, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            try:
                return jsonable(method(self, *args, **kwargs))
            except ToolError:
                raise
            except RippleError as exc:
                raise ToolError(str(exc)) from None
            except Exception as exc:  # a bug must not take the server down: say what broke, keep serving
                log.exception("tool %s failed", method.__name__)
                first = next(iter(str(exc).splitlines()), "")  # a database error goes on with the SQL it ran
                raise ToolError(f"{method.__name__} failed: {type(exc).__name__}: {first}") from exc

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps the signature F stands for


class RippleTools:
    """The tool bodies, each a call into one open Memory."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.lock = threading.Lock()

    @tool_call
    def remember(
        self,
        speaker: str | None = None,
        text: str | None = None,
        timestamp: str | None = None,
        conversation: str = REMEMBER_CONVERSATION,
        session: str | None = None,
        turns: list[TurnArg] | None = None,
    ) -> dict[str, Any]:
        """Write one turn, or a short list, through the normal write path."""
        given = [t.model_dump() for t in turns or []]
        if speaker is not None or text is not None:
            given.insert(0, {"speaker": speaker or "", "text": text or "", "timestamp": timestamp})
        batch = [
            NewTurn(t["speaker"], t["text"], parse_time(t.get("timestamp") or timestamp, "timestamp")) for t in given
        ]
        ids = self.memory.remember(batch, conversation=conversation, session=session)
        return {"memory_ids": ids, "conversation": conversation.strip(), "turns": len(batch)}

    @tool_call
    def recall(self, question: str, k: int = 10, mode: str = "ripple", as_of: str | None = None) -> dict[str, Any]:
        """Evidence and trajectory, with the rules' typed answer (type, span) as a hint; the agent's model answers."""
        result = self.memory.recall(question, k=k, mode=mode, as_of=parse_time(as_of, "as_of"), answer="typed")
        return compact_result(result)

    @tool_call
    def show(self, memory_id: int | str) -> dict[str, Any]:
        """One memory in full."""
        return self.memory.show(memory_id)

    @tool_call
    def forget(self, memory_id: int | str, confirm: StrictBool = False) -> dict[str, Any]:
        """Delete one memory; refuses without an explicit confirm: the JSON boolean true, not the string "true"."""
        mid = parse_memory_id(memory_id)
        if confirm is not True:
            raise ToolError(f"forget m{mid} deletes it for good: call forget again with confirm=true")
        plan = self.memory.forget(mid)
        if plan.empty:
            raise InputError(f"no memory m{mid} in this store (nothing was deleted)")
        return {"forgotten": plan.memory_ids, "removed": plan.counts}

    @tool_call
    def stats(self) -> dict[str, Any]:
        """Store and graph figures."""
        return self.memory.stats()

    def warm_in_background(self) -> threading.Thread:
        """Load the encoder and indexes while the client connects; the first call waits on the lock."""

        def warm() -> None:
            with self.lock:
                try:
                    self.memory.warm()
                except Exception:  # the first real call reports the problem as a tool error
                    log.exception("warm-up failed")

        thread = threading.Thread(target=warm, name="ripple-warm", daemon=True)
        thread.start()
        return thread


class RippleServer(MCPServer):
    """The SDK's server, with arguments that fail the tool's schema reported on one line."""

    async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """The SDK's call; its multi-line pydantic report (with a link) becomes `field: problem; ...`."""
        try:
            return await super().call_tool(name, arguments, *args, **kwargs)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            raise ToolError(f"Error executing tool {name}: {one_line(cause)}") from cause


def one_line(error: ValidationError) -> str:
    """Each failing argument as `path: problem`, e.g. `turns[0].text: Field required`."""
    return "; ".join(f"{json_path(tuple(e['loc']))}: {e['msg']}" for e in error.errors())


def build_server(tools: RippleTools) -> MCPServer:
    """An MCP server whose tools call one open Memory (used by `serve`, and in process by tests and benchmarks)."""
    server = RippleServer("ripple", instructions=INSTRUCTIONS, log_level="WARNING")
    for name, description in DESCRIPTIONS.items():
        server.add_tool(getattr(tools, name), name=name, description=description)
    return server


def serve(store: str | Path | None = None, *, read_only: bool = False) -> None:
    """Open the store once and serve it over stdio until the client hangs up (the store stays locked meanwhile)."""
    with Memory(store, read_only=read_only, create=not read_only) as memory:
        tools = RippleTools(memory)
        tools.warm_in_background()
        server = build_server(tools)
        lowlevel = getattr(server, "_lowlevel_server", None) or server._mcp_server  # type: ignore[attr-defined]  # 1.x
        try:
            anyio.run(serve_stdio, lowlevel, sys.stdin.buffer)
        finally:
            tools.lock.acquire()  # a warm-up or call still running finishes before the store closes
