"""A raw MCP client for tests: JSON-RPC lines written to a server process, replies read with a hang guard."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from typing import Any

import pytest


class RawClient:
    """JSON-RPC lines to a server process's stdin, replies read from its stdout by a thread (so a hang is caught)."""

    def __init__(self, command: list[str], **popen: Any) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.process.stdout], daemon=True).start()

    def send(self, line: str | bytes) -> None:
        """One line, as the client wrote it."""
        assert self.process.stdin is not None
        self.process.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.process.stdin.flush()

    def reply(self, timeout: float = 60) -> dict[str, Any]:
        """The next reply; a hang guard, not a duration target."""
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            pytest.fail(f"no reply within {timeout} s: the server dropped the message")

    def start(self) -> None:
        """The MCP handshake: initialize, then the initialized notification."""
        self.send(json.dumps(INITIALIZE))
        assert "result" in self.reply(), "the server did not initialize"
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def call_tool(self, request_id: int, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tools/call and its result (the tool's JSON, or its error text under "error")."""
        params = {"name": name, "arguments": arguments or {}}
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}))
        reply = self.reply()
        assert reply["id"] == request_id, reply
        text = reply["result"]["content"][0]["text"]
        return {"error": text} if reply["result"].get("isError") else json.loads(text)

    def close(self) -> int:
        """Hang up and wait for the server to leave."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=60)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
