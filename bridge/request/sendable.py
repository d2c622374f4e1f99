"""Argument values the wire cannot carry, refused with a message naming the argument before a request exists.

- **Non-finite numbers.** JSON has no NaN or Infinity, yet the SDK's JSON parser accepts them
  (``{"price": NaN}`` arrives as ``float("nan")`` over stdio and HTTP), and the schema type
  ``number`` admits them. Nowhere can they be sent: a JSON body or a JSON-encoded parameter
  would fail inside ``json.dumps`` (a bridge bug to the model), and a query text ``nan`` is
  meaningless to the API. They are refused in every argument, at any depth, with the field
  path (``data.items.2.price``, as validation names fields).
- **Oversized path, query, header and cookie values.** A 10 MB path value made a URL httpx
  refuses to parse, which the model saw as "would not match the operation's path". Each value
  is bounded by its location (:data:`LIMITS`, UTF-8 bytes before percent-encoding: 8 KiB is
  what common servers accept in one request line or header; 16 KiB for a query value), and the
  whole URL by :data:`MAX_URL_BYTES` (httpx's own limit) after encoding.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from bridge.contract.catalogue import ParamBinding
from bridge.tools.errors import InvalidArgumentsError

__all__ = ["LIMITS", "MAX_URL_BYTES", "check_sendable", "check_url_length"]

LIMITS: Mapping[str, int] = {"path": 8 * 1024, "query": 16 * 1024, "header": 8 * 1024, "cookie": 8 * 1024}
"""Largest value of one path, query, header or cookie parameter, in UTF-8 bytes before encoding.

Percent-encoding at most triples a value, so one value under its limit always fits the URL
limit; only several long values together can pass it."""
MAX_URL_BYTES = 65_536
"""Longest request URL, encoded (httpx refuses to parse longer ones)."""

_WHERE = {"path": "a path segment", "query": "a query value", "header": "a header value", "cookie": "a cookie value"}
_MAX_DEPTH = 64
_LEAVES = frozenset({str, int, bool, type(None)})
_INFINITIES = (math.inf, -math.inf)


def check_sendable(params: Iterable[ParamBinding], args: Mapping[str, Any]) -> None:
    """Refuse non-finite numbers in any argument and parameter values over their location's limit.

    Raises:
        InvalidArgumentsError: naming the argument (and the field path or the limit).
    """
    for name, value in args.items():
        where = _non_finite(value, name, 0) if _has_non_finite(value) else None
        if where is not None:
            raise InvalidArgumentsError(
                f'Argument "{where}" is NaN or infinite, which JSON cannot carry and the API cannot be sent; '
                "pass a finite number."
            )
    for param in params:
        limit = LIMITS.get(param.location)
        value = args.get(param.arg)
        if limit is None or value is None:
            continue
        size = _size(value, limit, 0)
        if size > limit:
            raise InvalidArgumentsError(
                f'Argument "{param.arg}" is too long: over the {limit:,}-byte limit of {_WHERE[param.location]}. '
                "Pass a shorter value."
            )


def check_url_length(netloc: bytes, path: str, query: Iterable[tuple[str, str]], names: Iterable[str]) -> None:
    """Refuse a URL of ``path`` and encoded ``query`` pairs longer than :data:`MAX_URL_BYTES`.

    ``names`` are the path and query arguments that were given, for the message.

    Raises:
        InvalidArgumentsError: the URL would be too long; nothing is built.
    """
    length = len(netloc) + len(path) + sum(len(n) + len(v) + 2 for n, v in query) + len("https://")
    if length > MAX_URL_BYTES:
        given = ", ".join(f'"{n}"' for n in names) or "none"
        raise InvalidArgumentsError(
            f"The path and query arguments ({given}) make a request URL over the {MAX_URL_BYTES:,}-byte limit "
            "once encoded. Pass shorter values."
        )


def _has_non_finite(value: Any) -> bool:
    """Whether ``value`` holds a NaN or infinity: the fast walk every call makes (no paths built)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)  # JSON's own types first: exact type checks are the cheap ones
        if kind is float:
            if item != item or item in _INFINITIES:
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind in _LEAVES:
            continue
        elif isinstance(item, float):  # float and its subclasses
            if not math.isfinite(item):
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _non_finite(value: Any, path: str, depth: int) -> str | None:
    """The dotted path of the first NaN or infinity inside ``value``, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if depth > _MAX_DEPTH:
        return path if _has_non_finite(value) else None  # absurdly deep: name the branch, not the leaf
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _non_finite(item, f"{path}.{key}", depth + 1)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _non_finite(item, f"{path}.{index}", depth + 1)
            if found is not None:
                return found
    return None


def _size(value: Any, limit: int, depth: int) -> int:
    """UTF-8 bytes of ``value``'s text (keys and items summed); stops counting once over ``limit``."""
    if isinstance(value, str):
        return len(value) if len(value) > limit else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, Mapping):
        items: Iterable[Any] = (part for pair in value.items() for part in pair)
    elif isinstance(value, list | tuple):
        items = value
    else:
        return len(str(value))
    total = 0
    for item in items:
        total += 1 + (_size(item, limit - total, depth + 1) if depth < _MAX_DEPTH else 0)
        if total > limit:
            break
    return total
