"""ripplecli/conformance.py, where mypy checks every registered backend against its Protocol, lists them all."""

from __future__ import annotations

import pytest

from ripplecli import conformance, registry


@pytest.mark.parametrize("kind", ["ENCODERS", "QUERY_ANALYZERS", "PLANNERS"])
def test_every_registered_backend_is_checked_against_its_protocol(kind: str) -> None:
    registered, checked = getattr(registry, kind), getattr(conformance, kind)
    assert list(checked) == registered.names  # a new backend is added to both, so mypy checks it
    assert all(registered.load(name) is checked[name] for name in registered.names)
