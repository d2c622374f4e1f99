"""The one walk of trimming: a capped copy of a JSON result and the sizes the fitter needs.

:func:`measure` copies the value with the caps applied (empty members dropped, long strings and
arrays cut) and computes, bottom-up, the compact UTF-8 JSON size of every container and of the
members step 2 of :mod:`bridge.results.trim_budget` may leave out, each cut candidate with its walk index
(containers and long strings are numbered in walk order, so a subtree is an interval). Sizes are
exact: strings through the C escaper ``json.dumps`` uses, numbers through their ``repr``. The
walk is iterative (a body nested as deep as the JSON parser allows does not exhaust the stack,
and containers nested deeper than :data:`~bridge.contract.result_shape.MAX_RESULT_DEPTH` are emptied, so
every client can parse the result),
small containers of short scalars are copied without a stack entry, and an array is walked only
until it passes the byte budget.
"""

from __future__ import annotations

import gc
import heapq
import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # the C escaper json.dumps uses
from typing import Any

from bridge.contract.result_shape import MAX_RESULT_DEPTH
from bridge.secrets.excerpt import cut_redacted

__all__ = [
    "ELLIPSIS",
    "MIN_STRING",
    "Cap",
    "Frame",
    "Tree",
    "child_pattern",
    "cut_string",
    "json_size",
    "measure",
    "no_cyclic_gc",
    "scalar_size",
]

MIN_STRING = 256
"""The smallest string cap: no string this short is ever cut, so every value of a short ``format``
(dates, uuids, emails, addresses, host names) stays valid, and short identifiers stay whole."""
ELLIPSIS = "…"
_PATTERN_CHARS = 160  # a note names a path by at most this many characters (keys are data)
_SEGMENT_CHARS = 48
_FLOATS = {"nan": 3, "inf": 8, "-inf": 9}  # NaN, Infinity, -Infinity as json.dumps writes them


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (what the budget counts)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))


def scalar_size(value: Any) -> int:
    kind = type(value)
    if kind is str:
        return len(encode_basestring(value).encode("utf-8", "surrogatepass"))
    if kind is int:
        return len(int.__repr__(value))
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if kind is float:
        text = float.__repr__(value)
        return _FLOATS.get(text, len(text))
    return json_size(value)


def cut_string(text: str, limit: int) -> str:
    """``text`` (redacted already) cut to ``limit`` characters, the ellipsis included, never
    through a mask (``**…`` would read as part of a secret)."""
    return cut_redacted(text, max(limit - 1, 0)) + ELLIPSIS


class Frame:
    """A container being copied (the walk's own stack entry: no recursion), then where it sits,
    for naming cuts: its parent's frame and its key there."""

    __slots__ = (
        "count",
        "extents",
        "is_dict",
        "item_sizes",
        "item_starts",
        "items",
        "key",
        "keys",
        "msizes",
        "orig_len",
        "out",
        "parent",
        "path",
        "size",
        "start",
        "transparent",
    )

    def __init__(
        self,
        value: dict[str, Any] | list[Any],
        parent: Frame | None,
        key: str | int | None,
        start: int,
        transparent: bool,
        max_items: int | None,
        caps: list[Cap],
        total: int | None = None,
    ) -> None:
        self.parent, self.key, self.start, self.transparent = parent, key, start, transparent
        self.path: str | None = None if parent is not None else ""
        self.size = self.count = 0
        self.orig_len = len(value) if total is None else total
        self.is_dict = type(value) is dict
        self.out: Any = {} if self.is_dict else []
        listed = self.is_dict and (transparent or len(value) > _LISTED_MEMBERS)
        # A listed object's members, for step 2: keys, sizes, and walk extents of the ones that hold cuts
        self.keys: list[str] | None = [] if listed else None
        self.msizes: list[int] = [] if listed else _UNUSED
        self.extents: dict[int, tuple[int, int]] = {} if listed else _UNUSED_EXTENTS
        self.item_sizes: list[int] = _UNUSED if self.is_dict else []
        self.item_starts: list[int] = _UNUSED if self.is_dict else []
        self.items: Iterator[Any]
        if isinstance(value, dict):
            self.items = iter(value.items())
        elif max_items and len(value) > max_items:
            assert parent is not None and key is not None
            caps.append(Cap("array", parent, key, start, max_items, self.orig_len))
            self.items = iter(value[:max_items])
        else:
            self.items = iter(value)

    def pattern(self, key: str | int | None = None) -> str:
        """The path pattern (``items[].name``) of this container, or of its member ``key``."""
        chain: list[Frame] = []
        frame: Frame | None = self
        while frame is not None and frame.path is None:
            chain.append(frame)
            frame = frame.parent
        for link in reversed(chain):
            assert link.parent is not None and link.parent.path is not None
            link.path = child_pattern(link.parent.path, link.key)
        assert self.path is not None
        return self.path if key is None else child_pattern(self.path, key)


def child_pattern(parent: str, key: str | int | None) -> str:
    if isinstance(key, int) or key is None:
        out = parent + "[]"
    else:
        part = key if len(key) <= _SEGMENT_CHARS else key[:_SEGMENT_CHARS] + ELLIPSIS
        out = f"{parent}.{part}" if parent else part
    return out if len(out) <= _PATTERN_CHARS else ELLIPSIS + out[-_PATTERN_CHARS:]


@dataclass(slots=True)
class Cap:
    """One cut made while walking or fitting: what (array or string), where, how much was kept."""

    kind: str
    frame: Frame
    key: str | int
    place: int
    kept: int
    total: int


# A candidate of step 1: (-size, walk index, container, key, frame, length before any cut)
_Candidate = tuple[int, int, Any, Any, Frame, int]
_LISTED_MEMBERS = 16  # objects with more members have them listed by the walk, whatever their place
# What a frame that never needs a list holds instead (one allocation less per container: never written)
_UNUSED: list[int] = []
_UNUSED_EXTENTS: dict[int, tuple[int, int]] = {}


@dataclass(slots=True)
class Tree:
    """The capped copy of a result and the sizes the fitter needs."""

    value: dict[str, Any]
    total: int = 0
    heap: list[_Candidate] = field(default_factory=list)
    # by walk index: item sizes, where each item starts in the walk (None: no cuts inside), end
    arrays: dict[int, tuple[list[int], list[int] | None, int]] = field(default_factory=dict)
    members: dict[int, Frame] = field(default_factory=dict)  # by id(): the objects whose members were listed
    spans: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # id() of a container: size, start, end
    caps: list[Cap] = field(default_factory=list)


def measure(
    root: dict[str, Any],
    *,
    max_items: int | None,
    max_string: int | None,
    drop_empty: bool,
    keep: frozenset[str],
    max_bytes: int | None = None,
    lengths: Mapping[int, int] | None = None,
) -> Tree:
    """Steps 2-3 of :mod:`bridge.results.trim` (drop empty members, cap strings and arrays) and all sizes.

    An array is walked only until its items add up to more than ``max_bytes``: arrays are only
    ever cut to a prefix, so no item after that can be in a result that fits. ``lengths``: the
    original length of strings and arrays already cut before (by ``id``), for the notes."""
    with no_cyclic_gc():
        return _measure(root, max_items, max_string, drop_empty, keep, max_bytes or 0, lengths or {})


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic collector paused around a trim on the main thread only, and put back as it was.

    A library host keeps its collector settings (:mod:`bridge.serving.tuning`): ``gc.disable()``
    is process-wide, so a trim in a worker thread would switch the collector off under every other
    thread, and two overlapping trims could leave it off. Here the pause happens only on the main
    thread (where nothing else runs while the trim does), and only when the collector was on.
    Trimming allocates a few acyclic objects per container (JSON), which the collector scans for
    nothing; reference counting frees them either way. Measured with ``bench/trim_bench.py``'s
    1 MiB shapes, median CPU ms of 7 runs, paused / collector on (two rounds each, one process):
    wide object 43.3 / 42.4 and 42.4 / 41.8; map-shaped 56.3 / 60.9 and 56.9 / 59.2; mixed
    22.6 / 24.9 and 22.6 / 21.9; deep, long strings and arrays of objects equal to 0.1 ms. The
    pause saves at most ~5% on map-shaped answers and nothing elsewhere, so threads go without it.
    """
    if threading.current_thread() is not threading.main_thread() or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _measure(
    root: dict[str, Any],
    max_items: int | None,
    max_string: int | None,
    drop_empty: bool,
    keep: frozenset[str],
    budget: int,
    lengths: Mapping[int, int],
) -> Tree:
    tree = Tree({})
    heap, caps, arrays, members, spans = tree.heap, tree.caps, tree.arrays, tree.members, tree.spans
    key_sizes: dict[str, int] = {}  # with its colon; objects in arrays repeat their keys
    counter = 1  # walk index: one per container and per string long enough to be cut
    top = Frame(root, None, None, 0, True, max_items, caps)
    top.out = tree.value
    stack = [top]
    while stack:
        node = stack[-1]
        out, is_dict, listed = node.out, node.is_dict, node.keys
        msizes, extents, item_sizes, item_starts = node.msizes, node.extents, node.item_sizes, node.item_starts
        size, count = node.size, node.count
        at_root = node.parent is None
        child: Frame | None = None
        for entry in node.items:
            if is_dict:
                key, value = entry
            else:
                key, value = count, entry
            kind = type(value)
            lo = hi = 0
            if kind is str:
                if drop_empty and is_dict and not value and not (at_root and key in keep):
                    continue
                length = len(value)
                if length > MIN_STRING or (max_string and length > max_string):
                    if lengths:
                        length = lengths.get(id(value), length)
                    if max_string and len(value) > max_string:
                        caps.append(Cap("string", node, key, counter, max_string, length))
                        value = cut_string(value, max_string)
                    vsize = len(encode_basestring(value).encode("utf-8", "surrogatepass"))
                    if len(value) > MIN_STRING:
                        heap.append((-vsize, counter, out, key, node, length))
                    lo, hi = counter, counter + 1
                    counter += 1
                else:
                    vsize = len(encode_basestring(value).encode("utf-8", "surrogatepass"))
            elif (kind is dict or kind is list) and len(stack) >= MAX_RESULT_DEPTH:
                if value:  # past what clients parse: emptied, with a note
                    caps.append(Cap("depth", node, key, counter, MAX_RESULT_DEPTH, len(value)))
                    value = {} if kind is dict else []
                    counter += 1
                elif drop_empty and is_dict and not (at_root and key in keep):
                    continue
                vsize = 2
            elif kind is dict or kind is list:
                # step 2 reaches the kept members and, through arrays cut to one item, first items
                transparent = node.transparent and ((at_root and key in keep) if is_dict else count == 0)
                flat = None if transparent or len(value) > _LISTED_MEMBERS else _flat(value, drop_empty, key_sizes)
                if flat is None:
                    child = Frame(value, node, key, counter, transparent, max_items, caps, lengths.get(id(value)))
                    counter += 1
                    break
                value, vsize, sizes = flat  # a small container of short scalars: no stack entry
                if drop_empty and is_dict and not value and not (at_root and key in keep):
                    continue
                lo = hi = counter
                if sizes is not None:
                    if len(sizes) > 1:
                        heap.append((-vsize, counter, out, key, node, len(sizes)))
                        arrays[counter] = (sizes, None, counter + 1)
                    hi = counter = counter + 1
                spans[id(value)] = (vsize, lo, hi)
            elif value is None:
                if drop_empty and is_dict and not (at_root and key in keep):
                    continue
                vsize = 4
            elif kind is int:
                vsize = len(int.__repr__(value))
            else:
                vsize = scalar_size(value)
            if is_dict:
                ksize = key_sizes.get(key)
                if ksize is None:
                    ksize = key_sizes[key] = len(encode_basestring(key).encode("utf-8", "surrogatepass")) + 1
                msize = ksize + vsize
                out[key] = value
                if listed is not None:
                    if hi:
                        extents[len(listed)] = (lo, hi)
                    listed.append(key)
                    msizes.append(msize)
            else:
                msize = vsize
                out.append(value)
                item_sizes.append(vsize)
                item_starts.append(lo or counter)
            size += msize
            count += 1
            if budget and size > budget and not is_dict:
                break  # the rest of this array can never be kept
        node.size, node.count = size, count
        if child is not None:
            stack.append(child)
            continue
        stack.pop()
        total = 2 + size + max(count - 1, 0)
        parent = node.parent
        if listed is not None:
            members[id(out)] = node
        spans[id(out)] = (total, node.start, counter)
        if parent is None:
            tree.total = total
            break
        key = node.key
        if not is_dict and count > 1:
            heap.append((-total, node.start, parent.out, key, parent, node.orig_len))
            arrays[node.start] = (item_sizes, item_starts, counter)
        if parent.is_dict:
            assert isinstance(key, str)
            if drop_empty and count == 0 and not (parent.parent is None and key in keep):
                continue
            msize = len(encode_basestring(key).encode("utf-8", "surrogatepass")) + 1 + total
            parent.out[key] = out
            if parent.keys is not None:
                parent.extents[len(parent.keys)] = (node.start, counter)
                parent.keys.append(key)
                parent.msizes.append(msize)
        else:
            msize = total
            parent.out.append(out)
            parent.item_sizes.append(total)
            parent.item_starts.append(node.start)
        parent.size += msize
        parent.count += 1
        if budget and parent.size > budget and not parent.is_dict:
            parent.items = iter(())  # the rest of that array can never be kept
    heapq.heapify(heap)
    return tree


def _flat(
    value: dict[str, Any] | list[Any], drop_empty: bool, key_sizes: dict[str, int]
) -> tuple[Any, int, list[int] | None] | None:
    """The copy and size of a container of short scalars (item sizes too for an array), or None."""
    if isinstance(value, dict):
        total, count, dropped = 0, 0, False
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                if len(item) > MIN_STRING:
                    return None
                if not item and drop_empty:
                    dropped = True
                    continue
                vsize = len(encode_basestring(item).encode("utf-8", "surrogatepass"))
            elif kind is int:
                vsize = len(int.__repr__(item))
            elif item is None:
                if drop_empty:
                    dropped = True
                    continue
                vsize = 4
            elif kind is dict or kind is list:
                return None
            else:
                vsize = scalar_size(item)
            ksize = key_sizes.get(key)
            if ksize is None:
                ksize = key_sizes[key] = len(encode_basestring(key).encode("utf-8", "surrogatepass")) + 1
            total += ksize + vsize
            count += 1
        copy = {k: v for k, v in value.items() if v is not None and v != ""} if dropped else dict(value)
        return copy, 2 + total + max(count - 1, 0), None
    sizes: list[int] = []
    for item in value:
        kind = type(item)
        if kind is str:
            if len(item) > MIN_STRING:
                return None
            sizes.append(len(encode_basestring(item).encode("utf-8", "surrogatepass")))
        elif kind is int:
            sizes.append(len(int.__repr__(item)))
        elif kind is dict or kind is list:
            return None
        else:
            sizes.append(scalar_size(item))
    return list(value), 2 + sum(sizes) + max(len(sizes) - 1, 0), sizes
