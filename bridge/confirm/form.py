"""The one confirmation form: the filled request target first, then what selects it and what is written.

What the user sees, in this order, whatever order the model gave the arguments in:

1. the request line as it will be sent (``PUT /v1/users/owner-account?notify=true``): the real
   target, built by the same code as the call, with bound values shown as ``{bound}``
   (credentials are added after the form and never appear);
2. the arguments that select the target (path and query), then those written (the request body's
   fields, or the members of a whole-body object), then the rest (headers, cookies);
3. a plain line for anything left out: values shown in part (head and tail, and how much of the
   middle is hidden) and arguments the form had no room for (by name).

Every text is redacted whole *before* it is cut, so a cut can never leave a credential's head or
tail unrecognised. A call whose target cannot be shown in full is never asked: it is refused
(:class:`TargetNotShown`), since a yes to a target the user could not see is no yes. The answer
is one boolean: it is read as yes or no, never as arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from bridge.confirm.policy import ConfirmationUnavailable
from bridge.contract.catalogue import ToolEntry
from bridge.contract.plain_text import plain_text

__all__ = [
    "CONFIRM_FIELD",
    "MAX_MESSAGE",
    "MAX_TARGET",
    "MAX_VALUE",
    "REQUESTED_SCHEMA",
    "TargetNotShown",
    "approved",
    "message",
]

CONFIRM_FIELD = "confirm"
MAX_TARGET = 1000
MAX_VALUE = 300
_MIN_VALUE = 40
MAX_MESSAGE = 4000
_RESERVE = 400  # room kept for the closing lines
REQUESTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        CONFIRM_FIELD: {
            "type": "boolean",
            "title": "Send this request",
            "description": "Check to let the assistant send this request to the API.",
            "default": False,
        }
    },
    "required": [CONFIRM_FIELD],
}
Redact = Callable[[str], str]


class TargetNotShown(ConfirmationUnavailable):
    """The request's target is too long to show the user in full: the call is refused, not asked."""


def message(entry: ToolEntry, arguments: Mapping[str, Any], target: str, *, api: str, redact: Redact) -> str:
    """The form's text for one call of ``entry`` with ``arguments`` (validated) sent to ``target``.

    Raises:
        TargetNotShown: ``target`` (redacted) is empty or longer than :data:`MAX_TARGET`.
    """
    line = _printable(redact(target))
    if not line or len(line) > MAX_TARGET:
        why = f"is too long ({len(line):,} characters, at most {MAX_TARGET:,})" if line else "could not be built"
        raise TargetNotShown(
            f"{entry.operation} was not sent: the request it would send {why} to show the user in full for "
            "confirmation, and a call whose target the user cannot see is never confirmed. Use shorter path and "
            "query values."
        )
    title = plain_text(entry.title or entry.name, 100)
    kind = "delete or overwrite data" if entry.annotations.destructiveHint else "change data"
    lines = [
        f"The assistant wants to send {line}",
        f"to the {plain_text(api, 80)} API ({title}). It may {kind}.",
    ]
    used = sum(len(text) + 1 for text in lines)
    groups = list(_groups(entry, arguments))
    # Many arguments: each value gets a shorter share rather than the last ones none.
    count = sum(len(items) for _, items in groups) or 1
    share = min(MAX_VALUE, max(_MIN_VALUE, (MAX_MESSAGE - _RESERVE - used) // count - 100))
    left_out: list[str] = []
    cut = 0
    for heading, items in groups:
        shown_heading = False
        for name, value in items:
            name_text = _cut(_printable(redact(name)), 64)[0]
            value_text, hidden = _middle_cut(_printable(redact(_json(value))), share)
            text = f"- {name_text}: {value_text}"
            cost = len(text) + 1 + (0 if shown_heading else len(heading) + 1)
            if left_out or used + cost > MAX_MESSAGE - _RESERVE:
                left_out.append(name_text)
                continue
            if not shown_heading:
                lines.append(heading)
                used += len(heading) + 1
                shown_heading = True
            lines.append(text)
            used += len(text) + 1
            cut += bool(hidden)
    if len(lines) == 2:
        lines.append("No arguments.")
    if cut:
        lines.append(f"NOTE: {cut} value(s) above are shown in part; the request sends them whole.")
    if left_out:
        names = _cut(", ".join(left_out), 200)[0]
        lines.append(f"NOTE: {len(left_out)} more argument(s) are sent but not shown here (no room): {names}.")
    lines.append("Send this request?")
    return redact("\n".join(lines))


def _groups(entry: ToolEntry, arguments: Mapping[str, Any]) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    """The arguments in the form's order: what selects the target, what is written, the rest."""
    binding = entry.binding
    where = {p.arg: p.location for p in binding.params if p.arg}
    body = binding.body
    fields = {f.arg for f in body.fields if f.arg} if body is not None else set()
    whole = body.arg if body is not None else None
    selects = [(n, v) for n, v in arguments.items() if where.get(n) in ("path", "query")]
    written: list[tuple[str, Any]] = [(n, v) for n, v in arguments.items() if n in fields]
    if whole is not None and whole in arguments:
        value = arguments[whole]
        members = value.items() if isinstance(value, Mapping) else ()
        written += [(f"{whole}.{k}", v) for k, v in members] if members else [(whole, value)]
    taken = {n for n, _ in selects} | fields | {whole, binding.fields_arg}
    rest = [(n, v) for n, v in arguments.items() if n not in taken]
    yield "Selects the target:", selects
    yield "Written (the request body):", written
    yield "Also sent:", rest


def approved(answer: Any) -> bool:
    """True only for an accept whose ``confirm`` is exactly true (an ElicitResult or its wire dict)."""
    action = answer.get("action") if isinstance(answer, Mapping) else getattr(answer, "action", None)
    content = answer.get("content") if isinstance(answer, Mapping) else getattr(answer, "content", None)
    return action == "accept" and isinstance(content, Mapping) and content.get(CONFIRM_FIELD) is True


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


def _printable(text: str) -> str:
    # Control and format characters (line breaks, bidi overrides) would let a value fake the form's lines.
    return "".join(c if c.isprintable() else " " for c in text)


def _middle_cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` with its middle left out when longer than ``limit``: the head and the tail stay
    visible (an object's last member too), and the line says how much is not shown."""
    if len(text) <= limit:
        return text, 0
    tail = limit // 3
    head = limit - tail
    hidden = len(text) - head - tail
    return f"{text[:head]}...[{hidden:,} characters not shown]...{text[-tail:]}", hidden


def _cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters, and how many were hidden (call on redacted text only)."""
    return (text, 0) if len(text) <= limit else (text[: limit - 3] + "...", len(text) - (limit - 3))
