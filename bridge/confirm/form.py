"""The one confirmation form: the operation, its method and path template, a bounded summary of the arguments.

Shown: the operation's title (spec text, made plain), the HTTP method, the *template* path
(``/pets/{petId}``: a filled path could hold a bound value), and each argument the model gave as
compact JSON, cut to a few lines. Never shown: credentials (they are not arguments, and the whole
message is redacted anyway) and bound values (never arguments). The answer is one boolean: it is
read as yes or no, never as arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from bridge.contract.catalogue import ToolEntry
from bridge.contract.plain_text import plain_text

__all__ = ["CONFIRM_FIELD", "MAX_ARGUMENTS", "MAX_MESSAGE", "MAX_VALUE", "REQUESTED_SCHEMA", "approved", "message"]

CONFIRM_FIELD = "confirm"
MAX_ARGUMENTS = 12
MAX_VALUE = 160
MAX_MESSAGE = 2000
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


def message(entry: ToolEntry, arguments: Mapping[str, Any], *, api: str, redact: Callable[[str], str]) -> str:
    """The form's text for one call of ``entry`` with ``arguments`` (validated)."""
    binding = entry.binding
    title = plain_text(entry.title or entry.name, 100)
    kind = "delete or overwrite data" if entry.annotations.destructiveHint else "change data"
    lines = [
        f"The assistant wants to call {title} ({binding.method} {plain_text(binding.path, 200)}) "
        f"of the {plain_text(api, 80)} API. It may {kind}.",
    ]
    shown = [(name, value) for name, value in arguments.items() if name != binding.fields_arg]
    if shown:
        lines.append("Arguments:")
        for name, value in shown[:MAX_ARGUMENTS]:
            lines.append(f"- {_bounded(name, 64)}: {_bounded(_json(value), MAX_VALUE)}")
        if len(shown) > MAX_ARGUMENTS:
            lines.append(f"- ... and {len(shown) - MAX_ARGUMENTS} more")
    else:
        lines.append("No arguments.")
    lines.append("Send this request?")
    return _bounded(redact("\n".join(lines)), MAX_MESSAGE)


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


def _bounded(text: str, limit: int) -> str:
    text = "".join(c if c.isprintable() or c == "\n" else " " for c in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
