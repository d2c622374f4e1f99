"""Running a workflow: each step through the operation-call core, then its criteria and actions.

A step that calls an operation is an :class:`~bridge.calls.operation.OperationCall` like any tool call:
its arguments are validated against the tool's schema, the request is built and checked by the
same code, credentials (the operator's, or the caller's exchanged token) and scopes, per-user
limits, the deadline, redaction and the audit line (``tool=<workflow>/<step>``) all apply. Only
the status is not turned into an error: the step's ``successCriteria`` judge it (no criteria:
any status below 400 succeeds).

Bounds: a run executes at most :data:`MAX_STEPS` steps in all (goto loops, retries and nested
workflows included), nests workflows :data:`MAX_DEPTH` deep, retries a step at most
:data:`MAX_RETRIES` times, waits at most :data:`MAX_RETRY_AFTER` seconds between tries, and
ends by its deadline. Cancelling the tool call cancels the step in flight; no later step runs.
"""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import anyio

from bridge.calls.context import CallContext
from bridge.calls.operation import OperationCall
from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import Catalogue, ToolEntry, WorkflowAction, WorkflowEntry, WorkflowStep
from bridge.contract.expressions import json_pointer as pointer
from bridge.secrets.excerpt import excerpt
from bridge.tools.errors import ResponseTooLarge, ToolError, UnsafeRequestError, UpstreamError
from bridge.upstream.retry import parse_retry_after
from bridge.workflows.evaluate import MISSING, EvaluationError, Response, Scope, criterion_holds, resolve_value

__all__ = ["MAX_DEPTH", "MAX_RETRIES", "MAX_STEPS", "WorkflowError", "WorkflowRunner"]

logger = logging.getLogger("bridge.workflows.runner")

T = TypeVar("T")

MAX_STEPS = 100
MAX_DEPTH = 8
MAX_RETRIES = 10
MAX_RETRY_AFTER = 60.0
DEFAULT_WORKFLOW_SECONDS = 300.0


class WorkflowError(ToolError):
    """The workflow stopped: the message names the step, its operation and what failed."""


@dataclass(slots=True)
class _Run:
    """What one tool call's run shares across its steps and nested workflows."""

    context: CallContext
    surface: str
    executed: int = 0
    workflows: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(slots=True)
class _Outcome:
    ok: bool
    why: str  # what failed, for the error message
    scope: Scope
    retry_after: float | None = None  # from a Retry-After header


def _retry_after(headers: Mapping[str, str]) -> float | None:
    return parse_retry_after(headers.get("retry-after"))  # the one parser of upstream Retry-After text


class WorkflowRunner:
    """The workflows of one catalogue, runnable on one runtime."""

    def __init__(
        self, catalogue: Catalogue, runtime: HttpRuntime, *, seconds: float = DEFAULT_WORKFLOW_SECONDS
    ) -> None:
        self.runtime = runtime
        self.seconds = seconds
        self.flows = {flow.workflow_id: flow for flow in catalogue.workflows}
        entries = {entry.name: entry for entry in catalogue.tools}
        self.entries: dict[str, ToolEntry] = {}
        self.calls: dict[str, OperationCall] = {}
        for flow in catalogue.workflows:
            for step in flow.steps:
                if step.tool is not None and step.tool not in self.calls:
                    self.entries[step.tool] = entries[step.tool]
                    self.calls[step.tool] = OperationCall(entries[step.tool], runtime)

    def tools_of(self, workflow_id: str, seen: set[str] | None = None) -> set[str]:
        """Every operation tool ``workflow_id`` may call, through the workflows it runs too."""
        seen = set() if seen is None else seen
        flow = self.flows.get(workflow_id)
        if flow is None or workflow_id in seen:
            return set()
        seen.add(workflow_id)
        found = {s.tool for s in flow.steps if s.tool is not None}
        others = {s.workflow for s in flow.steps if s.workflow} | set(flow.depends_on)
        others |= {a.workflow for s in flow.steps for a in (*s.on_success, *s.on_failure) if a.workflow}
        for other in others:
            found |= self.tools_of(str(other), seen)
        return found

    async def run(self, workflow_id: str, inputs: Mapping[str, Any], context: CallContext) -> dict[str, Any]:
        """The workflow's outputs. Raises :class:`WorkflowError` naming the step that failed."""
        if context.deadline is None:
            context.deadline = anyio.current_time() + self.seconds
        run = _Run(context, context.surface)
        outputs, _ = await self._workflow(self.flows[workflow_id], dict(inputs), run, 0)
        return outputs

    # ------------------------------------------------------------------------------ workflows

    async def _workflow(
        self, flow: WorkflowEntry, inputs: dict[str, Any], run: _Run, depth: int
    ) -> tuple[dict[str, Any], int | None]:
        if depth > MAX_DEPTH:
            raise WorkflowError(f"Workflow {flow.workflow_id}: workflows nest deeper than {MAX_DEPTH} levels.")
        for dependency in flow.depends_on:
            if dependency not in run.workflows:
                await self._nested(dependency, inputs, run, depth)
        scope = Scope(inputs=inputs, workflows=run.workflows)
        index, status = 0, None
        attempts: dict[str, int] = {}
        by_id = {step.step_id: i for i, step in enumerate(flow.steps)}
        while index < len(flow.steps):
            step = flow.steps[index]
            outcome = await self._step(flow, step, scope, run, depth)
            status = outcome.scope.response.status if outcome.scope.response is not None else status
            scope.steps[step.step_id] = await self._off_loop(flow, step, self._outputs, step.outputs, outcome.scope)
            actions = step.on_success if outcome.ok else step.on_failure
            action = await self._off_loop(flow, step, self._first, actions, outcome.scope, attempts, step)
            if action is None:
                if outcome.ok:
                    index += 1
                    continue
                raise WorkflowError(self._failed(flow, step, outcome.why))
            if action.type == "end":
                break
            if action.type == "retry":
                attempts[step.step_id] = attempts.get(step.step_id, 0) + 1
                if action.step is not None or action.workflow is not None:
                    await self._detour(flow, action, scope, run, depth)
                await self._wait(action, outcome, run, flow, step)
                continue
            if action.workflow is not None:  # goto another workflow: it runs, and this one ends
                await self._nested(action.workflow, inputs, run, depth)
                break
            index = by_id[str(action.step)]
        outputs = await self._off_loop(flow, None, self._outputs, flow.outputs, scope)
        run.workflows[flow.workflow_id] = {"inputs": inputs, "outputs": outputs}
        return outputs, status

    async def _nested(self, workflow_id: str, inputs: Mapping[str, Any], run: _Run, depth: int) -> dict[str, Any]:
        flow = self.flows[workflow_id]
        declared = flow.input_schema.get("properties")
        given = {k: v for k, v in inputs.items() if not isinstance(declared, dict) or k in declared}
        outputs, _ = await self._workflow(flow, given, run, depth + 1)
        return outputs

    async def _detour(self, flow: WorkflowEntry, action: WorkflowAction, scope: Scope, run: _Run, depth: int) -> None:
        """A retry's ``stepId`` / ``workflowId``: run it, then come back to retry."""
        if action.workflow is not None:
            await self._nested(action.workflow, scope.inputs, run, depth)
            return
        step = next(s for s in flow.steps if s.step_id == action.step)
        outcome = await self._step(flow, step, scope, run, depth)
        scope.steps[step.step_id] = await self._off_loop(flow, step, self._outputs, step.outputs, outcome.scope)

    async def _off_loop(
        self, flow: WorkflowEntry, step: WorkflowStep | None, evaluate: Callable[..., T], *args: Any
    ) -> T:
        """``evaluate(*args)`` in a worker thread: criteria, outputs and values read upstream answers
        with queries an author wrote (``$..*..*..*`` on a big answer), which must not hold the event
        loop that serves every other session. Each query is bounded in time by itself
        (:data:`~bridge.workflows.evaluate.JSONPATH_SECONDS`); over budget, the step fails naming it."""
        try:
            return await anyio.to_thread.run_sync(functools.partial(evaluate, *args))
        except EvaluationError as exc:
            why = self._shown(str(exc), 600)  # outside text inside: redacted, then cut
            where = f"Workflow {flow.workflow_id}: {why}" if step is None else self._failed(flow, step, why)
            raise WorkflowError(where) from None

    def _first(
        self, actions: tuple[WorkflowAction, ...], scope: Scope, attempts: Mapping[str, int], step: WorkflowStep
    ) -> WorkflowAction | None:
        for action in actions:
            if action.type == "retry":
                limit = min(action.retry_limit if action.retry_limit is not None else 1, MAX_RETRIES)
                if attempts.get(step.step_id, 0) >= limit:
                    continue  # exhausted: the next matching failure action applies
            if all(criterion_holds(c, scope) for c in action.criteria):
                return action
        return None

    async def _wait(
        self, action: WorkflowAction, outcome: _Outcome, run: _Run, flow: WorkflowEntry, step: WorkflowStep
    ) -> None:
        delay = min(
            outcome.retry_after if outcome.retry_after is not None else (action.retry_after or 0.0), MAX_RETRY_AFTER
        )
        deadline = run.context.deadline
        if deadline is not None and anyio.current_time() + delay >= deadline:
            raise WorkflowError(
                self._failed(flow, step, f"{outcome.why}; retrying in {delay:g} s would pass the deadline")
            )
        if delay > 0:
            await anyio.sleep(delay)

    # ---------------------------------------------------------------------------------- steps

    async def _step(self, flow: WorkflowEntry, step: WorkflowStep, parent: Scope, run: _Run, depth: int) -> _Outcome:
        run.executed += 1
        if run.executed > MAX_STEPS:
            raise WorkflowError(
                f"Workflow {flow.workflow_id} stopped at step '{step.step_id}': a run may execute at most {MAX_STEPS} "
                "steps (goto loops, retries and nested workflows included)."
            )
        await run.context.progress(
            float(run.executed), None, f"{flow.workflow_id}: step {step.step_id} ({self._what(step)})"
        )
        scope = replace(parent, response=None, outputs=None, request={})
        try:
            if step.workflow is not None:
                return await self._workflow_step(step, scope, run, depth)
            return await self._operation_step(flow, step, scope, run)
        except EvaluationError as exc:
            raise WorkflowError(self._failed(flow, step, str(exc))) from None

    async def _workflow_step(self, step: WorkflowStep, scope: Scope, run: _Run, depth: int) -> _Outcome:
        inputs = {i.name: v for i in step.inputs if (v := resolve_value(i.value, scope)) is not MISSING}
        try:
            outputs, status = await self._workflow(self.flows[str(step.workflow)], inputs, run, depth + 1)
        except WorkflowError as exc:
            return _Outcome(False, str(exc), scope)
        scope.outputs = outputs
        scope.response = Response(status, {}, None, "", "")
        # the nested workflow's outputs may hold an upstream body: judged off the loop too (_step
        # turns an EvaluationError into the step's failure)
        return await anyio.to_thread.run_sync(functools.partial(self._judged, step, scope, status))

    async def _operation_step(self, flow: WorkflowEntry, step: WorkflowStep, scope: Scope, run: _Run) -> _Outcome:
        entry = self.entries[str(step.tool)]
        arguments: dict[str, Any] = {}
        supplied: dict[str, str] = {}
        for given in step.inputs:
            value = resolve_value(given.value, scope)
            if value is MISSING:
                continue
            if given.kind == "credential":
                supplied[given.name] = value if isinstance(value, str) else str(value)
            else:
                arguments[given.name] = value
        if step.body is not None:
            self._body(flow, step, entry, scope, arguments)
        wires = {p.arg: p for p in entry.binding.params}
        scope.request = {
            where: {wires[a].wire: v for a, v in arguments.items() if a in wires and wires[a].location == where}
            for where in ("header", "query", "path", "cookie")
        } | ({"body": scope.request["body"]} if "body" in scope.request else {})
        context = replace(run.context, surface=f"{run.surface}/{step.step_id}"[:128], supplied=supplied)
        try:
            answer = await self.calls[entry.name](arguments, context, raise_status=False)
        except (UnsafeRequestError, ResponseTooLarge) as exc:
            raise WorkflowError(self._failed(flow, step, str(exc))) from None
        except UpstreamError as exc:  # no answer (timeout, connection): a failed step that a retry may fix
            return _Outcome(False, str(exc), scope)
        except ToolError as exc:  # the arguments, a credential, a refused request: retrying will not help
            raise WorkflowError(self._failed(flow, step, str(exc))) from None
        redact = self.runtime.credentials.redact
        headers = {name.lower(): redact(value) for name, value in answer.upstream.headers.items()}
        scope.response = Response(
            answer.status, headers, answer.data, redact(str(answer.upstream.url)), entry.binding.method.upper()
        )
        outcome = await self._off_loop(flow, step, self._judged, step, scope, answer.status)
        outcome.retry_after = _retry_after(headers)
        return outcome

    def _body(
        self, flow: WorkflowEntry, step: WorkflowStep, entry: ToolEntry, scope: Scope, arguments: dict[str, Any]
    ) -> None:
        assert step.body is not None
        payload = resolve_value(step.body.payload, scope)
        for replacement in step.body.replacements:
            value = resolve_value(replacement.value, scope)
            if value is not MISSING:
                payload = _replaced(payload, replacement.target, value)
        scope.request = {"body": payload}
        binding = entry.binding.body
        if binding is None or payload is MISSING:
            return
        if binding.arg is not None:
            arguments[binding.arg] = payload
            return
        if not isinstance(payload, dict):
            raise WorkflowError(
                self._failed(flow, step, f"the request body must be an object, got {type(payload).__name__}")
            )
        args = {f.wire: f.arg for f in binding.fields}
        unknown = [k for k in payload if k not in args]
        if unknown:
            raise WorkflowError(
                self._failed(flow, step, f"the request body has no member {self._shown(unknown[0], 100)!r}")
            )
        arguments.update({args[k]: v for k, v in payload.items()})

    def _judged(self, step: WorkflowStep, scope: Scope, status: int | None) -> _Outcome:
        if not step.success:
            ok = status is not None and status < 400
            return _Outcome(ok, "" if ok else f"HTTP {status}", scope)
        for criterion in step.success:
            if not criterion_holds(criterion, scope):
                shown = (
                    criterion.condition if criterion.type == "simple" else f"{criterion.type} {criterion.condition!r}"
                )
                return _Outcome(
                    False, f"the success criterion {self._shown(shown, 200)} is not met (HTTP {status})", scope
                )
        return _Outcome(True, "", scope)

    def _outputs(self, outputs: Mapping[str, str], scope: Scope) -> dict[str, Any]:
        values = {name: resolve_value(text, scope) for name, text in outputs.items()}
        return {name: value for name, value in values.items() if value is not MISSING}

    def _shown(self, text: str, limit: int) -> str:
        """Outside text (an answer's member name, a spec's criterion) in a message: redacted, then cut."""
        return excerpt(text, self.runtime.credentials.redact, limit, mark="…")

    def _what(self, step: WorkflowStep) -> str:
        if step.tool is not None:
            return self.entries[step.tool].operation
        return f"workflow {step.workflow}"

    def _failed(self, flow: WorkflowEntry, step: WorkflowStep, why: str) -> str:
        return f"Workflow {flow.workflow_id} failed at step '{step.step_id}' ({self._what(step)}): {why}"


def _replaced(payload: Any, target: str, value: Any) -> Any:
    """``payload`` with ``value`` at JSON pointer ``target`` (a copy; a missing last member is added)."""
    tokens = pointer.split(target)
    if not tokens:
        return copy.deepcopy(value)
    payload = copy.deepcopy(payload)
    node = payload
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return payload  # nothing there to replace into
    last = tokens[-1]
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node[int(last)] = value
    return payload
