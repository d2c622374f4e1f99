"""Trimming's shortcut for the common answer: nothing to cut, only empty members to drop.

:func:`bridge.results.trim_walk.measure` computes every size and cut candidate the budget could need,
about 0.2 ms for a 23 KB GitHub repository. When no string and no array is over its cap and the
compact JSON fits the byte budget, none of that is used: the result is the copy with empty
members dropped, and no note. :func:`uncut_copy` makes that copy (the same drops as the walk's:
null and empty members of objects, and objects left empty by them, never array items, never a
kept root member) and its compact JSON, whose length is the size the budget counts
(:func:`bridge.results.trim_walk.json_size`); it returns None as soon as something would be cut, or the
value holds anything the walk treats with more care (non-JSON types, non-string keys, deep
nesting), and the full walk runs as before. ``tests/bridge/results/test_trim_quick.py`` compares the two.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from bridge.contract.result_shape import MAX_RESULT_DEPTH

__all__ = ["uncut_copy"]

# Deeper answers take the iterative walk, which empties containers past the result depth (this copy recurses).
_MAX_DEPTH = MAX_RESULT_DEPTH - 1
_NO_BUDGET = float("inf")


class _Cut(Exception):
    """Something the quick copy does not do: the full walk decides."""


def uncut_copy(
    root: dict[str, Any],
    *,
    max_items: int | None,
    max_string: int | None,
    max_bytes: int | None,
    drop_empty: bool,
    keep: Collection[str],
) -> tuple[dict[str, Any], str] | None:
    """The trimmed copy of ``root`` and its compact JSON when nothing is cut, else None.

    Limits are normalised ones (:meth:`bridge.results.trim.TrimSettings.normalised`).
    """
    copier = _Copier(max_items or 0, max_string or 0, drop_empty, max_bytes or _NO_BUDGET)
    try:
        value = copier.object(root, keep, 0)
    except (_Cut, RecursionError):
        return None
    text = _compact(value, floats=copier.floats)
    # Bytes >= characters, and at most 4 bytes a character: the encoding is needed only in between.
    if max_bytes and len(text) > max_bytes:
        return None
    if max_bytes and 4 * len(text) > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        return None
    return value, text


def _compact(value: dict[str, Any], *, floats: bool) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, by pydantic-core's encoder
    (a third of the time) when that writes the same text: with no float in ``value`` (its float
    format differs: ``1e-7``, not ``1e-07``) and no lone surrogate (which it refuses)."""
    if not floats:
        try:
            return to_json(value).decode("utf-8")
        except PydanticSerializationError:
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Copier:
    """The copy, stopped as soon as it is sure not to fit: ``left`` is the budget minus a lower
    bound of the bytes copied so far (an array item, or a kept object member, is at least one
    byte), so an answer far over the budget costs no more than the walk, which stops there too."""

    __slots__ = ("drop_empty", "floats", "left", "max_items", "max_string")

    def __init__(self, max_items: int, max_string: int, drop_empty: bool, max_bytes: float) -> None:
        self.max_items, self.max_string, self.drop_empty = max_items, max_string, drop_empty
        self.left = max_bytes
        self.floats = False  # a float was copied: the text is json's (see _compact)

    def object(self, value: dict[str, Any], keep: Collection[str], depth: int) -> dict[str, Any]:
        if depth > _MAX_DEPTH:
            raise _Cut
        out: dict[str, Any] = {}
        drop_empty, max_string = self.drop_empty, self.max_string
        for key, item in value.items():
            if type(key) is not str:
                raise _Cut
            kind = type(item)
            if kind is str:
                if max_string and len(item) > max_string:
                    raise _Cut
                if not item and drop_empty and key not in keep:
                    continue
            elif kind is dict:
                item = self.object(item, (), depth + 1)
                if not item and drop_empty and key not in keep:
                    continue
            elif kind is list:
                if not item and drop_empty and key not in keep:
                    continue
                item = self.array(item, depth + 1)
            elif item is None:
                if drop_empty and key not in keep:
                    continue
            elif kind is float:
                self.floats = True
            elif kind is not int and kind is not bool:
                raise _Cut
            out[key] = item
        self.left -= len(out)
        if self.left < 0:
            raise _Cut
        return out

    def array(self, value: list[Any], depth: int) -> list[Any]:
        self.left -= len(value)
        if depth > _MAX_DEPTH or (self.max_items and len(value) > self.max_items) or self.left < 0:
            raise _Cut
        max_string = self.max_string
        out = []
        for item in value:  # array items are never dropped, only copied
            kind = type(item)
            if kind is str:
                if max_string and len(item) > max_string:
                    raise _Cut
            elif kind is dict:
                item = self.object(item, (), depth + 1)
            elif kind is list:
                item = self.array(item, depth + 1)
            elif kind is float:
                self.floats = True
            elif item is not None and kind is not int and kind is not bool:
                raise _Cut
            out.append(item)
        return out
