"""Capping a JSON result and fitting it into a byte budget in time about linear in its size.

One walk (:func:`measure`) copies the value with the caps applied (empty members dropped, long
strings and arrays cut) and computes, bottom-up, the compact UTF-8 JSON size of every container
and member it will need later. :class:`Fitter` then decides the budget cuts from those sizes,
without walking or encoding the value again:

1. the largest array (more than one item) or string (longer than ``MIN_STRING``) is cut until
   the excess is gone; sizes are taken in decreasing order from a heap. A node in the heap never
   has a cut below it (anything below it is smaller, so comes out later), so its size is exact;
   items dropped from an array kill the candidates inside them, found by their walk index;
2. if every array is down to one item and every string to the floor, members are left out,
   largest first. Only members that no candidate member contains can ever be the largest, so
   these are the members of the root and of the objects reached from it through kept members
   (the ``result`` wrapper) and array items; their sizes are the walk's sizes minus the cuts of
   step 1 inside them (a prefix sum over walk indices);
3. should that still not fit (a kept wrapper around something that cannot be cut), the kept
   members themselves are left out: nothing is required by the advertised schema.

Every step changes ``total`` by exactly what it removed, so the result's size is known without
encoding it, and the loop ends when it fits. The walk is iterative: a body nested as deep as the
JSON parser allows does not exhaust the Python stack.
"""

from __future__ import annotations

import gc
import heapq
import json
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import accumulate
from json.encoder import encode_basestring  # the C escaper json.dumps uses
from typing import Any

__all__ = [
    "ELLIPSIS",
    "MIN_STRING",
    "Cap",
    "Fitter",
    "Frame",
    "Omitted",
    "Tree",
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
    return text[: max(limit - 1, 0)] + ELLIPSIS


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
    ) -> None:
        self.parent, self.key, self.start, self.transparent = parent, key, start, transparent
        self.path: str | None = None if parent is not None else ""
        self.size = self.count = 0
        self.orig_len = len(value)
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
            caps.append(Cap("array", parent, key, start, max_items, len(value)))
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
# A member of an object as step 2 sizes it: (key, size, first and past-last walk index inside)
_Member = tuple[str, int, int, int]
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
) -> Tree:
    """Steps 2-3 of :mod:`bridge.trim` (drop empty members, cap strings and arrays) and all sizes.

    An array is walked only until its items add up to more than ``max_bytes``: arrays are only
    ever cut to a prefix, so no item after that can be in a result that fits."""
    with no_cyclic_gc():
        return _measure(root, max_items, max_string, drop_empty, keep, max_bytes or 0)


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic collector paused: trimming allocates a few objects per container, all acyclic
    (JSON), and the collector would scan the whole growing tree again and again for nothing.
    Reference counting still frees everything dropped."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _measure(
    root: dict[str, Any],
    max_items: int | None,
    max_string: int | None,
    drop_empty: bool,
    keep: frozenset[str],
    budget: int,
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
                    if max_string and length > max_string:
                        caps.append(Cap("string", node, key, counter, max_string, length))
                        value = cut_string(value, max_string)
                    vsize = len(encode_basestring(value).encode("utf-8", "surrogatepass"))
                    if len(value) > MIN_STRING:
                        heap.append((-vsize, counter, out, key, node, length))
                    lo, hi = counter, counter + 1
                    counter += 1
                else:
                    vsize = len(encode_basestring(value).encode("utf-8", "surrogatepass"))
            elif kind is dict or kind is list:
                # step 2 reaches the kept members and, through arrays cut to one item, first items
                transparent = node.transparent and ((at_root and key in keep) if is_dict else count == 0)
                flat = None if transparent or len(value) > _LISTED_MEMBERS else _flat(value, drop_empty, key_sizes)
                if flat is None:
                    child = Frame(value, node, key, counter, transparent, max_items, caps)
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


@dataclass(slots=True)
class Omitted:
    """Members left out of one object (its path pattern), the largest first."""

    count: int = 0
    size: int = 0
    keys: list[tuple[str, int]] = field(default_factory=list)  # the first few, with their sizes


class Fitter:
    """Cuts a measured tree down to a target size; :meth:`fit` may be called again with a smaller one."""

    def __init__(self, tree: Tree, keep: frozenset[str]) -> None:
        self.tree = tree
        self.keep = keep
        self.total = tree.total
        self.cuts: list[Cap] = []
        self.omitted: dict[str, Omitted] = {}
        self.over_budget = False
        self._dead_starts: list[int] = []
        self._dead_ends: list[int] = []
        self._deltas: list[tuple[int, int]] = []  # (walk index, bytes removed there) by step 1
        self._reachable: _Reachable | None = None
        self._next_member = 0

    def fit(self, target: int) -> None:
        if self.total <= target:
            return
        self.over_budget = True
        self._cut_arrays_and_strings(target)
        if self.total > target:
            self._leave_out_members(target)
        if self.total > target:
            self._leave_out_kept(target)

    def leave_out(self, key: str) -> None:
        """Leave out a root member (the upstream's own ``_truncated``, replaced by the notes)."""
        root = self.tree.value
        if key in root:
            self._omit(root, key, json_size({key: root[key]}) - 2, "")

    # ------------------------------------------------------------------ step 1

    def _dead(self, index: int) -> bool:
        at = bisect_right(self._dead_starts, index) - 1
        return at >= 0 and index < self._dead_ends[at]

    def _cut_arrays_and_strings(self, target: int) -> None:
        heap = self.tree.heap
        while self.total > target and heap:
            neg, index, container, key, frame, length = heapq.heappop(heap)
            if self._dead(index):
                continue  # inside items an earlier cut dropped
            size = -neg
            value = container[key]
            excess = self.total - target
            if type(value) is list:
                sizes, starts, end = self.tree.arrays[index]
                # the fewest last items whose bytes and commas cover the excess, keeping the first
                tail = list(accumulate(size + 1 for size in reversed(sizes[1 : len(value)])))
                dropped = min(bisect_left(tail, excess) + 1, len(tail))
                kept, removed = len(value) - dropped, tail[dropped - 1] if dropped else 0
                del value[kept:]
                if starts is not None and starts[kept] < end:
                    at = bisect_left(self._dead_starts, starts[kept])
                    self._dead_starts.insert(at, starts[kept])
                    self._dead_ends.insert(at, end)
                self.cuts.append(Cap("array", frame, key, index, kept, length))
            else:
                text, removed = _cut_to_remove(value, size, excess)
                container[key] = text
                kept = len(text)
                self.cuts.append(Cap("string", frame, key, index, kept, length))
                kept = kept if kept > MIN_STRING else 1
            self.total -= removed
            self._deltas.append((index, removed))
            if kept > 1:  # cut just enough: a smaller target later may cut it again
                heapq.heappush(heap, (removed - size, index, container, key, frame, length))

    # ------------------------------------------------------------------ step 2

    def _leave_out_members(self, target: int) -> None:
        if self._reachable is None:
            self._reachable = _Reachable(self, target)
        found = self._reachable
        while self.total > target and self._next_member < len(found.sizes):
            first = self._next_member
            # the fewest next members whose bytes and commas cover the excess (a search, not a loop)
            last = bisect_left(found.reach, found.reach[first] + self.total - target, lo=first)
            last = min(max(last, first + 1), len(found.sizes))
            self._next_member = last
            owners = found.owners[first:last]
            if owners[0] == owners[-1] and len(set(owners)) == 1:  # the usual case: one big object
                self._omit_many(found, owners[0], found.keys[first:last], found.sizes[first:last])
                continue
            by_owner: dict[int, list[int]] = {}
            for at in range(first, last):
                by_owner.setdefault(found.owners[at], []).append(at)
            for owner, picked in by_owner.items():
                self._omit_many(found, owner, [found.keys[i] for i in picked], [found.sizes[i] for i in picked])

    def _omit_many(self, found: _Reachable, owner: int, keys: list[str], sizes: list[int]) -> None:
        container, pattern = found.objects[owner], found.patterns[owner]
        if len(keys) * 2 > len(container):  # most of a big object goes: rebuild it
            gone = set(keys)
            kept = [(k, v) for k, v in container.items() if k not in gone]
            container.clear()
            container.update(kept)
        else:
            for key in keys:
                del container[key]
        size = sum(sizes)
        self.total -= size + len(keys) - (0 if container else 1)  # commas, none after the last
        self._note_omitted(pattern, len(keys), size, list(zip(keys[:3], sizes[:3], strict=True)))

    def _note_omitted(self, pattern: str, count: int, size: int, dropped: list[tuple[str, int]]) -> None:
        note = self.omitted.setdefault(pattern, Omitted())
        note.count += count
        note.size += size
        note.keys.extend(dropped[: max(3 - len(note.keys), 0)])

    # ------------------------------------------------------------------ step 3

    def _leave_out_kept(self, target: int) -> None:
        root = self.tree.value
        for key in sorted(root, key=lambda k: -json_size({k: root[k]})):
            if self.total <= target:
                return
            self._omit(root, key, json_size({key: root[key]}) - 2, "")

    def _omit(self, container: dict[str, Any], key: str, size: int, pattern: str) -> None:
        del container[key]
        self.total -= size + (1 if container else 0)  # its comma went with it
        self._note_omitted(pattern, 1, size, [(key, size)])


class _Reachable:
    """The members step 2 may leave out, largest first: those of the root and of the objects
    reached from it through kept members, array items and members too big to be left out whole
    (an object larger than the whole budget loses its own largest members instead). Parallel
    lists, so that a batch of omissions is a few slices."""

    def __init__(self, fitter: Fitter, target: int) -> None:
        tree = fitter.tree
        deltas = sorted(fitter._deltas)
        places = [index for index, _ in deltas]
        removed = [0, *accumulate(size for _, size in deltas)]
        self.objects: list[dict[str, Any]] = []
        self.patterns: list[str] = []
        sizes: list[int] = []
        owners: list[int] = []
        keys: list[str] = []
        todo: list[tuple[Any, str, bool]] = [(tree.value, "", True)]
        while todo:
            value, pattern, at_root = todo.pop()
            if isinstance(value, list):
                todo.extend((item, child_pattern(pattern, 0), False) for item in value)
                continue
            if not isinstance(value, dict) or not value:
                continue
            owner = len(self.objects)
            self.objects.append(value)
            self.patterns.append(pattern)
            listed = tree.members.get(id(value))
            if listed is None:  # a small object: sized member by member
                for key, size, lo, hi in _list_members(value, tree.spans):
                    if hi > lo:  # less what step 1 cut inside it
                        size -= removed[bisect_left(places, hi)] - removed[bisect_left(places, lo)]
                    member = value[key]
                    if (at_root and key in fitter.keep) or (size > target and _holds_objects(member)):
                        todo.append((member, child_pattern(pattern, key), False))
                    else:
                        sizes.append(size)
                        owners.append(owner)
                        keys.append(key)
                continue
            assert listed.keys is not None
            names, now = listed.keys, list(listed.msizes)
            skip = {i for i, key in enumerate(names) if key not in value} if len(value) != len(names) else set()
            for i, (lo, hi) in listed.extents.items():
                if hi > lo:  # less what step 1 cut inside it
                    now[i] -= removed[bisect_left(places, hi)] - removed[bisect_left(places, lo)]
                member = value.get(names[i])
                if now[i] > target and _holds_objects(member) and i not in skip:
                    skip.add(i)
                    todo.append((member, child_pattern(pattern, names[i]), False))
            if at_root:
                for key in fitter.keep:
                    if key in value:
                        i = names.index(key)
                        if i not in skip:
                            skip.add(i)
                            todo.append((value[key], child_pattern(pattern, key), False))
            if skip:
                names = [key for i, key in enumerate(names) if i not in skip]
                now = [size for i, size in enumerate(now) if i not in skip]
            keys.extend(names)
            sizes.extend(now)
            owners.extend([owner] * len(names))
        order = sorted(range(len(sizes)), key=sizes.__getitem__, reverse=True)
        self.sizes = [sizes[i] for i in order]
        self.owners = [owners[i] for i in order]
        self.keys = [keys[i] for i in order]
        self.reach = [0, *accumulate(size + 1 for size in self.sizes)]


def _holds_objects(value: Any) -> bool:
    """An object, or an array (cut to one item by then) holding one: step 2 can look inside."""
    return isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict | list) for v in value))


def _list_members(value: dict[str, Any], spans: dict[int, tuple[int, int, int]]) -> list[_Member]:
    """The members of an object the walk did not list, sized from the spans of its containers."""
    out: list[_Member] = []
    for key, member in value.items():
        ksize = scalar_size(key) + 1
        span = spans.get(id(member)) if isinstance(member, dict | list) else None
        if span is None:
            out.append((key, ksize + scalar_size(member), 0, 0))
        else:
            out.append((key, ksize + span[0], span[1], span[2]))
    return out


def _cut_to_remove(text: str, size: int, excess: int) -> tuple[str, int]:
    """``text`` cut (to no fewer than ``MIN_STRING`` characters) so that it is ``excess`` bytes
    smaller, or as small as allowed; and the bytes that removed."""
    goal = size - excess
    lo, hi = MIN_STRING, len(text) - 1  # keep between the floor and all but one character
    if hi < lo:
        return text, 0
    best = lo
    while lo <= hi:  # the largest kept length whose encoded size meets the goal
        mid = (lo + hi) // 2
        if scalar_size(cut_string(text, mid)) <= goal:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    cut = cut_string(text, best)
    return cut, size - scalar_size(cut)
