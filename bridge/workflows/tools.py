"""Workflow tools: one MCP tool per catalogue workflow, run by :class:`~bridge.workflows.runner.WorkflowRunner`.

A workflow tool needs every scope its steps need (for each step, one of its alternatives): a
caller whose token lacks them neither sees it in ``tools/list`` nor can call it. Its result is
the workflow's outputs, redacted and trimmed like any result, as structured content and JSON text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

import mcp_types

from bridge.calls.context import CallContext, current_identity
from bridge.calls.http_tools import tool_annotations
from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import OPERATION_META_KEY, Catalogue, WorkflowEntry
from bridge.identity.scopes import Requirement
from bridge.results.tool_result import OutputCheck, redact_json
from bridge.results.trim import TrimSettings, trim_result
from bridge.tools.registry import Tool, ToolContext, ToolRegistry
from bridge.workflows.runner import WorkflowError, WorkflowRunner

__all__ = ["MAX_SCOPE_ALTERNATIVES", "combined_scopes", "workflow_tools"]

logger = logging.getLogger("bridge.workflows.tools")

MAX_SCOPE_ALTERNATIVES = 64  # products of alternatives past this keep the smallest sets
_NO_LIMITS = TrimSettings(max_bytes=None, max_items=None, max_string=None, drop_empty=False)


def combined_scopes(requirements: Iterable[Requirement]) -> Requirement:
    """What a caller needs to satisfy every requirement: one alternative of each, unioned."""
    combined: list[frozenset[str]] = [frozenset()]
    for need in requirements:
        if not need:
            continue
        combined = sorted({mine | theirs for mine in combined for theirs in need}, key=lambda s: (len(s), sorted(s)))
        combined = combined[:MAX_SCOPE_ALTERNATIVES]
    return () if combined == [frozenset()] else tuple(combined)


def _tool(flow: WorkflowEntry, runner: WorkflowRunner, runtime: HttpRuntime, scopes: Requirement) -> Tool:
    check = OutputCheck(flow.output_schema, flow.name) if flow.output_schema is not None else None

    async def run(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult:
        context = CallContext.from_tool(ctx, identity=current_identity() if runtime.identities else None)
        redact = runtime.credentials.redact
        try:
            outputs = await runner.run(flow.workflow_id, args, context)
        except WorkflowError as exc:
            raise WorkflowError(redact(str(exc))) from None
        trimmed = trim_result(redact_json(outputs, redact), runtime.trim or _NO_LIMITS)
        text = json.dumps(trimmed.value, ensure_ascii=False, separators=(",", ":"))
        problem = check.problem(trimmed.value) if check is not None else None
        if problem is not None:
            # The upstream's answers did not have the shape the spec promised: the model gets them as text.
            logger.warning("workflow %s: outputs do not match the output schema: %s", flow.workflow_id, problem)
            return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)])
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=text)],
            structured_content=trimmed.value if check is not None else None,
        )

    return Tool(
        name=flow.name,
        run=run,
        description=flow.description,
        title=flow.title,
        input_schema=flow.input_schema,
        output_schema=flow.output_schema,
        annotations=tool_annotations(flow.annotations),
        meta={OPERATION_META_KEY: flow.operation},
        checks_own_output=True,
        scopes=scopes,
        internal=True,
    )


def workflow_tools(
    catalogue: Catalogue, runtime: HttpRuntime, registry: ToolRegistry
) -> tuple[list[Tool], WorkflowRunner]:
    """The workflow tools of ``catalogue``, whose steps' tools are in ``registry`` (a workflow whose
    step tool a package's hooks removed is left out, with a log line), and their runner."""
    runner = WorkflowRunner(catalogue, runtime)
    tools = []
    for flow in catalogue.workflows:
        used = runner.tools_of(flow.workflow_id)
        gone = sorted(name for name in used if registry.get(name) is None)
        if gone:
            logger.warning("workflow %s is not served: its step tool %s was removed", flow.workflow_id, gone[0])
            continue
        scopes = combined_scopes(registry.get(name).scopes for name in sorted(used))  # type: ignore[union-attr]
        tools.append(_tool(flow, runner, runtime, scopes))
    return tools, runner
