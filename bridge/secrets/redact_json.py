"""Redacted copies of JSON data: what the model and programs see of an answer or a program's value.

:func:`redact_json` copies JSON data with every string and key redacted, the value of a
credential-named member masked whatever it is (``{"X-API-Key": "…"}``, a header pair
``["X-API-Key", "…"]``, a HAR-style ``{"name": "X-API-Key", "value": "…"}``) and, when some
secret is all digits, numbers whose JSON spells one. The walk is iterative: data nested as deep
as the JSON parser allows (about 1,000 levels) does not exhaust the stack.

:func:`bounded_copy` is the same walk for a program's final value, which may be anything its
64 MiB heap holds (a 10 MB string, a list of 200,000 objects, a list nested 100,000 deep). It
also turns Python values into JSON data (tuples and sets become lists, bytes text, other objects
their ``repr``, NaN and the infinities their names), and it bounds the copy to what trimming can
keep *before* redacting it: strings longer than the string cap plus :data:`REDACT_SLACK`, arrays
longer than the item cap, keys longer than the byte budget and containers nested past
:data:`~bridge.contract.result_shape.MAX_RESULT_DEPTH` are cut. Redaction then never runs one C-level
search over megabytes (which holds the interpreter however many threads there are), while it
still sees a secret that straddles trimming's cut whole. The original lengths are recorded by the
id of each cut copy, so that trimming's notes say how long the value was.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bridge.contract.result_shape import MAX_RESULT_DEPTH
from bridge.secrets.excerpt import SLACK, excerpt
from bridge.secrets.redact import MASK, Redactor

__all__ = ["REDACT_SLACK", "Bounds", "bounded_copy", "redact_json"]

REDACT_SLACK = SLACK + 1
"""Characters of a cut string that redaction reads past the string cap: :mod:`bridge.secrets.excerpt`'s
margin, and one character past the cap that trimming then cuts (and says so)."""

Redact = Callable[[str], str]
Member = Callable[[str, str], str]
_HUGE = 1 << 62


@dataclass(frozen=True, slots=True)
class Bounds:
    """Where :func:`bounded_copy` cuts (None: no cut of that kind)."""

    max_string: int | None = None
    max_items: int | None = None
    max_key: int | None = None
    max_depth: int = MAX_RESULT_DEPTH + 1


def redact_json(value: Any, redact: Redact) -> Any:
    """JSON data with every string, key, credential-named member and numeric secret redacted."""
    return _Walk(redact, None).copy(value)


def bounded_copy(value: Any, redact: Redact, bounds: Bounds) -> tuple[Any, dict[int, int]]:
    """A program's value as redacted JSON data, bounded by ``bounds`` first (see the module
    docstring), and the original length of every string and array that was cut, by ``id``."""
    walk = _Walk(redact, bounds)
    return walk.copy(value), walk.lengths


class _Walk:
    __slots__ = ("convert", "lengths", "max_depth", "max_items", "max_key", "max_string", "member", "numbers", "redact")

    def __init__(self, redact: Redact, bounds: Bounds | None) -> None:
        self.redact = redact
        self.member: Member | None = redact.member if isinstance(redact, Redactor) else None
        self.numbers = isinstance(redact, Redactor) and redact.masks_numbers
        self.convert = bounds is not None
        self.lengths: dict[int, int] = {}
        if bounds is None:
            self.max_string = self.max_items = self.max_key = self.max_depth = _HUGE
        else:
            self.max_string = bounds.max_string + REDACT_SLACK if bounds.max_string else _HUGE
            # Past the cap, so trimming still cuts (and says so); never a small container it copies whole.
            self.max_items = max(bounds.max_items, 16) + 1 if bounds.max_items else _HUGE
            self.max_key = bounds.max_key + REDACT_SLACK if bounds.max_key else _HUGE
            self.max_depth = bounds.max_depth

    def text(self, item: str, redact: Redact | None = None, length: int | None = None) -> str:
        """``item`` redacted; past the cap, redacted and then cut to the string cap (excerpt reads
        the cap and REDACT_SLACK more). ``length``: ``item`` is the start of a value that long."""
        partial = length is not None and length > len(item)
        if len(item) > self.max_string or partial:
            # One character past the cap: trimming still cuts it, and says so with the length.
            cut = excerpt(item, redact or self.redact, self.max_string - SLACK, partial=partial)
            self.lengths[id(cut)] = length or len(item)
            return cut
        return (redact or self.redact)(item)

    def leaf(self, item: Any, name: str | None) -> Any:
        """A scalar (or, converting, anything that is not a container) as redacted JSON."""
        kind = type(item)
        if kind is str:
            if name is None or self.member is None:
                return self.text(item)
            if len(item) <= self.max_string:
                return self.member(name, item)
            member = self.member
            return self.text(item, lambda value: member(name, value))
        if kind is int or kind is float:
            if self.convert and kind is float and not math.isfinite(item):
                return str(item)
            if self.numbers:
                shown = repr(item)  # what its JSON says
                masked = self.redact(shown) if name is None or self.member is None else self.member(name, shown)
                return item if masked == shown else MASK
            return item
        if item is None or kind is bool or not self.convert:
            return item
        if isinstance(item, bytes | bytearray):
            return self.text(bytes(item[: self.max_string]).decode("utf-8", errors="replace"), length=len(item))
        if isinstance(item, str):  # subclasses (an enum member): as their plain value
            return self.leaf(str(item), name)
        if isinstance(item, int):
            return self.leaf(int(item), name)
        if isinstance(item, float):
            return self.leaf(float(item), name)
        return self.text(repr(item))

    def container(self, item: Any) -> tuple[Any, Iterator[Any]] | None:
        """The empty copy of a container and its entries to walk (cut to the item bound), or None."""
        if isinstance(item, dict):
            return {}, iter(item.items())
        if isinstance(item, list | tuple) or (self.convert and isinstance(item, set | frozenset)):
            if isinstance(item, set | frozenset):
                item = sorted(item, key=repr)
            copy: list[Any] = []
            if len(item) > self.max_items:
                self.lengths[id(copy)] = len(item)
                return copy, iter(item[: self.max_items])
            return copy, iter(item)
        return None

    def copy(self, value: Any) -> Any:
        top = self.container(value)
        if top is None:
            return self.leaf(value, None)
        redact, member, leaf, container, text = self.redact, self.member, self.leaf, self.container, self.text
        max_string, max_key, numbers = self.max_string, self.max_key, self.numbers
        root, entries = top
        stack: list[tuple[Iterator[Any], Any, Any]] = [(entries, root, _named(value, member))]
        while stack:
            entries, out, named = stack[-1]
            child: tuple[Any, Iterator[Any]] | None = None
            deep = len(stack) >= self.max_depth
            if type(out) is dict:
                for k, item in entries:
                    name = k if type(k) is str else str(k)
                    key = redact(name) if len(name) <= max_key else excerpt(name, redact, max_key - SLACK)
                    kind = type(item)
                    if kind is str:
                        if len(item) > max_string or member is None:
                            out[key] = leaf(item, name)
                        else:  # {"X-API-Key": "…"}, or a HAR-style header {"name": "X-API-Key", "value": "…"}
                            out[key] = member(named if k == "value" and isinstance(named, str) else name, item)
                        continue
                    if kind is int or kind is bool or item is None:
                        out[key] = leaf(item, name) if numbers and kind is int else item
                        continue
                    if kind is list and member is not None and _header_pair(item):
                        out[key] = [redact(item[0]), member(item[0], item[1])]
                        continue
                    child = ({}, iter(item.items())) if kind is dict else container(item)
                    if child is None:
                        out[key] = leaf(item, name)
                        continue
                    out[key] = child[0]
                    if not deep:
                        break
                    child = None  # past the depth bound: left empty (trimming says so)
            else:
                for item in entries:
                    kind = type(item)
                    if kind is str:
                        out.append(redact(item) if len(item) <= max_string else text(item))
                        continue
                    if kind is int or kind is bool or item is None:
                        out.append(leaf(item, None) if numbers and kind is int else item)
                        continue
                    if kind is list and member is not None and _header_pair(item):
                        out.append([redact(item[0]), member(item[0], item[1])])
                        continue
                    child = ({}, iter(item.items())) if kind is dict else container(item)
                    if child is None:
                        out.append(leaf(item, None))
                        continue
                    out.append(child[0])
                    if not deep:
                        break
                    child = None
            if child is None:
                stack.pop()
            else:
                stack.append((child[1], child[0], _named(item, member)))
        return root


def _header_pair(item: list[Any]) -> bool:
    """``["X-API-Key", "…"]``: a name and a value, redacted as a header pair."""
    return len(item) == 2 and type(item[0]) is str and type(item[1]) is str


def _named(value: Any, member: Member | None) -> Any:
    return value.get("name") if member is not None and isinstance(value, dict) else None
