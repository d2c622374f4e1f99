"""Smaller tool results that never lie, and the output schema they always satisfy.

At run time (:func:`trim_result`), a JSON result goes through, in order:

1. the operation's configured field selection (``x-mcp-output`` or config), then the call's
   ``fields`` argument: comma-separated dotted paths such as ``items.name,total_count`` (arrays
   are crossed transparently; no expressions). Only keys of the parsed response are looked up;
   nothing else can be named or read;
2. members that are null or empty (``""``, ``[]``, ``{}``) are dropped from objects (never from
   arrays, where positions matter);
3. strings longer than ``max_string`` are cut (ending with "…"), arrays longer than ``max_items``
   keep their first items;
4. while the compact JSON is over ``max_bytes``, the largest array is cut (or the largest string),
   then the largest members are left out (an object larger than the whole budget loses its own
   largest members rather than all of them), until it fits. Sizes are computed once, bottom-up,
   and every cut is decided from them (:mod:`bridge.results.trim_budget`): time is about linear in the
   body, and the result's size is known exactly without encoding it again. An answer with
   nothing to cut skips that walk: :mod:`bridge.results.trim_quick` makes the same copy and its compact
   JSON, which the caller sends as the text block.

Every cut is listed in the root's ``_truncated`` array of strings, with what was cut, how much,
and how to get more (the tool's paging arguments, the ``fields`` argument); the notes are bounded
(:mod:`bridge.results.trim_notes`) and counted in the budget, so the compact UTF-8 JSON of a trimmed
result, notes included, is never longer than ``max_bytes``. An upstream member named
``_truncated`` at the root gives way to the notes (and is listed as left out). The default
budget, 24 KB, keeps one result well under the 64 KB line limit of stdio clients even though the
result travels twice (``structuredContent`` and its JSON text copy).

The advertised output schema, the shape trimmed results always have, is made at generation time
by :func:`advertised_schema` (:mod:`bridge.contract.trim_schema`); field paths are parsed by
:mod:`bridge.contract.trim_fields`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bridge.contract.result_shape import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_STRING,
    DEFAULT_OUTPUT_DEPTH,
    MARKER_KEY,
    page_args,
)
from bridge.contract.trim_fields import WRAP_KEY, Trie, iter_paths, parse_fields, project, split_fields
from bridge.contract.trim_schema import MARKER_SCHEMA, SHORT_FORMATS, advertised_schema, project_schema
from bridge.results.trim_budget import Fitter
from bridge.results.trim_notes import MAX_MARKERS, Notes
from bridge.results.trim_walk import ELLIPSIS, MIN_STRING, measure, no_cyclic_gc

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_STRING",
    "DEFAULT_OUTPUT_DEPTH",
    "ELLIPSIS",
    "MARKER_KEY",
    "MARKER_SCHEMA",
    "MAX_MARKERS",
    "MIN_STRING",
    "OFF_LOOP_BYTES",
    "SHORT_FORMATS",
    "WRAP_KEY",
    "Trie",
    "TrimSettings",
    "Trimmed",
    "advertised_schema",
    "iter_paths",
    "page_args",
    "parse_fields",
    "project",
    "project_schema",
    "split_fields",
    "trim_result",
]

MIN_BYTES = 1024
OFF_LOOP_BYTES = 32 * 1024
"""Bodies longer than this are turned into results in a worker thread: parsing, redacting and
trimming take about 1.5 ms per 32 KiB (bench/TRIM.md), and a 1 MiB body tens of ms, too long to
hold the event loop; below it, the thread hop would cost more than it saves."""
_MARKER_RESERVE = 600
_NAME_CHARS = 40

INSTRUCTIONS = (
    "Results leave out null and empty fields. A long result is cut to fit one answer; its "
    f"`{MARKER_KEY}` list says what was cut and how to get more."
)
FIELDS_INSTRUCTIONS = (
    "Tools with a `fields` argument return only those comma-separated dotted paths of their result "
    '(e.g. "items.name,total_count"; lists are crossed).'
)


@dataclass(frozen=True, slots=True)
class TrimSettings:
    """How much of a result the model gets; ``None`` or 0 turns a limit off."""

    max_bytes: int | None = DEFAULT_MAX_BYTES
    max_items: int | None = DEFAULT_MAX_ITEMS
    max_string: int | None = DEFAULT_MAX_STRING
    drop_empty: bool = True

    def merged(self, overrides: Mapping[str, Any] | None) -> TrimSettings:
        """These settings with a tool's own limits (``max_bytes``/``max_items``/``max_string``)."""
        if not overrides:
            return self
        changes = {k: v for k, v in overrides.items() if k in ("max_bytes", "max_items", "max_string") and v}
        return replace(self, **changes) if changes else self

    def normalised(self) -> TrimSettings:
        """Limits below the floors that keep results valid raised to those floors."""
        return replace(
            self,
            max_bytes=max(self.max_bytes, MIN_BYTES) if self.max_bytes else None,
            max_items=max(self.max_items, 1) if self.max_items else None,
            max_string=max(self.max_string, MIN_STRING) if self.max_string else None,
        )


@dataclass(slots=True)
class Trimmed:
    value: Any
    notes: list[str] = field(default_factory=list)
    text: str | None = None  # the compact JSON of ``value`` when trimming made it (it fits as it is)

    @property
    def cut(self) -> bool:
        return bool(self.notes)


# ------------------------------------------------------------------------------------ trimming


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def trim_result(
    value: Mapping[str, Any],
    settings: TrimSettings,
    *,
    wrapped: bool = False,
    paging: Sequence[str] = (),
    fields_arg: str | None = None,
    selected: Sequence[str] = (),
    fields: Sequence[str] | None = None,
    lengths: Mapping[int, int] | None = None,
) -> Trimmed:
    """Steps 1-4 of the module docstring for one JSON object; the notes say what was cut.

    ``selected`` is the operation's configured field selection, ``fields`` the call's;
    ``lengths`` the original length of strings and arrays cut before (by ``id``). The
    returned object carries the notes under ``_truncated`` when anything was cut, and its
    compact UTF-8 JSON, notes included, is never longer than ``settings.max_bytes``. Time is
    about linear in the size of ``value`` (see :mod:`bridge.results.trim_budget`).
    """
    settings = settings.normalised()
    keep = frozenset({WRAP_KEY}) if wrapped else frozenset()
    data: dict[str, Any] = dict(value)
    extra: list[str] = []
    for paths, what in ((selected, None), (fields, fields_arg or "fields")):
        if not paths:
            continue
        trie, rejected = parse_fields(paths, wrapped=wrapped)
        if rejected and what:
            extra.append(f"{what}: not dotted paths, ignored: " + ", ".join(repr(r) for r in rejected[:5]))
        if trie or what:  # the call's fields, even all unusable, select; a config selection is never empty
            projected = project(data, trie)
            # An answer with nothing in it matches nothing by itself: no hint to give then.
            if what and not _has_content(projected, wrapped) and _has_content(data, wrapped):
                names = ", ".join(name[:_NAME_CHARS] for name in _field_names(data, wrapped)[:30])
                extra.append(f"{what}: nothing matched; the result has these fields: {names}")
            data = projected
    with no_cyclic_gc():
        if not extra and not lengths:  # nothing to say yet: an answer that needs no cut needs none of the walk's sizes
            # Imported at the first result, not at start-up: the tools/list peak of a big API stays as it was.
            from bridge.results.trim_quick import uncut_copy

            quick = uncut_copy(
                data,
                max_items=settings.max_items,
                max_string=settings.max_string,
                max_bytes=settings.max_bytes,
                drop_empty=settings.drop_empty,
                keep=keep,
            )
            if quick is not None:
                return Trimmed(quick[0], [], quick[1])
        return _trim(data, settings, keep, extra, paging, fields_arg, lengths)


def _trim(
    data: dict[str, Any],
    settings: TrimSettings,
    keep: frozenset[str],
    extra: list[str],
    paging: Sequence[str],
    fields_arg: str | None,
    lengths: Mapping[int, int] | None = None,
) -> Trimmed:
    """Steps 2-4: caps, then the budget, then the notes in the bytes left."""
    tree = measure(
        data,
        max_items=settings.max_items,
        max_string=settings.max_string,
        drop_empty=settings.drop_empty,
        keep=keep,
        max_bytes=settings.max_bytes,
        lengths=lengths,
    )
    fitter = Fitter(tree, keep)
    notes = Notes(tree, fitter, max_bytes=settings.max_bytes, paging=paging, fields_arg=fields_arg, extra=extra)
    lines = notes.lines()
    budget = settings.max_bytes
    if budget and (lines or fitter.total > budget):
        fitter.leave_out(MARKER_KEY)  # the upstream's own member of that name makes room for the notes
        lines = notes.lines()
        if fitter.total + notes.cost(lines) > budget:
            fitter.fit(max(budget - max(_MARKER_RESERVE, notes.cost(lines)), MIN_BYTES // 2))
        rendered = notes.render(budget - fitter.total)
        if rendered is None:  # not even the shortest note fits: cut the content further
            fitter.fit(budget - notes.minimal_cost())
            rendered = notes.render(budget - fitter.total)
        assert rendered is not None  # the fitter can always get down to {}
        lines = rendered
    trimmed = tree.value
    if lines:
        trimmed[MARKER_KEY] = lines
    return Trimmed(trimmed, lines)


def _has_content(value: Mapping[str, Any], wrapped: bool) -> bool:
    if wrapped:
        inner = value.get(WRAP_KEY)
        if isinstance(inner, list):
            return any(not _is_empty(item) for item in inner)
        return not _is_empty(inner)
    return bool(value)


def _field_names(value: Mapping[str, Any], wrapped: bool) -> list[str]:
    if wrapped:
        inner = value.get(WRAP_KEY)
        first = inner[0] if isinstance(inner, list) and inner else inner
        return [str(k) for k in first] if isinstance(first, dict) else [WRAP_KEY]
    return [str(k) for k in value]
