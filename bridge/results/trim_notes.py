"""The ``_truncated`` notes of a trimmed result: what was cut, how much, how to get more, in bounded bytes.

A note names a path pattern (``items[].body``), never a value; patterns and keys are cut to a few
dozen characters, at most ``MAX_MARKERS`` lines are listed and the rest counted, so the notes of
a result that lost 60,000 members are as short as those of one that lost three. :meth:`Notes.render`
gives the longest form that fits the bytes left in the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bridge.contract.result_shape import MARKER_KEY
from bridge.results.trim_budget import Fitter
from bridge.results.trim_walk import ELLIPSIS, Cap, Tree, child_pattern, json_size

__all__ = ["MARKER_KEY", "MAX_MARKERS", "MINIMAL_NOTE", "Notes"]

MAX_MARKERS = 12
MINIMAL_NOTE = "Cut to fit the byte limit of one answer."
_KEY_CHARS = 40
_MARKER_MEMBER = len(f'"{MARKER_KEY}":')


@dataclass(slots=True)
class _Cut:
    places: set[int]
    kept: int
    total: int


def _short(key: str) -> str:
    return key if len(key) <= _KEY_CHARS else key[:_KEY_CHARS] + ELLIPSIS


class Notes:
    """The notes of one trimmed result, from the walk's caps and the fitter's cuts."""

    def __init__(
        self,
        tree: Tree,
        fitter: Fitter,
        *,
        max_bytes: int | None,
        paging: Sequence[str],
        fields_arg: str | None,
        extra: Sequence[str],
    ) -> None:
        self.tree, self.fitter = tree, fitter
        self.max_bytes, self.paging, self.fields_arg, self.extra = max_bytes, paging, fields_arg, list(extra)
        self._cached: tuple[tuple[int, int], list[str]] | None = None

    def lines(self) -> list[str]:
        """Every note, at most ``MAX_MARKERS`` cut lines (the rest counted) and the hint line."""
        body = self._body()
        if len(body) > MAX_MARKERS:
            body = [*body[: MAX_MARKERS - 1], f"... and {len(body) - MAX_MARKERS + 1} more cuts"]
        return body + self._hints()

    def cost(self, lines: Sequence[str]) -> int:
        """Bytes that adding ``lines`` under ``_truncated`` adds to the result as it is now."""
        if not lines:
            return 0
        comma = 1 if self.tree.value else 0
        return comma + _MARKER_MEMBER + json_size(list(lines))

    def render(self, room: int) -> list[str] | None:
        """The longest form of the notes that costs at most ``room`` bytes (None: not even the shortest)."""
        full = self.lines()
        if self.cost(full) <= room:
            return full
        body, hints = self._body(), self._hints()
        for keep in range(min(len(body), MAX_MARKERS - 1), -1, -1):
            lines = [*body[:keep], f"... and {len(body) - keep} more cuts", *hints]
            if self.cost(lines) <= room:
                return lines
        shortest = [MINIMAL_NOTE]
        return shortest if self.cost(shortest) <= room else None

    def minimal_cost(self) -> int:
        return 1 + _MARKER_MEMBER + json_size([MINIMAL_NOTE])

    def _body(self) -> list[str]:
        fitter = self.fitter
        state = (len(fitter.cuts), sum(o.count for o in fitter.omitted.values()))
        if self._cached is None or self._cached[0] != state:  # every cut is read once per state
            self._cached = (state, self._compose())
        return list(self._cached[1])

    def _compose(self) -> list[str]:
        arrays: dict[str, _Cut] = {}
        strings: dict[str, _Cut] = {}
        deep: dict[str, _Cut] = {}
        for cap in (*self.tree.caps, *self.fitter.cuts):
            _add({"array": arrays, "depth": deep}.get(cap.kind, strings), cap)
        out = list(self.extra)
        for pattern, cut in deep.items():
            count = len(cut.places)
            many = f" ({count} places)" if count > 1 else ""
            out.append(f"{pattern}: emptied, nested deeper than {cut.kept} levels{many}")
        for pattern, cut in arrays.items():
            count = len(cut.places)
            if count > 1:
                out.append(f"{pattern}: {count} lists cut to their first {cut.kept} items (longest had {cut.total})")
            else:
                out.append(f"{pattern}: kept the first {cut.kept} of {cut.total} items")
        for pattern, cut in strings.items():
            count = len(cut.places)
            many = f" ({count} strings)" if count > 1 else ""
            out.append(f"{pattern}: text cut to {cut.kept} of {cut.total} characters{many}")
        single: dict[str, int] = {}  # one line per member when an object lost a few
        for pattern, omitted in self.fitter.omitted.items():
            if omitted.count <= len(omitted.keys):
                for key, size in omitted.keys:
                    where = child_pattern(pattern, key)
                    single[where] = single.get(where, 0) + size
                continue
            names = ", ".join(_short(key) for key, _ in omitted.keys)
            out.append(
                f"{pattern or '(root)'}: left out {omitted.count} members ({omitted.size} bytes), the largest: {names}"
            )
        out.extend(f"{where}: left out ({size} bytes)" for where, size in single.items())
        return out

    def _hints(self) -> list[str]:
        hints = []
        fitter = self.fitter
        if fitter.over_budget and self.max_bytes:
            hints.append(f"the result was over the {self.max_bytes}-byte limit of one answer")
        if self.paging and any(cap.kind == "array" for cap in (*self.tree.caps, *fitter.cuts)):
            hints.append("page with " + ", ".join(self.paging))
        if self.fields_arg and (fitter.omitted or fitter.over_budget):
            hints.append(f"ask for fewer fields with `{self.fields_arg}`")
        return ["To get more: " + "; ".join(hints) + "."] if hints else []


def _add(cuts: dict[str, _Cut], cap: Cap) -> None:
    pattern = cap.frame.pattern(cap.key) or "(root)"
    cut = cuts.get(pattern)
    if cut is None:
        cuts[pattern] = _Cut({cap.place}, cap.kept, cap.total)
        return
    cut.places.add(cap.place)
    cut.kept = min(cut.kept, cap.kept)
    cut.total = max(cut.total, cap.total)
