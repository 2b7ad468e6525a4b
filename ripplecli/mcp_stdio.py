"""The MCP server's stdin, screened: a line the SDK would drop without a word gets a JSON-RPC error reply instead.

The SDK's stdio transport validates each line as one JSON-RPC message and, when that fails, logs it and reads on:
the client waits for a reply that never comes. That happens to a line that is not JSON, to a batch (a JSON array,
which MCP no longer takes), to an object that is no JSON-RPC message, and to any message holding a lone UTF-16
surrogate (`"\\ud800"`, even in a tools/list's `_meta`), which the SDK's parser refuses. Here each line is checked
first; a refused one is answered on the transport's own write stream (so replies never interleave), the others are
passed on unchanged. The mcp package itself is not touched.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio

from ripplecli.formats.fields import json_path

log = logging.getLogger("ripplecli.mcp")

PARSE_ERROR = -32700  # JSON-RPC 2.0's codes
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
MAX_SHOWN_PATH = 120  # characters of a JSON path an error names

_SURROGATE = re.compile("[\ud800-\udfff]")

try:  # mcp 2.x
    from mcp_types import jsonrpc_message_adapter as _ADAPTER
except ImportError:  # mcp 1.x: JSONRPCMessage, a root model over the same union
    _ADAPTER = None  # type: ignore[assignment]  # mypy checks against mcp 2.x, where it is set


def sdk_message(text: str) -> Any:
    """One message as the SDK's stdio transport parses it; raises where that transport would drop the line."""
    if _ADAPTER is not None:
        return _ADAPTER.validate_json(text, by_name=False)
    from mcp.types import JSONRPCMessage

    return JSONRPCMessage.model_validate_json(text)  # type: ignore[attr-defined, unused-ignore]  # a union in 2.x


@dataclass(frozen=True)
class Refusal:
    """The error reply to a line the server cannot take: the request's id when it can be read, else null."""

    request_id: int | str | None
    code: int
    message: str

    def reply(self) -> dict[str, Any]:
        """The JSON-RPC error response."""
        return {"jsonrpc": "2.0", "id": self.request_id, "error": {"code": self.code, "message": self.message}}


def screen(raw: bytes) -> str | Refusal | None:
    """The line as text when the SDK can take it, a Refusal when it cannot, None for a blank line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(None, PARSE_ERROR, f"Parse error: the line is not UTF-8 text (byte {exc.start + 1})")
    if not text.strip():
        return None
    try:
        message = json.loads(text.strip(), parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        return Refusal(None, PARSE_ERROR, f"Parse error: not JSON ({exc})")
    if isinstance(message, list):
        return Refusal(None, INVALID_REQUEST, "Invalid Request: a batch (JSON array); MCP takes one message per line")
    if not isinstance(message, dict):
        return Refusal(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC message object")
    request_id = _request_id(message)
    where = surrogate_at(message)
    if where is not None:
        code = INVALID_PARAMS if where[:1] == ("params",) else INVALID_REQUEST
        shown = json_path(where)
        shown = shown if len(shown) <= MAX_SHOWN_PATH else shown[: MAX_SHOWN_PATH - 1] + "…"
        return Refusal(request_id, code, f"{shown} holds a lone UTF-16 surrogate, which UTF-8 cannot carry")
    try:
        sdk_message(text)
    except Exception:  # pydantic's ValidationError, or its parser's ValueError
        return Refusal(request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
    return text


def surrogate_at(message: Any) -> tuple[str | int, ...] | None:
    """Where a lone surrogate sits in a parsed message: the path to the string or to the object whose key holds it."""
    pending: list[tuple[tuple[str | int, ...], Any]] = [((), message)]
    while pending:  # a loop, not recursion: json.loads takes nesting deeper than a recursive walk could
        keys, value = pending.pop()
        if isinstance(value, str) and _has_surrogate(value):
            return keys
        if isinstance(value, dict):
            for key, item in value.items():
                if _has_surrogate(key):
                    return keys
                pending.append(((*keys, key), item))
        elif isinstance(value, list):
            pending.extend(((*keys, index), item) for index, item in enumerate(value))
    return None


def _has_surrogate(text: str) -> bool:
    """Whether a string holds a UTF-16 surrogate (json.loads lets `\\ud800` through; UTF-8 cannot carry it)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _request_id(message: dict[str, Any]) -> int | str | None:
    """The message's id when a reply can carry it back (an integer or a clean string)."""
    found = message.get("id")
    if isinstance(found, int) and not isinstance(found, bool):
        return found
    return found if isinstance(found, str) and not _has_surrogate(found) else None


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not a JSON value")


class ScreenedStdin:
    """stdin's lines as the SDK's stdio transport reads them, less the refused ones, which are answered here."""

    def __init__(self, source: BinaryIO) -> None:
        self.source = source
        self.replies: Any = None  # the transport's write stream
        self._ready = anyio.Event()

    def answer_on(self, replies: Any) -> None:
        """Send refusals on the transport's write stream, now that it is open."""
        self.replies = replies
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        """Each line the SDK can take; a refusal is sent back instead of the others."""
        from mcp.shared.message import SessionMessage

        await self._ready.wait()
        async for raw in anyio.wrap_file(self.source):
            screened = screen(raw)
            if isinstance(screened, Refusal):
                log.warning("refused a message: %s", screened.message)
                await self.replies.send(SessionMessage(sdk_message(json.dumps(screened.reply()))))
            elif screened is not None:
                yield screened


async def serve_stdio(lowlevel: Any, source: BinaryIO) -> None:
    """Run an SDK low-level server over stdio with its stdin screened."""
    from mcp.server.stdio import stdio_server

    stdin = ScreenedStdin(source)
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]  # file-like enough
        stdin.answer_on(write_stream)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
