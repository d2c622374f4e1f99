"""Arazzo ``simple`` conditions (``$statusCode == 200 && $response.body#/ok != false``): parse and evaluate.

The grammar is Arazzo 1.0's: literals (``true``, ``false``, ``null``, numbers, ``'strings'`` with
``''`` for a quote), runtime expressions, ``[]`` indexing, ``!``, ``&&``, ``||``, comparisons
(``== != < <= > >=``) and parentheses. Comparisons are loose, as the spec asks: strings compare
case-insensitively, a number and a numeric string compare as numbers, ``true`` and ``'true'``
are equal; anything that cannot be ordered is simply not less or greater. Parsing is bounded
(:data:`MAX_CONDITION_CHARS`, :data:`MAX_DEPTH`) and never recursive beyond that depth.

A contract module: the generator parses every condition at generate time, the runtime evaluates.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge.contract.expressions.arazzo import Expression, ExpressionError, parse_expression

__all__ = ["MAX_CONDITION_CHARS", "Condition", "ConditionError", "parse_condition"]

MAX_CONDITION_CHARS = 4096
MAX_DEPTH = 32

_TOKENS = re.compile(
    r"""\s*(?:
      (?P<op>&&|\|\||==|!=|<=|>=|<|>|!|\(|\)|\[|\])
    | (?P<str>'(?:[^']|'')*')
    | (?P<num>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<word>true|false|null)(?![A-Za-z0-9_$])
    | (?P<expr>\$[^\s()<>=!&|\[\]]+)
    )""",
    re.VERBOSE,
)


class ConditionError(ValueError):
    """The condition cannot be parsed; the message says where."""


Node = tuple[
    Any, ...
]  # ("lit", v) ("expr", Expression) ("not", n) ("and"|"or", a, b) ("cmp", op, a, b) ("index", n, k)
Resolve = Callable[[Expression], Any]


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKENS.match(text, pos)
        if match is None or match.end() == pos:
            raise ConditionError(f"cannot read the condition at character {pos + 1}: {text[pos : pos + 20]!r}")
        pos = match.end()
        kind = match.lastgroup
        value = match.group(kind or "")
        if kind == "str":
            out.append(("lit", value[1:-1].replace("''", "'")))
        elif kind == "num":
            out.append(("lit", float(value) if any(c in value for c in ".eE") else int(value)))
        elif kind == "word":
            out.append(("lit", {"true": True, "false": False, "null": None}[value]))
        elif kind == "expr":
            try:
                out.append(("expr", parse_expression(value)))
            except ExpressionError as exc:
                raise ConditionError(str(exc)) from None
        else:
            out.append(("op", value))
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, Any]]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, op: str) -> bool:
        token = self.peek()
        if token == ("op", op):
            self.i += 1
            return True
        return False

    def expect(self, op: str) -> None:
        if not self.take(op):
            raise ConditionError(f"expected {op!r}")

    def parse(self) -> Node:
        node = self.disjunction(0)
        if self.peek() is not None:
            raise ConditionError(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return node

    def disjunction(self, depth: int) -> Node:
        node = self.conjunction(depth)
        while self.take("||"):
            node = ("or", node, self.conjunction(depth))
        return node

    def conjunction(self, depth: int) -> Node:
        node = self.negation(depth)
        while self.take("&&"):
            node = ("and", node, self.negation(depth))
        return node

    def negation(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise ConditionError(f"the condition nests deeper than {MAX_DEPTH} levels")
        if self.take("!"):
            return ("not", self.negation(depth + 1))
        return self.comparison(depth)

    def comparison(self, depth: int) -> Node:
        left = self.postfix(depth)
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in ("==", "!=", "<", "<=", ">", ">="):
            self.i += 1
            return ("cmp", token[1], left, self.postfix(depth))
        return left

    def postfix(self, depth: int) -> Node:
        node = self.primary(depth)
        while self.take("["):
            key = self.peek()
            if key is None or key[0] != "lit" or not isinstance(key[1], int | str) or isinstance(key[1], bool):
                raise ConditionError("an index is a number or a 'name'")
            self.i += 1
            self.expect("]")
            node = ("index", node, key[1])
        return node

    def primary(self, depth: int) -> Node:
        token = self.peek()
        if token is None:
            raise ConditionError("the condition ends too early")
        if token == ("op", "("):
            self.i += 1
            node = self.disjunction(depth + 1)
            self.expect(")")
            return node
        if token[0] in ("lit", "expr"):
            self.i += 1
            return token
        raise ConditionError(f"unexpected {token[1]!r}")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _loose(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.casefold()
        return {"true": True, "false": False, "null": None}.get(lowered, lowered)
    return value


def _equal(a: Any, b: Any) -> bool:
    na, nb = _number(a), _number(b)
    if na is not None and nb is not None and (not isinstance(a, str) or not isinstance(b, str)):
        return na == nb
    return bool(_loose(a) == _loose(b))


def _order(op: str, a: Any, b: Any) -> bool:
    na, nb = _number(a), _number(b)
    if na is not None and nb is not None:
        x: Any
        y: Any
        x, y = na, nb
    elif isinstance(a, str) and isinstance(b, str):
        x, y = a.casefold(), b.casefold()
    else:
        return False
    return bool({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "", [], {}) or value is True


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed condition; :meth:`holds` evaluates it with ``resolve`` giving expression values."""

    text: str
    tree: Node

    @property
    def expressions(self) -> tuple[Expression, ...]:
        found: list[Expression] = []
        stack = [self.tree]
        while stack:
            node = stack.pop()
            if node[0] == "expr":
                found.append(node[1])
            else:
                stack.extend(part for part in node[1:] if isinstance(part, tuple))
        return tuple(found)

    def holds(self, resolve: Resolve) -> bool:
        return _truthy(self._value(self.tree, resolve))

    def _value(self, node: Node, resolve: Resolve) -> Any:
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "expr":
            return resolve(node[1])
        if kind == "not":
            return not _truthy(self._value(node[1], resolve))
        if kind == "and":
            return _truthy(self._value(node[1], resolve)) and _truthy(self._value(node[2], resolve))
        if kind == "or":
            return _truthy(self._value(node[1], resolve)) or _truthy(self._value(node[2], resolve))
        if kind == "index":
            container, key = self._value(node[1], resolve), node[2]
            if isinstance(container, list) and isinstance(key, int) and -len(container) <= key < len(container):
                return container[key]
            if isinstance(container, dict) and isinstance(key, str):
                return container.get(key)
            return None
        op, a, b = node[1], self._value(node[2], resolve), self._value(node[3], resolve)
        if op == "==":
            return _equal(a, b)
        if op == "!=":
            return not _equal(a, b)
        return _order(op, a, b)


def parse_condition(text: str) -> Condition:
    """The condition ``text``.

    Raises:
        ConditionError: it cannot be parsed, is too long or nests too deeply.
    """
    if len(text) > MAX_CONDITION_CHARS:
        raise ConditionError(f"the condition is longer than {MAX_CONDITION_CHARS} characters")
    tokens = _tokens(text)
    if not tokens:
        raise ConditionError("the condition is empty")
    return Condition(text, _Parser(tokens).parse())
