"""Errors a user can cause, each mapped to one clear line and an exit code by the CLI."""

from __future__ import annotations


class RippleError(Exception):
    """Base for expected failures: the message is shown as one line, no traceback."""

    exit_code = 2


class InputError(RippleError):
    """A file, argument or question that ripple cannot use; nothing was written."""

    exit_code = 2


class StoreError(RippleError):
    """The store is missing, from a newer schema, or damaged."""

    exit_code = 2


class StoreBusyError(RippleError):
    """Another process holds the store."""

    exit_code = 3


class ModelError(RippleError):
    """A configured local model cannot be used."""

    exit_code = 2


class DownloadError(RippleError):
    """A model download failed (network, server or checksum); a partial file is kept only when it can resume."""

    exit_code = 2
