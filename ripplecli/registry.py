"""Backends chosen by name from config: a dict of name -> "module:attr", imported only when used."""

from __future__ import annotations

import importlib
from typing import Any

from ripplecli.errors import InputError


def resolve(registry: dict[str, str], kind: str, name: str) -> Any:
    """Import the backend registered under `name`; unknown names are a user error listing the choices."""
    try:
        target = registry[name]
    except KeyError:
        choices = ", ".join(sorted(registry))
        raise InputError(f"unknown {kind} '{name}' (choose from: {choices})") from None
    module_name, attr = target.split(":")
    return getattr(importlib.import_module(module_name), attr)
