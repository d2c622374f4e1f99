"""A program's final value and printed output as a tool result, bounded first and built off the event loop.

A program may return anything its heap holds, and a model may send the same program again and
again: a 10 MB string, a list of 200,000 objects, ``"%2" * 7_000_000`` (whose escapes redaction
decodes), a list nested 100,000 deep. Its result is made as a tool's is (redacted JSON data,
trimmed to the result budget, sent as structured content and its JSON text), with two changes:

- the value is bounded to what trimming can keep before it is redacted
  (:func:`bridge.secrets.redact_json.bounded_copy`): no C-level search ever runs over more than the
  string cap plus some slack, so no step holds the interpreter long, and containers past the
  result depth that clients parse are emptied, with a note;
- all of it runs in a worker thread (:func:`program_result` is called through
  ``anyio.to_thread``), so other sessions' calls are answered meanwhile.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types

from bridge.results.trim import TrimSettings, trim_result
from bridge.secrets.excerpt import cut_redacted
from bridge.secrets.redact_json import REDACT_SLACK, Bounds, Redact, bounded_copy

__all__ = ["MAX_PRINTED_CHARS", "Printed", "program_result"]

MAX_PRINTED_CHARS = 16 * 1024
"""``print()`` output kept for the answer (trimming's string cap then applies, with a note)."""
_NO_LIMITS = TrimSettings(max_bytes=None, max_items=None, max_string=None, drop_empty=False)


class Printed:
    """``print()`` output, kept up to its budget plus room for redaction to see a secret that
    straddles the cut, and counted beyond it: printing more than the budget is not an error."""

    def __init__(self, budget: int = MAX_PRINTED_CHARS) -> None:
        self._room = budget + REDACT_SLACK
        self._parts: list[str] = []
        self.total = 0  # characters printed, kept or not

    def __call__(self, stream: str, text: str) -> None:
        self.total += len(text)
        if self._room > 0:
            kept = text[: self._room]
            self._parts.append(kept)
            self._room -= len(kept)

    @property
    def output(self) -> str:
        return "".join(self._parts)


def program_result(
    value: Any, printed: Printed | None, redact: Redact, settings: TrimSettings | None
) -> mcp_types.CallToolResult:
    """The tool result of a program that returned ``value`` and printed ``printed``, redacted and
    trimmed (``settings``; None: whole). Call it off the event loop: it walks the value."""
    limits = settings.normalised() if settings is not None else None
    bounds = (
        Bounds(max_string=limits.max_string, max_items=limits.max_items, max_key=limits.max_bytes)
        if limits is not None
        else Bounds()
    )
    data, lengths = bounded_copy(value, redact, bounds)
    payload: dict[str, Any] = {"result": data}
    if printed is not None and printed.total:
        shown = redact(printed.output)  # whole, then cut: a secret across the cut is masked
        if settings is None and len(shown) > MAX_PRINTED_CHARS:  # nothing trims it: cut here
            shown = cut_redacted(
                shown, MAX_PRINTED_CHARS, mark=f"… [cut to {MAX_PRINTED_CHARS:,} of {printed.total:,} characters]"
            )
        elif printed.total > len(printed.output):
            lengths[id(shown)] = printed.total
        payload["printed"] = shown
    trimmed = trim_result(payload, settings or _NO_LIMITS, wrapped=True, lengths=lengths)
    text = trimmed.text or json.dumps(trimmed.value, ensure_ascii=False, separators=(",", ":"))
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], structured_content=trimmed.value
    )
