"""Arazzo workflows into catalogue entries: every step resolved, every expression parsed and checked.

A workflow that cannot run (a step that resolves to nothing, a parameter the operation does not
have, a malformed or dangling expression, a source that is not in the package, a workflow it uses
that cannot run, a recursive call) is skipped: each problem is a warning with its JSON pointer in
the Arazzo file, and ``--strict`` turns them into errors. The rest become one tool each.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from bridge.contract.catalogue import Catalogue, ToolAnnotationsSpec, WorkflowEntry, WorkflowStep
from bridge.contract.expressions import json_pointer as pointer
from bridge.contract.expressions.arazzo import Expression, ExpressionError, parse_expression
from generator.issues import Issue, Level
from generator.options import GenerateOptions, tool_description_limit_of
from generator.parse.ir import Api
from generator.parse.naming import fit_length, sanitize
from generator.shape.compact_text import compact_text, cut
from generator.workflows import schemas, steps
from generator.workflows.document import ArazzoDocument
from generator.workflows.sources import Known, Sources

__all__ = ["build_workflows"]

_STEP_ROOTS = {"inputs", "steps", "workflows", "response", "request", "statusCode", "url", "method", "outputs"}
_VALUE_ROOTS = {"inputs", "steps", "workflows"}


@dataclass(slots=True)
class _Draft:
    doc: ArazzoDocument
    index: int
    flow: dict[str, Any]
    problems: steps.Problems
    steps: list[WorkflowStep] = field(default_factory=list)
    tools: set[int] = field(default_factory=set)  # operations its own steps call
    uses: set[str] = field(default_factory=set)  # workflows it runs (steps, goto/retry, dependsOn)
    calls: set[str] = field(default_factory=set)  # workflows its steps run (must not recurse)
    input_schema: dict[str, Any] = field(default_factory=dict)
    depends: list[str] = field(default_factory=list)  # dependsOn, resolved to workflow ids

    @property
    def workflow_id(self) -> str:
        return str(self.flow["workflowId"])

    @property
    def at(self) -> str:
        return f"/workflows/{self.index}"


class _Checker:
    """Checks what each expression refers to exists, for one workflow."""

    def __init__(self, draft: _Draft, all_ids: set[str]) -> None:
        self.draft = draft
        self.all_ids = all_ids
        self.outputs = {str(s.get("stepId")): set((s.get("outputs") or {}).keys()) for s in draft.flow.get("steps", [])}
        properties = draft.input_schema.get("properties")
        self.inputs = set(properties) if isinstance(properties, dict) else None

    def __call__(self, roots: set[str]) -> Any:
        def check(expression: Expression, at: str) -> None:
            problem = self.problem(expression, roots)
            if problem is not None:
                self.draft.problems.error(at, f"{expression.text[:100]}: {problem}")

        return check

    def problem(self, expression: Expression, roots: set[str]) -> str | None:
        if expression.root not in roots:
            return f"${expression.root} cannot be used here"
        if expression.root == "inputs" and self.inputs is not None:
            name = expression.parts[0]
            if name not in self.inputs and name.split(".")[0] not in self.inputs:
                return f"the workflow has no input '{name}'"
        if expression.root == "steps":
            step, _, name = expression.parts
            if step not in self.outputs:
                return f"no step '{step}' in this workflow"
            if name not in self.outputs[step] and name.split(".")[0] not in self.outputs[step]:
                return f"step '{step}' has no output '{name}'"
        if expression.root == "workflows" and expression.parts[0] not in self.all_ids:
            return f"no workflow '{expression.parts[0]}'"
        return None


def _expression(text: Any, at: str, problems: steps.Problems) -> Expression | None:
    try:
        return parse_expression(str(text))
    except ExpressionError as exc:
        problems.error(at, str(exc))
        return None


def _draft(
    draft: _Draft, known: Known, sources: Sources, ids: set[str], all_ids: set[str], options: GenerateOptions
) -> None:
    flow, doc, problems, wpath = draft.flow, draft.doc, draft.problems, draft.at
    try:
        draft.input_schema = schemas.input_schema(flow.get("inputs"), doc, options)
    except schemas.SchemaError as exc:
        problems.error(f"{wpath}/inputs", str(exc))
    check = _Checker(draft, all_ids)
    step_ids = {str(s["stepId"]) for s in flow["steps"]}
    for dep in flow.get("dependsOn") or ():
        target = sources.workflow_id(str(dep), ids)
        if isinstance(target, str):
            problems.error(f"{wpath}/dependsOn", target)
        elif target.workflow is not None:
            draft.uses.add(target.workflow)
            draft.depends.append(target.workflow)

    def workflow_of(value: str) -> str | None:
        target = sources.workflow_id(value, ids)
        return target.workflow if not isinstance(target, str) else None

    for index, spec in enumerate(flow["steps"]):
        spath = f"{wpath}/steps/{index}"
        op = entry = None
        nested: str | None = None
        for key in ("operationId", "operationPath", "workflowId"):
            if key not in spec:
                continue
            value = str(spec[key])
            if key == "operationId":
                target = sources.operation_id(value, known)
            elif key == "operationPath":
                target = sources.operation_path(value, known)
            else:
                target = sources.workflow_id(value, ids)
            if isinstance(target, str):
                problems.error(f"{spath}/{key}", target)
            else:
                if target.note:
                    problems.note(f"{spath}/{key}", target.note)
                if target.index is not None:
                    op, entry = known.operation(target.index), known.entry(target.index)
                    draft.tools.add(target.index)
                nested = target.workflow
        if op is None and nested is None:
            continue
        if nested is not None:
            draft.uses.add(nested)
            draft.calls.add(nested)
        params = steps.merged_parameters(
            flow.get("parameters") or [], spec.get("parameters") or [], doc, wpath, spath, problems
        )
        inputs = steps.parameters(params, op, dict(known.catalogue.security_schemes), None, problems)
        for param, at in params:
            steps.value_expressions(param.get("value"), f"{at}/value", problems, check(_VALUE_ROOTS))
        body = None
        if "requestBody" in spec:
            body = steps.body(spec["requestBody"], op, f"{spath}/requestBody", problems)
            steps.value_expressions(spec["requestBody"], f"{spath}/requestBody", problems, check(_VALUE_ROOTS))
        roots = _STEP_ROOTS if nested is not None else _STEP_ROOTS - {"outputs"}
        outputs: dict[str, str] = {}
        for name, text in (spec.get("outputs") or {}).items():
            expression = _expression(text, f"{spath}/outputs/{pointer.escape(name)}", problems)
            if expression is not None:
                check(roots)(expression, f"{spath}/outputs/{pointer.escape(name)}")
                outputs[name] = str(text)
        success = steps.criteria(spec.get("successCriteria") or [], f"{spath}/successCriteria", problems)
        for group in ("successCriteria",):
            for i, item in enumerate(spec.get(group) or []):
                steps.value_expressions(item.get("context"), f"{spath}/{group}/{i}/context", problems, check(roots))
        on_success = steps.actions(
            flow.get("successActions") or [], spec.get("onSuccess") or [], "successActions",
            doc, wpath, spath, workflow_of, step_ids, problems,
        )  # fmt: skip
        on_failure = steps.actions(
            flow.get("failureActions") or [], spec.get("onFailure") or [], "failureActions",
            doc, wpath, spath, workflow_of, step_ids, problems,
        )  # fmt: skip
        draft.uses.update(a.workflow for a in (*on_success, *on_failure) if a.workflow)
        draft.steps.append(
            WorkflowStep(
                step_id=str(spec["stepId"]),
                tool=entry.name if entry is not None else None,
                workflow=nested,
                inputs=inputs,
                body=body,
                success=success,
                on_success=on_success,
                on_failure=on_failure,
                outputs=outputs,
            )
        )
    outputs = flow.get("outputs") or {}
    for name, text in outputs.items():
        expression = _expression(text, f"{wpath}/outputs/{pointer.escape(name)}", problems)
        if expression is not None:
            check(_VALUE_ROOTS)(expression, f"{wpath}/outputs/{pointer.escape(name)}")


def _recursive(drafts: dict[str, _Draft]) -> set[str]:
    """Workflows whose steps run themselves, directly or through others."""
    looping: set[str] = set()
    for start in drafts:
        stack, seen = list(drafts[start].calls), set()
        while stack:
            current = stack.pop()
            if current == start:
                looping.add(start)
                break
            if current in seen or current not in drafts:
                continue
            seen.add(current)
            stack.extend(drafts[current].calls)
    return looping


def _description(flow: dict[str, Any], options: GenerateOptions) -> str:
    limit = tool_description_limit_of(options)
    summary, description = flow.get("summary"), flow.get("description")
    parts = [str(p) for p in (summary, description) if isinstance(p, str) and p.strip()]
    if options.compact:
        parts = [compact_text(p, limit) for p in parts]
    text = "\n".join(dict.fromkeys(parts)) or f"Runs the workflow {flow['workflowId']}."
    return cut(f"Workflow: {text}", limit)


def _output_schema(
    draft: _Draft, drafts: dict[str, _Draft], known: Known, memo: dict[str, dict[str, Any]], depth: int = 0
) -> dict[str, Any]:
    if draft.workflow_id in memo:
        return memo[draft.workflow_id]
    memo[draft.workflow_id] = {"type": "object"}  # a loop through goto gets no more than this
    by_step = {s.step_id: s for s in draft.steps}
    properties: dict[str, Any] = {}
    for name, text in (draft.flow.get("outputs") or {}).items():
        properties[name] = _typed(str(text), by_step, drafts, known, memo, depth)
    schema = {"type": "object", "properties": properties}
    memo[draft.workflow_id] = schema
    return schema


def _typed(
    text: str,
    by_step: dict[str, WorkflowStep],
    drafts: dict[str, _Draft],
    known: Known,
    memo: dict[str, Any],
    depth: int,
) -> dict[str, Any]:
    try:
        expression = parse_expression(text)
    except ExpressionError:
        return {}
    if expression.root != "steps" or expression.pointer or depth > 8:
        return {}
    step = by_step.get(expression.parts[0])
    inner = step.outputs.get(expression.parts[2]) if step is not None else None
    if step is None or inner is None:
        return {}
    try:
        source = parse_expression(inner)
    except ExpressionError:
        return {}
    if step.tool is not None:
        entry = next((e for e in known.catalogue.tools if e.name == step.tool), None)
        return schemas.output_type(source, entry)
    nested = drafts.get(step.workflow or "")
    if source.root == "outputs" and nested is not None and not source.pointer:
        nested_schema = _output_schema(nested, drafts, known, memo, depth + 1)
        found = nested_schema.get("properties", {}).get(source.parts[0])
        return dict(found) if isinstance(found, dict) else {}
    return {}


def build_workflows(
    documents: list[ArazzoDocument], api: Api, catalogue: Catalogue, spec_source: str, options: GenerateOptions
) -> tuple[tuple[WorkflowEntry, ...], list[Issue]]:
    """The workflows of ``documents`` that can run on ``catalogue``'s tools, and the issues found."""
    known = Known(api, catalogue, spec_source)
    by_path = {os.path.realpath(doc.source): doc for doc in documents}
    issues: list[Issue] = []
    drafts: dict[str, _Draft] = {}
    all_ids = {str(w["workflowId"]) for doc in documents for w in doc.document["workflows"]}
    for doc in documents:
        sources = Sources(doc, spec_source, by_path)
        ids = {str(w["workflowId"]) for w in doc.document["workflows"]}
        for index, flow in enumerate(doc.document["workflows"]):
            draft = _Draft(doc, index, flow, steps.Problems(doc))
            if draft.workflow_id in drafts:
                issues.append(
                    Issue(
                        Level.WARNING,
                        doc.where(f"{draft.at}/workflowId"),
                        "a workflow of this id is already given; skipped",
                    )
                )
                continue
            _draft(draft, known, sources, ids, all_ids, options)
            drafts[draft.workflow_id] = draft
    for looping in _recursive(drafts):
        drafts[looping].problems.error(f"{drafts[looping].at}/steps", "its steps run this workflow again (recursion)")
    alive = {wid for wid, d in drafts.items() if not d.problems.errors}
    changed = True
    while changed:
        changed = False
        for wid in sorted(alive):
            dead = sorted(drafts[wid].uses - alive)
            if dead:
                drafts[wid].problems.error(drafts[wid].at, f"it runs workflow '{dead[0]}', which cannot run")
                alive.discard(wid)
                changed = True
    for draft in drafts.values():
        for where, message in draft.problems.notes:
            issues.append(Issue(Level.WARNING, draft.doc.where(where), message))
        for where, message in draft.problems.errors:
            issues.append(Issue(Level.WARNING, draft.doc.where(where), message))
        if draft.workflow_id not in alive:
            issues.append(
                Issue(
                    Level.WARNING,
                    draft.doc.where(draft.at),
                    f"workflow '{draft.workflow_id}' cannot run: no tool for it",
                )
            )
    taken = {entry.name for entry in catalogue.tools}
    entries: list[WorkflowEntry] = []
    memo: dict[str, dict[str, Any]] = {}
    for wid, draft in drafts.items():
        if wid not in alive:
            continue
        name = fit_length(sanitize(wid) or "workflow", options.max_name_length)
        base, n = name, 1
        while name in taken:
            n += 1
            name = fit_length(f"{base}_workflow" if n == 2 else f"{base}_workflow_{n}", options.max_name_length)
        if name != base:
            issues.append(
                Issue(
                    Level.WARNING,
                    draft.doc.where(f"{draft.at}/workflowId"),
                    f"a tool is named {base!r}: the workflow's tool is {name!r}",
                )
            )
        taken.add(name)
        entries.append(
            WorkflowEntry(
                name=name,
                workflow_id=wid,
                source=draft.doc.name,
                title=draft.flow.get("summary"),
                description=_description(draft.flow, options),
                input_schema=draft.input_schema,
                output_schema=_output_schema(draft, drafts, known, memo) if options.output_schemas else None,
                annotations=schemas.combined_hints(_hints(wid, drafts, known, set())),
                steps=tuple(draft.steps),
                outputs={k: str(v) for k, v in (draft.flow.get("outputs") or {}).items()},
                depends_on=tuple(draft.depends),
            )
        )
    return tuple(entries), issues


def _hints(wid: str, drafts: dict[str, _Draft], known: Known, seen: set[str]) -> list[ToolAnnotationsSpec]:
    """The annotations of every operation ``wid`` may call, through the workflows it runs too."""
    if wid in seen or wid not in drafts:
        return []
    seen.add(wid)
    found = [known.entry(i).annotations for i in sorted(drafts[wid].tools)]
    for other in sorted(drafts[wid].uses):
        found.extend(_hints(other, drafts, known, seen))
    return found
