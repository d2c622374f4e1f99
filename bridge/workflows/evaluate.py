"""Evaluating runtime expressions, values and success criteria against what a workflow run has seen.

A :class:`Scope` is what the expressions of one step can see: the workflow's inputs, the outputs
of steps and workflows run so far, and (in a step's outputs, criteria and actions) the step's
own request and response. The response is the one the call core returned: its body and headers
are redacted already, so no expression can carry a secret on to the next step or the model.

An expression whose value is absent (an input not given, a pointer into nothing) evaluates to
:data:`MISSING`: a parameter is then not sent and an object member is left out, so an optional
input stays optional through the steps. Criteria are Arazzo's three JSON forms: ``simple``
(bridge/contract/expressions/conditions.py), ``regex`` (linear-time,
bridge/contract/expressions/patterns.py) and ``jsonpath`` (RFC 9535,
bridge/contract/expressions/json_path.py: a non-empty nodelist passes).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge.contract.catalogue import WorkflowCriterion
from bridge.contract.expressions import json_pointer as pointer
from bridge.contract.expressions.arazzo import Expression, Template, is_expression, parse_expression, parse_template
from bridge.contract.expressions.conditions import Condition, parse_condition
from bridge.contract.expressions.json_path import QueryBudgetError, QueryError, compile_query
from bridge.contract.expressions.patterns import compiled_pattern

__all__ = ["MISSING", "Response", "Scope", "criterion_holds", "resolve_value"]

MAX_TEXT_CHARS = 1_000_000  # a template filled with values: longer is refused
JSONPATH_VISITS = 200_000  # nodes a criterion's query may touch (an upstream answer is bounded already)
JSONPATH_SECONDS = 1.0
"""How long one criterion's query may run (in a worker thread, the runner's): past it the step fails."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class EvaluationError(ValueError):
    """A value cannot be made (a template too long); the message names what."""


@dataclass(frozen=True, slots=True)
class Response:
    """A step's answer as expressions see it (redacted)."""

    status: int | None
    headers: Mapping[str, str]  # lower-cased names
    body: Any
    url: str
    method: str


@dataclass(slots=True)
class Scope:
    inputs: Mapping[str, Any]
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)  # step id -> its outputs
    workflows: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> {"inputs":..., "outputs":...}
    outputs: Mapping[str, Any] | None = None  # a step running a workflow: that workflow's outputs
    response: Response | None = None
    request: Mapping[str, Any] = field(default_factory=dict)  # {"header": {}, "query": {}, "path": {}, "body": x}

    def value(self, expression: Expression) -> Any:
        root, parts = expression.root, expression.parts
        found: Any = MISSING
        if root == "inputs":
            found = _named(self.inputs, parts[0])
        elif root == "steps":
            found = _named(self.steps.get(parts[0], {}), parts[2])
        elif root == "workflows":
            found = _named(self.workflows.get(parts[0], {}).get(parts[1], {}), parts[2])
        elif root == "outputs":
            found = _named(self.outputs or {}, parts[0])
        elif root in ("statusCode", "url", "method", "response"):
            response = self.response
            if response is None:
                return MISSING
            if root != "response":
                found = {"statusCode": response.status, "url": response.url, "method": response.method}[root]
            elif parts[0] == "header":
                found = response.headers.get(parts[1].lower(), MISSING)
            elif parts[0] == "body":
                found = response.body
            else:
                return MISSING
        elif root == "request":
            found = (
                self.request.get("body", MISSING)
                if parts[0] == "body"
                else _named(self.request.get(parts[0], {}), parts[1])
            )
        if found is MISSING or (found is None and expression.pointer):
            return MISSING
        if expression.pointer:
            try:
                return pointer.resolve(found, expression.pointer)
            except pointer.PointerError:
                return MISSING
        return found


def _named(values: Mapping[str, Any], name: str) -> Any:
    """``values[name]``; a dotted name not present walks object members (``customer.uri``)."""
    if name in values:
        return values[name]
    head, *rest = name.split(".")
    node: Any = values.get(head, MISSING)
    for part in rest:
        node = node.get(part, MISSING) if isinstance(node, Mapping) else MISSING
    return node


@functools.lru_cache(maxsize=4096)
def _expression(text: str) -> Expression | Template:
    return parse_expression(text) if is_expression(text) else parse_template(text)


@functools.lru_cache(maxsize=1024)
def _condition(text: str) -> Condition:
    return parse_condition(text)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _filled(template: Template, scope: Scope) -> Any:
    single = template.single
    if single is not None:
        return scope.value(single)  # "{$inputs.customer}": the value itself, of its own type
    out: list[str] = []
    size = 0
    for part in template.parts:
        text = part if isinstance(part, str) else _text(v if (v := scope.value(part)) is not MISSING else "")
        size += len(text)
        if size > MAX_TEXT_CHARS:
            raise EvaluationError(f"a value built from a template is longer than {MAX_TEXT_CHARS:,} characters")
        out.append(text)
    return "".join(out)


def resolve_value(value: Any, scope: Scope) -> Any:
    """``value`` (JSON from the catalogue) with every expression evaluated; MISSING if it is one absent."""
    if isinstance(value, str):
        if "$" not in value:
            return value
        parsed = _expression(value)
        return scope.value(parsed) if isinstance(parsed, Expression) else _filled(parsed, scope)
    if isinstance(value, dict):
        resolved = {k: resolve_value(v, scope) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not MISSING}
    if isinstance(value, list):
        return [v for v in (resolve_value(item, scope) for item in value) if v is not MISSING]
    return value


def _context(criterion: WorkflowCriterion, scope: Scope) -> Any:
    if criterion.context is None:
        return MISSING
    return resolve_value(criterion.context, scope)


def criterion_holds(criterion: WorkflowCriterion, scope: Scope) -> bool:
    """Whether ``criterion`` is met; an absent context, or a query that cannot run, is not met.

    Raises:
        EvaluationError: a JSONPath query ran over its budget (:data:`JSONPATH_VISITS` nodes or
            :data:`JSONPATH_SECONDS`): the answer is unknown, so the step fails with that reason
            rather than take a branch on a guess.
    """
    if criterion.type == "simple":
        return _condition(criterion.condition).holds(lambda e: None if (v := scope.value(e)) is MISSING else v)
    context = _context(criterion, scope)
    if context is MISSING or context is None:
        return False
    condition = criterion.condition
    if "{$" in condition:  # Arazzo 1.1: expressions embedded in the pattern or query
        condition = _text(_filled(parse_template(condition), scope))
    if criterion.type == "regex":
        return compiled_pattern(condition).search(_text(context)) is True
    try:
        query = compile_query(condition)
        # Arazzo's examples write `$[?count(@.pets) > 0]` for "the context has pets": under RFC 9535
        # a root filter tests the root's children, so an object context is tested as itself.
        data = [context] if query.filters_root and isinstance(context, dict) else context
        return bool(query.nodes(data, max_visits=JSONPATH_VISITS, seconds=JSONPATH_SECONDS))
    except QueryBudgetError as exc:
        raise EvaluationError(  # the runner redacts and cuts it: the condition may hold filled-in values
            f"a criterion was stopped: {exc} on this answer; the workflow's author should narrow the query "
            f"(no nested '..'): {condition!r}"
        ) from None
    except QueryError:
        return False
