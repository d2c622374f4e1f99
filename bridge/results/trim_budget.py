"""Fitting a measured result into a byte budget, deciding every cut from the walk's sizes.

:class:`Fitter` never walks or encodes the value again:

1. the largest array (more than one item) or string (longer than ``MIN_STRING``) is cut until
   the excess is gone; sizes are taken in decreasing order from a heap. A node in the heap never
   has a cut below it (anything below it is smaller, so comes out later), so its size is exact;
   items dropped from an array kill the candidates inside them, found by their walk index;
2. if every array is down to one item and every string to the floor, members are left out,
   largest first. Only members that no candidate member contains can ever be the largest, so
   these are the members of the root and of the objects reached from it through kept members
   (the ``result`` wrapper), first array items and members too big to leave out whole; their
   sizes are the walk's sizes minus the cuts of step 1 inside them (a prefix sum over walk
   indices), and a batch of omissions is found by bisection;
3. should that still not fit (a kept wrapper around something that cannot be cut), the kept
   members themselves are left out: nothing is required by the advertised schema.

Every step changes ``total`` by exactly what it removed, so the result's size is known without
encoding it, and the loop ends when it fits. Work: O(n log n) at worst, about linear in practice.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from bridge.results.trim_walk import MIN_STRING, Cap, Tree, child_pattern, cut_string, json_size, scalar_size

__all__ = ["Fitter", "Omitted"]

# A member of an object as step 2 sizes it: (key, size, first and past-last walk index inside)
_Member = tuple[str, int, int, int]


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
        """Leave out a root member (the upstream's own ``_truncated``, replaced by the notes).

        Step 1's candidates inside it die with it: cutting what is no longer sent would take
        bytes off ``total`` that the answer still has (and the member itself is looked up no more).
        """
        root = self.tree.value
        if key not in root:
            return
        member = root[key]
        span = self.tree.spans.get(id(member)) if isinstance(member, dict | list) else None
        if span is not None and span[2] > span[1]:
            at = bisect_left(self._dead_starts, span[1])
            self._dead_starts.insert(at, span[1])
            self._dead_ends.insert(at, span[2])
        self._omit(root, key, json_size({key: member}) - 2, "")

    # ------------------------------------------------------------------ step 1

    def _dead(self, index: int) -> bool:
        at = bisect_right(self._dead_starts, index) - 1
        return at >= 0 and index < self._dead_ends[at]

    def _cut_arrays_and_strings(self, target: int) -> None:
        heap = self.tree.heap
        while self.total > target and heap:
            neg, index, container, key, frame, length = heapq.heappop(heap)
            if self._dead(index) or key not in container:
                continue  # inside items an earlier cut dropped, or a member left out
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
