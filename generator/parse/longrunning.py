"""Which operations are long-running (202 and a status URL), and the cancel operation each links.

An operation is long-running when a 2xx response is ``202`` with a ``Location`` or
``Operation-Location`` header, when it carries ``x-ms-long-running-operation: true``, or when
``x-mcp-async`` (the config's ``async``, which wins) says so; ``false`` turns it off. Its cancel
operation is a link of the 202 response whose name says ``cancel`` (an OpenAPI Link Object:
``operationId`` or a local ``operationRef``, and ``parameters`` as runtime expressions), or
``cancel:`` in ``x-mcp-async``. Links are resolved once every operation has its tool name.

An operation marked ``x-ms-long-running-operation`` follows Azure's rules too
(``LongRunning.final_state_via``): ``x-ms-long-running-operation-options.final-state-via``, else
autorest's default for its method (PUT and PATCH: the original URI; POST: the Location; DELETE:
the status).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.contract.catalogue import LongRunning, OperationLink
from bridge.contract.expressions import json_pointer as jsonpointer
from bridge.contract.expressions.links import check_expression
from generator.parse.context import Context, RawOperation, Skip, deref
from generator.parse.ir import Operation

__all__ = ["detect", "resolve_links"]

STATUS_HEADERS = ("operation-location", "azure-asyncoperation", "location")
_CANCEL_NAME = re.compile(r"cancel|abort|stop", re.IGNORECASE)
_LIST_KEYS = ("status_headers", "running", "succeeded", "failed")
_TEXT_KEYS = ("state", "result")
_KEYS = frozenset({*_LIST_KEYS, *_TEXT_KEYS, "cancel"})
FINAL_STATE_VIA = ("azure-async-operation", "location", "original-uri", "operation-location")
_DEFAULT_FINAL_STATE_VIA = {"PUT": "original-uri", "PATCH": "original-uri", "POST": "location"}


def detect(ctx: Context, raw: RawOperation) -> tuple[LongRunning, Mapping[str, Any] | None] | None:
    """The operation's long-running settings and its unresolved cancel link, or None."""
    declared = raw.overrides.get("async", raw.op.get("x-mcp-async"))
    source = "config async" if "async" in raw.overrides else "x-mcp-async"
    if declared is False:
        return None
    accepted = _accepted_response(ctx, raw)
    marked = declared is not None or raw.op.get("x-ms-long-running-operation") is True
    if accepted is None and not marked:
        return None
    settings: dict[str, Any] = {}
    link: Mapping[str, Any] | None = None
    if isinstance(declared, Mapping):
        settings, link = _declared(ctx, raw, declared, source)
    elif declared not in (None, True):
        ctx.warn(raw.label, f"{source} must be true, false or a mapping; ignored")
    if link is None and accepted is not None:
        link = _cancel_link(ctx, raw, accepted)
    if raw.op.get("x-ms-long-running-operation") is True:
        settings["final_state_via"] = _final_state_via(ctx, raw)
    return LongRunning(**settings), link


def _final_state_via(ctx: Context, raw: RawOperation) -> str:
    options = raw.op.get("x-ms-long-running-operation-options")
    declared = options.get("final-state-via") if isinstance(options, Mapping) else None
    if declared is not None and declared not in FINAL_STATE_VIA:
        ctx.warn(raw.label, f"x-ms-long-running-operation-options: final-state-via {declared!r} is not understood")
        declared = None
    return str(declared or _DEFAULT_FINAL_STATE_VIA.get(raw.method, "azure-async-operation"))


def _accepted_response(ctx: Context, raw: RawOperation) -> Mapping[str, Any] | None:
    """The 202 response when it names a status URL in a header."""
    responses = raw.op.get("responses")
    node = responses.get("202") if isinstance(responses, Mapping) else None
    if node is None:
        return None
    try:
        response = deref(ctx.document, node, "response")
    except Skip:
        return None
    if not isinstance(response, Mapping):
        return None
    headers = response.get("headers")
    if isinstance(headers, Mapping) and any(str(name).lower() in STATUS_HEADERS for name in headers):
        return response
    return None


def _declared(
    ctx: Context, raw: RawOperation, declared: Mapping[str, Any], source: str
) -> tuple[dict[str, Any], Mapping[str, Any] | None]:
    settings: dict[str, Any] = {}
    for key, value in declared.items():
        if key in _LIST_KEYS and isinstance(value, list) and all(isinstance(v, str) and v for v in value):
            settings[key] = tuple(value)
        elif key in _TEXT_KEYS and isinstance(value, str) and value.startswith("/"):
            settings[key] = value
        elif key != "cancel" or not isinstance(value, Mapping):
            problem = "is not understood" if key not in _KEYS else "has the wrong type (pointers start with '/')"
            ctx.warn(raw.label, f"{source}: {key!r} {problem}; ignored")
    cancel = declared.get("cancel")
    return settings, cancel if isinstance(cancel, Mapping) else None


def _cancel_link(ctx: Context, raw: RawOperation, response: Mapping[str, Any]) -> Mapping[str, Any] | None:
    links = response.get("links")
    if not isinstance(links, Mapping):
        return None
    for name, node in links.items():
        if not _CANCEL_NAME.search(str(name)):
            continue
        try:
            link = deref(ctx.document, node, "link")
        except Skip as skip:
            ctx.warn(raw.label, f"cancel link {name!r}: {skip}")
            return None
        return link if isinstance(link, Mapping) else None
    return None


def resolve_links(
    ctx: Context, operations: Sequence[Operation], links: Mapping[str, Mapping[str, Any]]
) -> list[Operation]:
    """``operations`` with each cancel link (by operation label) resolved to a tool and its arguments."""
    by_id = {op.operation_id: op for op in operations if op.operation_id}
    by_label = {op.label: op for op in operations}
    out = []
    for op in operations:
        link = links.get(op.label)
        if op.long_running is not None and link is not None:
            resolved = _resolve(ctx, op, link, by_id, by_label)
            if resolved is not None:
                op = dataclasses.replace(op, long_running=dataclasses.replace(op.long_running, cancel=resolved))
        out.append(op)
    return out


def _resolve(
    ctx: Context,
    op: Operation,
    link: Mapping[str, Any],
    by_id: Mapping[str, Operation],
    by_label: Mapping[str, Operation],
) -> OperationLink | None:
    target = _target(ctx, link, by_id, by_label)
    if target is None:
        named = link.get("operationId") or link.get("operationRef")
        ctx.warn(op.label, f"cancel link: no generated operation {named!r}; cancelling will not call the API")
        return None
    parameters = link.get("parameters")
    arguments: dict[str, Any] = {}
    for key, expression in parameters.items() if isinstance(parameters, Mapping) else ():
        location, _, name = str(key).rpartition(".")
        param = next(
            (p for p in target.params if p.wire_name == name and (not location or p.location == location)), None
        )
        if param is None or param.bound is not None:
            ctx.warn(op.label, f"cancel link: {target.label} has no argument for {key!r}; ignored")
            continue
        problem = check_expression(expression)
        if problem is not None:
            ctx.warn(op.label, f"cancel link: {key!r}: {problem}; the link is not used")
            return None
        arguments[param.arg_name] = expression
    missing = [p.arg_name for p in target.params if p.required and p.bound is None and p.arg_name not in arguments]
    if missing:
        ctx.warn(op.label, f"cancel link: nothing gives {', '.join(missing)} of {target.label}; the link is not used")
        return None
    return OperationLink(tool=target.tool_name, arguments=arguments)


def _target(
    ctx: Context, link: Mapping[str, Any], by_id: Mapping[str, Operation], by_label: Mapping[str, Operation]
) -> Operation | None:
    operation_id = link.get("operationId")
    if isinstance(operation_id, str):
        return by_id.get(operation_id)
    ref = link.get("operationRef")
    if not isinstance(ref, str) or not ref.startswith("#/paths/"):
        return None
    try:
        parts = jsonpointer.split(ref)
    except jsonpointer.PointerError:
        return None
    if len(parts) != 3:
        return None
    return by_label.get(f"{parts[2].upper()} {parts[1]}")
