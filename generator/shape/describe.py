"""The tool description: the one place it is built from an operation's summary and description.

As converted (``compact`` off) it is the summary, a blank line and the description. Compacted it
is the summary then the description's first paragraph, boilerplate dropped and the summary left
out when the description's first sentence restates it (see :mod:`generator.shape.compact_text`).
Either way ``[Deprecated]`` comes first and :func:`~generator.shape.compact_text.cut` keeps it within
the limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.parse.ir import Operation
from generator.shape.compact_text import compact_text, cut, restates, sentences

DEPRECATED_PREFIX = "[Deprecated] "


@dataclass(frozen=True, slots=True)
class DescriptionRules:
    limit: int
    compact: bool = True
    boilerplate: frozenset[str] = field(default_factory=frozenset)


def tool_description(op: Operation, rules: DescriptionRules) -> str:
    if rules.compact:
        summary = compact_text(op.summary, rules.limit) if op.summary else ""
        description = (
            compact_text(op.description, rules.limit, rules.boilerplate, after_summary=bool(summary))
            if op.description
            else ""
        )
        if summary and description and restates(summary, (sentences(description) or [""])[0]):
            summary = ""
        text = "\n".join(part for part in (summary, description) if part)
    else:
        parts = [part for part in (op.summary, op.description) if part]
        if len(parts) == 2 and parts[0] == parts[1]:
            parts = parts[:1]
        text = "\n\n".join(parts)
    text = text or op.label
    if op.deprecated:
        text = DEPRECATED_PREFIX + text
    return cut(text, rules.limit)
