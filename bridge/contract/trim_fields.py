"""The ``fields`` of a result: dotted paths parsed into a trie, and the projection they name.

``items.name,total_count``: comma-separated dotted paths (arrays are crossed transparently; no
expressions). Only keys of the parsed response are looked up; nothing else can be named or read.
In a wrapped result (``{"result": [...]}``) paths are relative to the items.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["MAX_FIELDS", "WRAP_KEY", "Trie", "iter_paths", "parse_fields", "project", "split_fields"]

WRAP_KEY = "result"
MAX_FIELDS = 100
MAX_FIELD_DEPTH = 16
MAX_SEGMENT_CHARS = 200


def split_fields(value: Any) -> list[str] | None:
    """The ``fields`` argument as a list of paths: a comma-separated string (or a list)."""
    if isinstance(value, str):
        return [part for part in (p.strip() for p in value.split(",")) if part] or [value]
    if isinstance(value, list):
        return [str(item) for item in value]
    return None


Trie = dict[str, "Trie | None"]  # None: keep the whole value below this key


def parse_fields(fields: Sequence[str] | None, *, wrapped: bool = False) -> tuple[Trie, list[str]]:
    """A trie of dotted paths, and the entries that are not paths (reported, never used).

    In a wrapped result (``{"result": [...]}``) paths are relative to the items unless they
    start with ``result``.
    """
    trie: Trie = {}
    rejected: list[str] = []
    for raw in list(fields or ())[:MAX_FIELDS]:
        text = raw.strip() if isinstance(raw, str) else ""
        segments = text.split(".") if text else []
        if (
            not segments
            or len(segments) > MAX_FIELD_DEPTH
            or any(not s or len(s) > MAX_SEGMENT_CHARS for s in segments)
        ):
            rejected.append(str(raw)[:80])
            continue
        if wrapped and segments[0] != WRAP_KEY:
            segments = [WRAP_KEY, *segments]
        node: Trie = trie
        for position, segment in enumerate(segments):
            last = position == len(segments) - 1
            if segment in node and node[segment] is None:
                break  # a shorter path already keeps everything below
            if last:
                node[segment] = None
            else:
                child = node.get(segment)
                if child is None:
                    child = node[segment] = {}
                node = child
    return trie, rejected


_DROP = object()


def _project(value: Any, trie: Trie, in_array: bool) -> Any:
    if isinstance(value, list):
        return [_project(item, trie, True) for item in value]
    if isinstance(value, dict):
        out = {}
        for key, sub in trie.items():
            if key not in value:
                continue
            if sub is None or _holds_nothing(value[key]):
                # Nothing below to select from: the member is its own answer (an empty page is
                # an empty page, a null milestone is null), not a path that names nothing.
                out[key] = value[key]
            else:
                kept = _project(value[key], sub, False)
                if kept is not _DROP and not _matched_nothing(kept):
                    out[key] = kept
        return out
    return value if in_array else _DROP


def _holds_nothing(value: Any) -> bool:
    return value is None or value == [] or value == {}


def _matched_nothing(projected: Any) -> bool:
    """A container that the projection emptied (a path below it named nothing that exists)."""
    if isinstance(projected, dict):
        return not projected
    if isinstance(projected, list):
        return all(isinstance(item, dict | list) and _matched_nothing(item) for item in projected)
    return False


def project(value: Mapping[str, Any], trie: Trie) -> dict[str, Any]:
    """The members of ``value`` the trie names (plain key lookups on the parsed JSON only)."""
    result = _project(dict(value), trie, False)
    return result if isinstance(result, dict) else {}


def iter_paths(value: Any, prefix: str = "") -> Iterator[str]:
    """Dotted paths of every member in ``value`` (arrays crossed), for tests and diagnostics."""
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path
            yield from iter_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            yield from iter_paths(item, prefix)
