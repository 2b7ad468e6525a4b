"""spaCy's attribute ruler without its token Matcher: the same attributes on the same tokens, for a tenth of the CPU.

The English pipeline's attribute ruler (the tag map and its exceptions, ~180 patterns) runs spaCy's general Matcher
over every token: a third of the pipeline's CPU after tok2vec for one LoCoMo conversation. Its patterns only ask
for exact, IN, NOT_IN or REGEX values of four token attributes (TAG, LOWER, DEP, IS_SPACE), so which pattern
slots a token fills depends on those four values alone: that is worked out once per distinct combination. Each
token then gets the attributes of the patterns that target it merged in the ruler's own order (a later pattern
wins, as AttributeRuler applies its sorted matches one after another). A ruler with any other kind of pattern is
not compiled (`compile_ruler` returns None) and the pipeline keeps spaCy's own component.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

FIELDS = ("TAG", "LOWER", "DEP", "IS_SPACE")  # what a signature holds, in this order
_TAG, _LOWER = 0, 1


class Unsupported(Exception):
    """A pattern this module cannot evaluate exactly as spaCy's Matcher does."""


Check = Callable[[Any], bool]


@dataclass(frozen=True)
class Slot:
    """One token of one pattern: the rule it belongs to, the alternative, its offset and the span it is part of."""

    rule: int
    alternative: int
    offset: int
    length: int
    target: int  # offset of the token the rule's attributes go to, within the matched span
    checks: tuple[tuple[int, Check], ...]

    def holds(self, values: Sequence[Any]) -> bool:
        """This token of the pattern is satisfied by a token with these (TAG, LOWER, DEP, IS_SPACE) values."""
        return all(check(values[field]) for field, check in self.checks)


def _check(value: Any) -> tuple[Check, frozenset[str] | None]:
    """A predicate for one attribute's pattern value, and the exact values it accepts when it names them."""
    if isinstance(value, (str, bool)):
        return (lambda seen: seen == value), frozenset([value]) if isinstance(value, str) else None
    if isinstance(value, dict) and len(value) == 1:
        ((kind, arg),) = value.items()
        if kind == "IN" and isinstance(arg, list):
            accepted = frozenset(arg)
            return (lambda seen: seen in accepted), accepted
        if kind == "NOT_IN" and isinstance(arg, list):
            refused = frozenset(arg)
            return (lambda seen: seen not in refused), None
        if kind == "REGEX" and isinstance(arg, str):
            compiled = re.compile(arg)
            return (lambda seen: isinstance(seen, str) and compiled.search(seen) is not None), None
    raise Unsupported(f"pattern value {value!r}")


def _slots(rule: int, alternatives: list[list[dict]], index: int) -> list[tuple[Slot, frozenset[str] | None, int]]:
    """The slots of one rule's alternatives, each with the values that key it (an exact TAG, else LOWER)."""
    made = []
    for number, tokens in enumerate(alternatives):
        length = len(tokens)
        if not -length <= index < length:
            raise Unsupported(f"index {index} outside a {length}-token pattern")
        for offset, spec in enumerate(tokens):
            if not set(spec) <= set(FIELDS):
                raise Unsupported(f"token pattern {spec!r}")
            checks, exact = [], {}
            for name, value in spec.items():
                check, accepted = _check(value)
                checks.append((FIELDS.index(name), check))
                if accepted is not None:
                    exact[FIELDS.index(name)] = accepted
            slot = Slot(rule, number, offset, length, index % length, tuple(checks))
            field = _TAG if _TAG in exact else _LOWER if _LOWER in exact else -1
            made.append((slot, exact.get(field), field))
    return made


class FastAttributes:
    """Sets what an AttributeRuler would set, from the ruler's own patterns and normalised attributes."""

    def __init__(self, ruler: Any) -> None:
        self.strings = ruler.vocab.strings
        self.rule_attrs: list[dict] = list(ruler.attrs)
        self.by_value: dict[tuple[int, str], list[Slot]] = {}
        self.general: list[Slot] = []
        for rule in range(len(self.rule_attrs)):
            for slot, accepted, field in _slots(rule, ruler.matcher.get(str(rule))[1], ruler.indices[rule]):
                if accepted is None:
                    self.general.append(slot)
                for value in accepted or ():
                    self.by_value.setdefault((field, value), []).append(slot)
        self._filled: dict[tuple[int, ...], tuple[frozenset[tuple[int, int, int]], tuple[Slot, ...]]] = {}
        self._merged: dict[tuple[int, ...], dict] = {}

    def __call__(self, doc: Any) -> Any:
        """Annotate `doc` in place, as the attribute ruler would."""
        from spacy.tokens._retokenize import set_token_attrs

        filled = [self._slots_of(tuple(row)) for row in doc.to_array(list(FIELDS)).tolist()]
        targets: dict[int, set[int]] = {}
        for start, (_, starting) in enumerate(filled):
            for slot in starting:
                end = start + slot.length
                if end <= len(filled) and all(
                    (slot.rule, slot.alternative, k) in filled[start + k][0] for k in range(1, slot.length)
                ):
                    targets.setdefault(start + slot.target, set()).add(slot.rule)
        for token, rules in targets.items():
            attrs = self._attrs_of(tuple(sorted(rules)))
            if attrs:
                set_token_attrs(doc[token], attrs)
        return doc

    def _slots_of(self, signature: tuple[int, ...]) -> tuple[frozenset[tuple[int, int, int]], tuple[Slot, ...]]:
        """The slots a token of this (TAG, LOWER, DEP, IS_SPACE) signature fills, and those that start a pattern."""
        known = self._filled.get(signature)
        if known is None:
            values = [self.strings[h] for h in signature[:3]] + [bool(signature[3])]
            candidates = [
                *self.by_value.get((_TAG, values[_TAG]), ()),
                *self.by_value.get((_LOWER, values[_LOWER]), ()),
                *self.general,
            ]
            held = [slot for slot in candidates if slot.holds(values)]
            known = (
                frozenset((s.rule, s.alternative, s.offset) for s in held),
                tuple(s for s in held if s.offset == 0),
            )
            self._filled[signature] = known
        return known

    def _attrs_of(self, rules: tuple[int, ...]) -> dict:
        """The attributes of these rules merged in rule order: a later rule's value wins, as in AttributeRuler."""
        merged = self._merged.get(rules)
        if merged is None:
            merged = {}
            for rule in rules:
                merged.update(self.rule_attrs[rule])
            self._merged[rules] = merged
        return merged


def compile_ruler(ruler: Any) -> FastAttributes | None:
    """The fast equivalent of `ruler`, or None when one of its patterns needs spaCy's Matcher."""
    try:
        return FastAttributes(ruler)
    except Unsupported:
        return None
