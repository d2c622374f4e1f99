"""One workflow's steps resolved against the package: arguments, body, credentials, criteria, actions.

Every Arazzo parameter of an operation step must be one of the operation's parameters (matched by
name and ``in``; header names case-insensitively), and becomes the tool argument that feeds it,
so the step's call is validated and sent exactly as a tool call would be. A header, query or
cookie parameter that is the operation's credential slot (``Authorization`` for HTTP, OAuth2 and
OpenID Connect schemes, an API key's name) supplies that credential instead (Arazzo's
"log in, then call" workflows pass a session token that way). Parameters of a step that runs a
workflow are that workflow's inputs. Workflow-level parameters and actions apply to every step
unless the step overrides them (same name and ``in``; same action name), and reusable objects
(``$components...``) are resolved here, so the catalogue holds plain values.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bridge.contract.catalogue import (
    PayloadReplacement,
    StepBody,
    StepInput,
    WorkflowAction,
    WorkflowCriterion,
)
from bridge.contract.expressions import json_pointer as pointer
from bridge.contract.expressions.arazzo import ExpressionError, is_expression, parse_expression, parse_template
from bridge.contract.expressions.conditions import ConditionError, parse_condition
from bridge.contract.expressions.json_path import QueryError, compile_query
from bridge.contract.expressions.patterns import compiled_pattern
from bridge.contract.wire_rules import credential_name
from generator.parse.ir import Operation
from generator.workflows.document import ArazzoDocument
from generator.workflows.sources import component

__all__ = ["Problems", "actions", "body", "criteria", "parameters", "value_expressions"]

MAX_VALUE_NODES = 10_000  # nodes of one parameter value or payload
_CREDENTIAL_TYPES = ("http", "oauth2", "openIdConnect")

# A workflow input never feeds a credential: the model fills the inputs (SECURITY.md P11).
_CREDENTIAL_HINT = "; it carries a credential, which is never a model's argument: bind it with `bind:` in --config"


@dataclass(slots=True)
class Problems:
    """Problems of one workflow, by pointer: ``errors`` stop it, ``notes`` are warnings only."""

    doc: ArazzoDocument
    errors: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)

    def error(self, where: str, message: str) -> None:
        self.errors.append((where, message))

    def note(self, where: str, message: str) -> None:
        self.notes.append((where, message))


def value_expressions(value: Any, where: str, problems: Problems, check: Callable[[Any, str], None]) -> None:
    """Parse every runtime expression in ``value`` (whole strings and ``{$...}`` in strings); each is
    passed to ``check`` with its pointer. Bounded: a huge value is refused."""
    stack: list[tuple[Any, str]] = [(value, where)]
    seen = 0
    while stack:
        node, at = stack.pop()
        seen += 1
        if seen > MAX_VALUE_NODES:
            problems.error(where, f"the value has more than {MAX_VALUE_NODES:,} nodes")
            return
        if isinstance(node, dict):
            stack.extend((v, f"{at}/{pointer.escape(str(k))}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{at}/{i}") for i, v in enumerate(node))
        elif isinstance(node, str):
            try:
                if is_expression(node):
                    check(parse_expression(node), at)
                else:
                    for expression in parse_template(node).expressions:
                        check(expression, at)
            except ExpressionError as exc:
                problems.error(at, str(exc))


def _reusable(item: dict[str, Any], kind: str, doc: ArazzoDocument, where: str, problems: Problems) -> Any:
    """A reusable object's target (its ``value`` applied for parameters), else None (reported)."""
    try:
        expression = parse_expression(str(item.get("reference")))
    except ExpressionError as exc:
        problems.error(f"{where}/reference", str(exc))
        return None
    if expression.root != "components" or expression.parts[0] != kind:
        problems.error(f"{where}/reference", f"a reference here is $components.{kind}.<name>")
        return None
    found = component(doc, kind, expression.parts[1])
    if not isinstance(found, dict):
        problems.error(f"{where}/reference", f"no components.{kind}.{expression.parts[1]} in {doc.name}")
        return None
    if kind == "parameters" and "value" in item:
        return {**found, "value": item["value"]}
    return found


def _key(param: dict[str, Any]) -> tuple[str, str]:
    where = str(param.get("in", ""))
    name = str(param.get("name", ""))
    return (name.lower() if where == "header" else name), where


def merged_parameters(
    workflow_params: list[Any], step_params: list[Any], doc: ArazzoDocument, wpath: str, spath: str, problems: Problems
) -> list[tuple[dict[str, Any], str]]:
    """Workflow-level parameters overridden by the step's (same name and ``in``), resolved."""
    out: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
    for items, base in ((workflow_params, f"{wpath}/parameters"), (step_params, f"{spath}/parameters")):
        for index, item in enumerate(items):
            at = f"{base}/{index}"
            param = _reusable(item, "parameters", doc, at, problems) if "reference" in item else item
            if isinstance(param, dict):
                out[_key(param)] = (param, at)
    return list(out.values())


def _credential(op: Operation, name: str, where: str, schemes: dict[str, Any]) -> str | None:
    """The security scheme whose credential slot parameter ``name`` in ``where`` is, if any."""
    for alternative in op.security:
        for use in alternative:
            scheme = schemes.get(use.scheme)
            if scheme is None:
                continue
            if scheme.type == "apiKey" and scheme.location == where and scheme.param_name == name:
                return use.scheme
            if scheme.type in _CREDENTIAL_TYPES and where == "header" and name.lower() == "authorization":
                return use.scheme
    return None


def parameters(
    params: list[tuple[dict[str, Any], str]],
    op: Operation | None,
    schemes: dict[str, Any],
    inputs: dict[str, Any] | None,
    problems: Problems,
) -> tuple[StepInput, ...]:
    """The step's inputs: operation arguments and credentials (``op``), or workflow inputs."""
    out: list[StepInput] = []
    for param, at in params:
        name, where, value = str(param.get("name")), param.get("in"), param.get("value")
        if op is None:  # a workflow step: every parameter is one of its inputs
            properties = (inputs or {}).get("properties")
            if isinstance(properties, dict) and name not in properties:
                problems.error(
                    f"{at}/name", f"the workflow has no input '{name}' (its inputs: {', '.join(properties)})"
                )
                continue
            out.append(StepInput(name=name, value=value, kind="input"))
            continue
        found = [
            p
            for p in op.params
            if p.location == where
            and (p.wire_name.lower() == name.lower() if where == "header" else p.wire_name == name)
        ]
        if found:
            if found[0].bound is not None:
                problems.note(at, f"'{name}' is bound by the config; the workflow's value is not sent")
                continue
            out.append(StepInput(name=found[0].arg_name, value=value))
            continue
        scheme = _credential(op, name, str(where), schemes) if where in ("header", "query", "cookie") else None
        if scheme is not None:
            out.append(StepInput(name=scheme, value=value, kind="credential"))
            continue
        same = sorted(p.wire_name for p in op.params if p.location == where)
        listed = f" (its {where} parameters: {', '.join(same)})" if same else ""
        hint = _CREDENTIAL_HINT if credential_name(str(where), name) is not None else ""
        problems.error(f"{at}/name", f"{op.label} has no {where} parameter '{name}'{listed}{hint}")
    return tuple(out)


def body(spec: dict[str, Any], op: Operation | None, at: str, problems: Problems) -> StepBody | None:
    """The step's request body, a JSON text payload parsed, checked against the operation's body."""
    if op is None:
        problems.error(at, "a step that runs a workflow takes parameters, not a request body")
        return None
    if op.body is None:
        problems.error(at, f"{op.label} takes no request body")
        return None
    payload = spec.get("payload")
    content_type = spec.get("contentType")
    if isinstance(content_type, str) and content_type.split(";")[0].strip().lower() != op.body.media_type.lower():
        problems.note(f"{at}/contentType", f"{op.label} is sent as {op.body.media_type}, the body this package knows")
    is_json = "json" in op.body.media_type.lower()
    if isinstance(payload, str) and is_json and not is_expression(payload):
        try:
            payload = json.loads(payload)  # a JSON text with "{$...}" strings: the structure they sit in
        except ValueError:
            problems.error(f"{at}/payload", f"the payload is text that is not JSON, and {op.label} takes JSON")
            return None
    if isinstance(payload, dict) and op.body.arg is None:
        wires = {f.wire for f in op.body.fields}
        unknown = sorted(k for k in payload if k not in wires)
        if unknown:
            hint = _CREDENTIAL_HINT if any(credential_name("body", k) is not None for k in unknown[:5]) else ""
            problems.error(
                f"{at}/payload", f"{op.label}'s body has no member {', '.join(map(repr, unknown[:5]))}{hint}"
            )
    replacements = []
    for index, item in enumerate(spec.get("replacements") or ()):
        target = str(item.get("target"))
        try:
            pointer.split(target)
        except pointer.PointerError:
            problems.error(f"{at}/replacements/{index}/target", f"{target[:80]!r} is not a JSON pointer")
            continue
        replacements.append(PayloadReplacement(target=target, value=item.get("value")))
    return StepBody(payload=payload, content_type=op.body.media_type, replacements=tuple(replacements))


def criteria(items: list[Any], at: str, problems: Problems) -> tuple[WorkflowCriterion, ...]:
    out = []
    for index, item in enumerate(items):
        where = f"{at}/{index}"
        kind = item.get("type", "simple")
        if isinstance(kind, dict):  # a Criterion Expression Type Object: its own version of JSONPath/XPath
            kind = kind.get("type")
        condition, context = str(item.get("condition")), item.get("context")
        if context is not None:
            try:
                parse_expression(str(context))
            except ExpressionError as exc:
                problems.error(f"{where}/context", str(exc))
        try:
            if kind == "simple":
                parse_condition(condition)
            elif kind in ("regex", "jsonpath"):
                text = parse_template(condition)  # Arazzo 1.1 embeds {$...} expressions in these
                if not text.expressions:
                    if kind == "regex" and compiled_pattern(condition).engine == "none":
                        problems.error(f"{where}/condition", f"{condition[:80]!r} is not a regular expression")
                    elif kind == "jsonpath":
                        compile_query(condition)
            else:
                problems.error(f"{where}/type", f"{kind} criteria are not supported (the bridge speaks JSON)")
                continue
        except (ConditionError, ExpressionError, QueryError) as exc:
            problems.error(f"{where}/condition", str(exc))
            continue
        out.append(WorkflowCriterion(condition=condition, context=context, type=kind))
    return tuple(out)


def actions(
    workflow_items: list[Any],
    step_items: list[Any],
    kind: str,
    doc: ArazzoDocument,
    wpath: str,
    spath: str,
    resolve_workflow: Callable[[str], str | None],
    step_ids: set[str],
    problems: Problems,
) -> tuple[WorkflowAction, ...]:
    """``onSuccess``/``onFailure`` (``kind`` successActions/failureActions): the step's actions first,
    then the workflow's that it does not override by name."""
    step_field = "onSuccess" if kind == "successActions" else "onFailure"
    resolved: dict[str, WorkflowAction] = {}
    for items, base in ((step_items, f"{spath}/{step_field}"), (workflow_items, f"{wpath}/{kind}")):
        for index, item in enumerate(items):
            at = f"{base}/{index}"
            action = _reusable(item, kind, doc, at, problems) if "reference" in item else item
            if not isinstance(action, dict) or str(action.get("name")) in resolved:
                continue
            workflow = None
            if action.get("workflowId") is not None:
                workflow = resolve_workflow(str(action["workflowId"]))
                if workflow is None:
                    problems.error(f"{at}/workflowId", f"no workflow {str(action['workflowId'])[:100]!r} to go to")
                    continue
            step = action.get("stepId")
            if step is not None and step not in step_ids:
                problems.error(f"{at}/stepId", f"no step '{str(step)[:100]}' in this workflow")
                continue
            resolved[str(action["name"])] = WorkflowAction(
                name=str(action["name"]),
                type=action["type"],
                step=step,
                workflow=workflow,
                retry_after=action.get("retryAfter"),
                retry_limit=action.get("retryLimit"),
                criteria=criteria(action.get("criteria") or [], f"{at}/criteria", problems),
            )
    return tuple(resolved.values())
