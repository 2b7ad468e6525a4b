"""`ripple mcp`: serve a store to an assistant over the Model Context Protocol (stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from ripplecli.cli.common import StoreOption, user_errors


@user_errors
def mcp(
    store: StoreOption = None,
    read_only: Annotated[
        bool,
        typer.Option("--read-only", help="Recall, show and stats only; other read-only commands can share the store."),
    ] = False,
) -> None:
    """Serve the store to an assistant over MCP (stdio): remember, recall, show, forget, stats.

    The server holds the store until the client disconnects; meanwhile other commands on it exit with code 3
    ("in use"), except read-only ones alongside `--read-only`.
    """
    from ripplecli.mcp_server import serve

    serve(store, read_only=read_only)
