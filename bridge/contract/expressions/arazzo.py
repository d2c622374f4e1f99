"""Arazzo runtime expressions (``$inputs.x``, ``$steps.s.outputs.y#/0/id``, ``{$statusCode}``): parsing.

Shared by the generator (every expression of a workflow is parsed, and its references checked,
before the package is written) and the runtime (which evaluates them: bridge/workflows/context.py).
It imports nothing else of the bridge: it is part of the contract (tests/test_layering.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "MAX_EXPRESSION_CHARS",
    "Expression",
    "ExpressionError",
    "Template",
    "is_expression",
    "parse_expression",
    "parse_template",
]

MAX_EXPRESSION_CHARS = 2048
"""Longest runtime expression (or template string holding expressions) accepted."""
MAX_TEMPLATE_PARTS = 256

Root = Literal[
    "url",
    "method",
    "statusCode",
    "request",
    "response",
    "inputs",
    "outputs",
    "steps",
    "workflows",
    "sourceDescriptions",
    "components",
]
_BARE = ("url", "method", "statusCode")
_ROOTS = re.compile(
    r"\$(url|method|statusCode|request|response|inputs|outputs|steps|workflows|sourceDescriptions|components)(?![A-Za-z0-9_])"
)
_ID = r"[A-Za-z0-9_\-]+"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an HTTP header name (RFC 9110 token)
_SOURCES = ("header", "query", "path", "body")


class ExpressionError(ValueError):
    """Not a runtime expression Arazzo defines; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Expression:
    """One parsed runtime expression.

    ``parts`` by root: ``request``/``response``: (source, name) with source header, query, path
    or body (name "" for the body); ``inputs``/``outputs``: (name,); ``steps``: (step id,
    "outputs", name); ``workflows``: (workflow id, "inputs" or "outputs", name);
    ``sourceDescriptions``: (source name, member); ``components``: (kind, name). ``pointer`` is
    the JSON pointer after ``#`` (None when there is none).
    """

    text: str
    root: Root
    parts: tuple[str, ...] = ()
    pointer: str | None = None


@dataclass(frozen=True, slots=True)
class Template:
    """A string with expressions embedded as ``{$...}``: literal text and expressions in turn."""

    parts: tuple[str | Expression, ...]

    @property
    def single(self) -> Expression | None:
        """The expression when the string is exactly one ``{$...}`` (its value keeps its type)."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Expression):
            return self.parts[0]
        return None

    @property
    def expressions(self) -> tuple[Expression, ...]:
        return tuple(p for p in self.parts if isinstance(p, Expression))


def is_expression(value: Any) -> bool:
    """Whether ``value`` is meant as a runtime expression: a string starting with a known root."""
    return isinstance(value, str) and _ROOTS.match(value) is not None


def _split_pointer(rest: str) -> tuple[str, str | None]:
    name, sep, pointer = rest.partition("#")
    if not sep:
        return name, None
    if pointer and not pointer.startswith("/"):
        raise ExpressionError(f"a JSON pointer after '#' starts with '/' (got {pointer[:40]!r})")
    return name, pointer


def _need(name: str, what: str, text: str) -> str:
    if not name:
        raise ExpressionError(f"{text[:80]!r} names no {what}")
    return name


def parse_expression(text: str) -> Expression:
    """The expression ``text`` (the whole string).

    Raises:
        ExpressionError: too long, an unknown root, or a malformed reference.
    """
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    match = _ROOTS.match(text)
    if match is None:
        raise ExpressionError(
            f"{text[:80]!r} is not a runtime expression (they start with $inputs, $steps, $response, $statusCode, ...)"
        )
    root: Root = match.group(1)  # type: ignore[assignment]
    rest = text[match.end() :]
    if root in _BARE:
        if rest:
            raise ExpressionError(f"${root} takes nothing after it (got {rest[:40]!r})")
        return Expression(text, root)
    if not rest.startswith("."):
        raise ExpressionError(f"${root} must be followed by '.' and a name")
    rest = rest[1:]
    if root in ("request", "response"):
        source, _, name = rest.partition(".")
        if source.startswith("body"):
            tail = source[4:] + ("." + name if name else "")
            if tail and not tail.startswith("#"):
                raise ExpressionError(f"${root}.body may only be followed by '#' and a JSON pointer")
            _, pointer = _split_pointer(tail)
            return Expression(text, root, ("body", ""), pointer)
        if source not in _SOURCES:
            raise ExpressionError(f"${root}.{source[:40]} is not a source (header, query, path or body)")
        _need(name, f"{source} name", text)
        if source == "header" and not _TOKEN.fullmatch(name):
            raise ExpressionError(f"{name[:40]!r} is not a header name")
        return Expression(text, root, (source, name))
    if root in ("inputs", "outputs"):
        name, pointer = _split_pointer(rest)
        return Expression(text, root, (_need(name, "name", text),), pointer)
    if root == "steps":
        found = re.fullmatch(rf"({_ID})\.outputs\.([^#]+)(#.*)?", rest, re.DOTALL)
        if found is None:
            raise ExpressionError(f"{text[:80]!r}: a step is referred to as $steps.<stepId>.outputs.<name>")
        _, pointer = _split_pointer(found.group(3) or "")
        return Expression(text, root, (found.group(1), "outputs", found.group(2)), pointer)
    if root == "workflows":
        found = re.fullmatch(rf"({_ID})\.(inputs|outputs)\.([^#]+)(#.*)?", rest, re.DOTALL)
        if found is None:
            raise ExpressionError(
                f"{text[:80]!r}: a workflow is referred to as $workflows.<workflowId>.inputs.<name> or .outputs.<name>"
            )
        _, pointer = _split_pointer(found.group(4) or "")
        return Expression(text, root, (found.group(1), found.group(2), found.group(3)), pointer)
    if root == "sourceDescriptions":
        found = re.fullmatch(rf"({_ID})\.(.+)", rest, re.DOTALL)
        if found is None:
            raise ExpressionError(f"{text[:80]!r}: a source is referred to as $sourceDescriptions.<name>.<member>")
        return Expression(text, root, (found.group(1), found.group(2)))
    found = re.fullmatch(r"(inputs|parameters|successActions|failureActions)\.([a-zA-Z0-9.\-_]+)", rest)
    if found is None:
        raise ExpressionError(
            f"{text[:80]!r}: components are referred to as "
            "$components.<parameters|successActions|failureActions>.<name>"
        )
    return Expression(text, root, (found.group(1), found.group(2)))


def parse_template(text: str) -> Template:
    """``text`` split into literal text and the ``{$...}`` expressions embedded in it.

    A ``{`` that does not open an expression is literal text (JSON in a payload string has many).

    Raises:
        ExpressionError: an embedded expression is malformed, or the string is too long.
    """
    if len(text) > MAX_EXPRESSION_CHARS * 8:
        raise ExpressionError(f"the string is longer than {MAX_EXPRESSION_CHARS * 8} characters")
    parts: list[str | Expression] = []
    literal: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("{$", i):
            end = text.find("}", i)
            if end != -1 and _ROOTS.match(text, i + 1):
                if literal:
                    parts.append("".join(literal))
                    literal = []
                parts.append(parse_expression(text[i + 1 : end]))
                if len(parts) > MAX_TEMPLATE_PARTS:
                    raise ExpressionError(f"the string holds more than {MAX_TEMPLATE_PARTS // 2} expressions")
                i = end + 1
                continue
        literal.append(text[i])
        i += 1
    if literal:
        parts.append("".join(literal))
    return Template(tuple(parts))
