"""An operation's annotations from every signal, the safe one winning.

The method gives a start (``GET`` reads, ``DELETE`` destroys: ``BY_METHOD``). Then every other
signal of what the operation does is read: the verb its ``operationId`` leads with, an AWS action
(``x-aws-operation-name``, a one-value ``Action`` query constant, ``Action=`` in the path), a Google
custom method (``/{name}:cancel``), an RPC path (``/chat.delete``), the summary's opening verb, and
``x-ms-long-running-operation``. The vocabulary, and the reading of the names, are in
bridge/contract/vocabulary/verbs.py (``said_by``), which serving also applies to packages generated
before this rule.

- **Read-only** needs a safe method and no signal of a write. An AWS action is a command: it reads
  only when its verb is a read verb (Describe, Get, List...); any other verb writes.
- **Destructive** is any signal of a destructive verb (terminate, delete, purge, revoke...) whatever
  the method, or the method's own (PUT, PATCH, DELETE).
- The spec's ``x-mcp-annotations`` may say more, but never less safe than a signal: it cannot make
  an operation named as a write read-only, nor one named as destructive harmless. The operator's
  ``--config`` ``annotations`` settle everything.

Where the method (or the spec's hint) says read-only and a name says write, the operation is not
read-only and :func:`disagreements` lists it, so the operator sees it and can settle it.

This is the one decision: ``--read-only`` filters on it, and the catalogue carries it to run_query,
``--confirm``, discovery, resources and search.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bridge.contract.catalogue import ToolAnnotationsSpec
from bridge.contract.vocabulary.verbs import Said, said_by
from generator.issues import Issue, Level
from generator.parse.context import Context, RawOperation, Skip, deref

__all__ = ["ANNOTATION_KEYS", "BY_METHOD", "Decision", "decide", "disagreements"]

# (readOnlyHint, destructiveHint, idempotentHint) per method; openWorldHint is always true.
BY_METHOD: dict[str, tuple[bool, bool, bool]] = {
    "GET": (True, False, True),
    "HEAD": (True, False, True),
    "OPTIONS": (True, False, True),
    "TRACE": (True, False, True),
    "POST": (False, False, False),
    "PUT": (False, True, True),
    "PATCH": (False, True, False),
    "DELETE": (False, True, True),
}
ANNOTATION_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
LISTED = 20  # operations named in the disagreement warning; the rest are counted
_ACTION_PARAMS = frozenset({"action"})
_AWS_NAME = re.compile(r"x-(?:aws|amazon)-[a-z-]*operation-name")


@dataclass(frozen=True, slots=True)
class Decision:
    """The annotations, and the signals of a write that a read-only method or hint met (empty when none)."""

    annotations: ToolAnnotationsSpec
    conflicts: tuple[str, ...] = ()


def _action_constants(ctx: Context, raw: RawOperation) -> list[str]:
    """The values an ``Action`` query parameter is fixed to (a one-value enum or a const); ``Action=``
    in the path is the path's own signal."""
    found: list[str] = []
    for node in [*raw.path_params, *(raw.op.get("parameters") or [])]:
        try:
            param = deref(ctx.document, node, "parameter")
        except Skip:
            continue
        if not isinstance(param, Mapping) or str(param.get("name", "")).casefold() not in _ACTION_PARAMS:
            continue
        if param.get("in") != "query":
            continue
        nested = param.get("schema")
        # OpenAPI 2 keeps the enum on the parameter itself
        schema: Mapping[str, Any] = nested if isinstance(nested, Mapping) else param
        values = schema.get("enum") if isinstance(schema.get("enum"), list) else None
        if "const" in schema:
            values = [schema["const"]]
        if values and len(values) == 1 and isinstance(values[0], str):
            found.append(values[0])
    return found


def _signals(ctx: Context, raw: RawOperation) -> list[Said]:
    op = raw.op
    actions = [(str(k), v) for k, v in op.items() if _AWS_NAME.fullmatch(str(k)) and isinstance(v, str)]
    actions += [("Action", value) for value in _action_constants(ctx, raw)]
    summary, description = op.get("summary"), op.get("description")
    said = summary if isinstance(summary, str) and summary.strip() else None
    if said is None and isinstance(description, str):
        said = description.strip().split("\n", 1)[0]
    found = said_by(raw.method, operation_id=raw.operation_id, actions=actions, path=raw.path, summary=said)
    if op.get("x-ms-long-running-operation") is True:
        found.append(Said("x-ms-long-running-operation", "long-running", True, False))
    return found


def _explicit(ctx: Context, raw: RawOperation, source: str, extra: Any) -> dict[str, bool]:
    if extra is None:
        return {}
    if not isinstance(extra, Mapping):
        ctx.warn(raw.label, f"{source} must be a mapping; ignored")
        return {}
    values: dict[str, bool] = {}
    for key, value in extra.items():
        if key in ANNOTATION_KEYS and isinstance(value, bool):
            values[key] = value
        else:
            ctx.warn(raw.label, f"{source}: {key!r} must be one of {', '.join(ANNOTATION_KEYS)} with a boolean")
    return values


def decide(ctx: Context, raw: RawOperation) -> Decision:
    """The operation's annotations from its method, its names, its summary, the spec's hints and the
    config's (which settle any disagreement)."""
    read_only, destructive, idempotent = BY_METHOD.get(raw.method, (False, True, False))
    signals = _signals(ctx, raw)
    writes = [s for s in signals if s.writes]
    destroys = any(s.destroys for s in signals)
    values = {
        "readOnlyHint": read_only and not writes,
        "destructiveHint": destructive or destroys,
        "idempotentHint": idempotent and not (read_only and writes),  # a GET that writes is no longer known idempotent
        "openWorldHint": True,
    }
    spec = _explicit(ctx, raw, "x-mcp-annotations", raw.op.get("x-mcp-annotations"))
    claims_read = read_only or spec.get("readOnlyHint") is True
    if writes and spec.get("readOnlyHint") is True:
        del spec["readOnlyHint"]
    if destroys and spec.get("destructiveHint") is False:
        del spec["destructiveHint"]
    values.update(spec)
    config = _explicit(ctx, raw, "overrides", raw.overrides.get("annotations"))
    values.update(config)
    conflicts: tuple[str, ...] = ()
    if claims_read and writes and "readOnlyHint" not in config:
        conflicts = tuple(f"{s.source} says {s.verb}" for s in writes)
    return Decision(ToolAnnotationsSpec(**values), conflicts)


def disagreements(found: Mapping[str, Decision]) -> list[Issue]:
    """One warning naming (at most ``LISTED``) operations that read by their method or the spec's
    hint but are named as writes: they were made not read-only; the config settles each."""
    clashing = [(label, decision) for label, decision in found.items() if decision.conflicts]
    if not clashing:
        return []
    named = "; ".join(f"{label} ({decision.conflicts[0]})" for label, decision in clashing[:LISTED])
    more = f"; and {len(clashing) - LISTED} more" if len(clashing) > LISTED else ""
    detail = (
        f"{len(clashing)} operation(s) read by their method or x-mcp-annotations but are named as writes, "
        f"so they are not read-only (kept out of --read-only and run_query, asked under --confirm writes); "
        f"if one only reads, settle it in --config: operations: {{<id>: {{annotations: {{readOnlyHint: true}}}}}}: "
        f"{named}{more}"
    )
    return [Issue(Level.WARNING, "annotations", detail)]
