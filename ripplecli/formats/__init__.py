"""Chat readers: every supported file format becomes the same list of Conversation objects."""

from __future__ import annotations

from ripplecli.formats.load import FORMATS, detect_format, read_conversations

__all__ = ["FORMATS", "detect_format", "read_conversations"]
