"""Applying overlays to a parsed spec: each action's RFC 9535 target, then ``remove``, ``update`` or ``copy``.

Actions apply in order, each to the result of the one before (Overlay 1.0; 1.1's ``copy``, and
its replacement of selected primitives, are applied for documents that declare 1.1). ``update`` merges as
Overlay 1.1 spells out what 1.0 leaves implicit: a member only in the update is added; an object
merges into an object recursively; an array is appended to an array (a non-array value is
appended as one item); a primitive replaces. A ``null`` over an object or array leaves it alone
(the spec's own structured example writes ``components:`` as a placeholder) and says so.

A target that matches nothing is a warning (``--strict``: an error); when it would match had
``$ref``s been followed, the warning says so, since JSONPath never follows them. An update that
lands on a ``$ref`` object is a warning too: it goes beside the reference, not into what it
refers to.

Hostile overlays are bounded: a query touches at most :data:`VISITS_PER_NODE` times the
document's nodes (:mod:`bridge.contract.expressions.json_path` counts), within :data:`QUERY_SECONDS`; the nodes added
by one overlay are at most :data:`MAX_ADDED_NODES`; and deep updates are merged without recursion.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from bridge.contract.expressions import json_pointer as pointer
from bridge.contract.expressions.json_path import Location, QueryError, compile_query
from generator.issues import Issue, Level
from generator.load.overlays.document import Overlay
from generator.load.reading import SpecError

__all__ = ["MAX_ADDED_NODES", "QUERY_SECONDS", "VISITS_PER_NODE", "apply_overlays"]

VISITS_PER_NODE = 4  # a descendant segment with a filter takes ~2.6; a query quadratic in the document is cut
MIN_VISITS = 200_000  # small documents get room for any reasonable query
QUERY_SECONDS = 30.0
MAX_ADDED_NODES = 2_000_000  # what one overlay's updates may add, copies for every match included


def _size(value: Any) -> int:
    """Nodes in ``value``, counted without recursion."""
    count, stack = 0, [value]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


class _Run:
    """One overlay applied to one document: the document changes in place."""

    def __init__(self, document: dict[str, Any], overlay: Overlay) -> None:
        self.document = document
        self.overlay = overlay
        self.nodes = _size(document)
        self.added = 0
        self.issues: list[Issue] = []

    def where(self, index: int, field: str = "target") -> str:
        return f"{self.overlay.name}: /actions/{index}/{field}"

    def warn(self, index: int, message: str, field: str = "target") -> None:
        self.issues.append(Issue(Level.WARNING, self.where(index, field), message))

    def select(self, index: int, target: str, *, follow_refs: bool = False) -> list[tuple[Location, Any]]:
        try:
            return compile_query(target).nodes(
                self.document,
                max_visits=max(MIN_VISITS, VISITS_PER_NODE * self.nodes),
                seconds=QUERY_SECONDS,
                follow_refs=follow_refs,
            )
        except QueryError as exc:
            raise SpecError([f"{self.where(index)}: {target[:200]!r}: {exc}"]) from None

    def action(self, index: int, action: dict[str, Any]) -> None:
        target = action["target"]
        found = self.select(index, target)
        if not found:
            self.warn(index, f"{target[:200]!r} matches nothing{self._ref_hint(index, target)}")
            return
        if action.get("remove") is True:
            self.remove(index, found)
        elif "update" in action:
            self.update(index, found, action["update"])
        elif "copy" in action:  # Overlay 1.1: the value comes from the document itself
            source = self.select(index, action["copy"])
            if len(source) != 1:
                raise SpecError(
                    [
                        f"{self.where(index, 'copy')}: {action['copy'][:200]!r} must select one node; "
                        f"it selects {len(source)}"
                    ]
                )
            self.update(index, found, copy.deepcopy(source[0][1]))

    def _ref_hint(self, index: int, target: str) -> str:
        through = self.select(index, target, follow_refs=True)
        if not through:
            return ""
        return (
            f"; it would match {len(through)} node(s) through $ref (e.g. {pointer.join(*through[0][0])}), but "
            "JSONPath does not follow $ref: target the referenced component instead"
        )

    def remove(self, index: int, found: Sequence[tuple[Location, Any]]) -> None:
        # Deepest and last first, so array indexes of the nodes still to remove do not shift.
        for location, _ in sorted(found, key=lambda item: _sort_key(item[0]), reverse=True):
            if not location:
                raise SpecError([f"{self.where(index)}: the target is the whole document, which cannot be removed"])
            parent = _at(self.document, location[:-1])
            key = location[-1]
            if isinstance(parent, dict) and key in parent:
                del parent[key]
            elif isinstance(parent, list) and isinstance(key, int) and key < len(parent):
                del parent[key]

    def update(self, index: int, found: Sequence[tuple[Location, Any]], value: Any) -> None:
        # A YAML alias makes one object appear at several places: it is merged into once.
        targets = list({id(node): (loc, node) for loc, node in reversed(found)}.values())[::-1]
        cost = _size(value) * len(targets)
        if self.added + cost > MAX_ADDED_NODES:
            raise SpecError(
                [
                    f"{self.where(index, 'update')}: the update would add about {cost:,} nodes to the document "
                    f"({len(targets):,} targets); one overlay may add at most {MAX_ADDED_NODES:,}"
                ]
            )
        for location, node in targets:
            at = pointer.join(*location) or "/"
            if isinstance(node, dict):
                if not isinstance(value, dict):
                    self.warn(index, f"{at} is an object: the update must be an object of members to merge", "update")
                    continue
                if "$ref" in node:
                    self.warn(
                        index,
                        f"{at} is a $ref object: the update lands beside the reference, not in "
                        f"{str(node['$ref'])[:200]} (target that instead)",
                        "update",
                    )
                self.added += _merge(node, value, lambda note, at=at: self.warn(index, f"{at}{note}", "update"))
            elif isinstance(node, list):
                items = value if isinstance(value, list) else [value]
                node.extend(copy.deepcopy(items))
                self.added += _size(items)
            elif self.overlay.version >= (1, 1) and not isinstance(value, dict | list):
                parent = _at(self.document, location[:-1]) if location else None
                if isinstance(parent, dict | list):
                    parent[location[-1]] = copy.deepcopy(value)
            else:
                kind = "null" if node is None else type(node).__name__.replace("str", "string")
                self.warn(
                    index,
                    f"{at} is a {kind}: an update applies to objects and arrays; target the object that holds it "
                    "and update its member",
                )
        self.nodes += self.added


def _sort_key(location: Location) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, part) if isinstance(part, int) else (1, part) for part in location)


def _at(document: Any, location: Location) -> Any:
    node = document
    for part in location:
        node = node[part]
    return node


def _merge(target: dict[str, Any], update: dict[str, Any], warn: Any) -> int:
    """Merge ``update`` into ``target`` (copies, never shared); the nodes added. No recursion."""
    added = 0
    stack: list[tuple[dict[str, Any], dict[str, Any], str]] = [(target, update, "")]
    while stack:
        into, source, where = stack.pop()
        for key, value in source.items():
            here = f"{where}/{pointer.escape(str(key))}"
            old = into.get(key)
            if key not in into:
                into[key] = copy.deepcopy(value)
                added += _size(value)
            elif isinstance(old, dict) and isinstance(value, dict):
                stack.append((old, value, here))
            elif isinstance(old, list) and isinstance(value, list):
                old.extend(copy.deepcopy(value))
                added += _size(value)
            elif value is None and isinstance(old, dict | list):
                warn(f"{here}: null over an {'object' if isinstance(old, dict) else 'array'} leaves it as it is")
            else:
                into[key] = copy.deepcopy(value)
                added += _size(value)
    return added


def apply_overlays(document: Any, overlays: Sequence[Overlay]) -> tuple[Any, list[Issue]]:
    """``document`` with every overlay's actions applied in order (changed in place), and warnings.

    Raises:
        SpecError: a target is not an RFC 9535 query, a query is too costly, an update too big, or
            the document is not an object.
    """
    if not overlays:
        return document, []
    if not isinstance(document, dict):
        raise SpecError([f"{overlays[0].name}: the spec is not an object, so no overlay applies to it"])
    issues: list[Issue] = []
    for overlay in overlays:
        run = _Run(document, overlay)
        try:
            for index, action in enumerate(overlay.actions):
                run.action(index, action)
        except RecursionError:
            raise SpecError([f"{overlay.name}: an update is nested too deeply to apply"]) from None
        issues.extend(run.issues)
    return document, issues
