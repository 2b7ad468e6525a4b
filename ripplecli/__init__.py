"""ripple: a local-first personal memory for conversations, with associative recall."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ripplecli.config import disable_telemetry
from ripplecli.version import __version__

disable_telemetry()  # before any ripple module imports onnxruntime: every entry point (CLI, API, MCP, eval) is here
__all__ = ["Memory", "__version__"]

if TYPE_CHECKING:
    from ripplecli.api import Memory


def __getattr__(name: str) -> Any:
    """Import the API lazily so `ripple --help` stays fast."""
    if name == "Memory":
        from ripplecli.api import Memory

        return Memory
    raise AttributeError(name)
