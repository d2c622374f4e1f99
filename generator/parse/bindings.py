"""Parameters the operator fills in (``bind:`` in the ``--config`` file), never the model.

Some APIs declare their credential as a plain required parameter (a chat API's ``token``) or a
body property (a banking API's ``client_id`` and ``secret`` in every request body), or a value
nobody should choose per call (``api-version``). ``bind: {token: env:SLACK_TOKEN,
api-version: "2024-01-01"}`` at the top of the config applies to every operation with such a
parameter; ``operations: {<id>: {bind: {...}}}`` overrides it for one operation. A key is a
parameter's wire name (header names in any case), or the name of a top-level property of the
request body. A bound parameter or property leaves the input schema and is recorded in the
catalogue (``ParamBinding.bound``, ``BodyBinding.bound_fields``); the runtime fills it at call
time, and an ``env:`` value is a secret the redactor knows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from bridge.contract.catalogue import BoundValue, StaticHeader
from bridge.contract.wire_rules import FORBIDDEN_HEADERS, HEADER_SAFE
from generator.parse.ir import Param

ENV_PREFIX = "env:"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class BindError(ValueError):
    """A ``bind:`` entry that cannot be used; the message says why."""


def bound_value(spec: Any) -> BoundValue:
    """``env:NAME`` → an environment variable; a string, number or boolean → that fixed text."""
    if isinstance(spec, str) and spec.startswith(ENV_PREFIX):
        name = spec[len(ENV_PREFIX) :].strip()
        if not _ENV_NAME.fullmatch(name):
            raise BindError(f"{spec!r} does not name an environment variable")
        return BoundValue(env=name)
    if isinstance(spec, bool):
        return BoundValue(value="true" if spec else "false")
    if isinstance(spec, str | int | float):
        return BoundValue(value=str(spec))
    raise BindError(f"a bound value must be 'env:NAME', a string, a number or a boolean, not {type(spec).__name__}")


def usable(global_bind: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The global bindings that can be used, and one problem line for each that cannot."""
    good: dict[str, Any] = {}
    problems: list[str] = []
    for key, spec in global_bind.items():
        try:
            bound_value(spec)
        except BindError as exc:
            problems.append(f"{key!r}: {exc}; ignored")
            continue
        good[str(key)] = spec
    return good, problems


def merged(global_bind: Mapping[str, Any], operation_bind: Any) -> dict[str, Any]:
    """The operation's bindings: the global ones, replaced by its own where both name a parameter."""
    out = dict(global_bind)
    if isinstance(operation_bind, Mapping):
        out.update({str(key): value for key, value in operation_bind.items()})
    return out


def find(bindings: Mapping[str, Any], location: str, name: str) -> str | None:
    """The key of ``bindings`` naming the parameter ``name`` in ``location``, if any."""
    if name in bindings:
        return name
    if location == "header":
        lowered = name.lower()
        return next((key for key in bindings if key.lower() == lowered), None)
    return None


def unused(global_bind: Mapping[str, Any], params: Iterable[Param], body_fields: Iterable[str] = ()) -> list[str]:
    """Global keys that bound no parameter nor body property of any operation (probably a typo)."""
    used: set[tuple[str, str]] = {
        (p.wire_name, p.location) for p in params if p.bound is not None and p.bound.scheme is None
    }
    used |= {(name, "body") for name in body_fields}
    return [key for key in global_bind if not any(find({key: None}, location, wire) == key for wire, location in used)]


def for_operation(
    wanted: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    warn: Callable[[str], None],
    matched: set[str],
) -> dict[tuple[str, str], BoundValue]:
    """``(name, in)`` -> value of each bound parameter among ``candidates`` (parameter objects);
    the keys of ``wanted`` (the operation's merged bindings) that matched are added to ``matched``."""
    found: dict[tuple[str, str], BoundValue] = {}
    for node in candidates:
        key = find(wanted, node["in"], node["name"])
        if key is None:
            continue
        matched.add(key)
        try:
            found[(node["name"], node["in"])] = bound_value(wanted[key])
        except BindError as exc:
            warn(f"bind {key!r}: {exc}; ignored")
    return found


def body_bindings(
    wanted: Mapping[str, Any], properties: Iterable[str], warn: Callable[[str], None], matched: set[str]
) -> dict[str, BoundValue]:
    """Top-level body property -> its bound value (keys are property names, exactly)."""
    found: dict[str, BoundValue] = {}
    for name in properties:
        if name not in wanted:
            continue
        matched.add(name)
        try:
            found[name] = bound_value(wanted[name])
        except BindError as exc:
            warn(f"bind {name!r}: {exc}; ignored")
    return found


def unmatched_own(own: Any, matched: set[str]) -> list[str]:
    """The operation's own ``bind`` keys that named neither a parameter nor a body property."""
    return [str(key) for key in (own if isinstance(own, Mapping) else ()) if str(key) not in matched]


_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def static_headers(config: Mapping[str, Any]) -> tuple[tuple[StaticHeader, ...], list[str]]:
    """The config's ``headers:`` (sent on every request), and one problem line for each that
    cannot be used: a misconfigured header is an error, never silently left out."""
    found: list[StaticHeader] = []
    problems: list[str] = []
    seen: set[str] = set()
    for name, spec in config.items():
        key = str(name)
        lowered = key.lower()
        if not _HEADER_NAME.fullmatch(key):
            problems.append(f"{key!r} is not a header name")
        elif lowered in FORBIDDEN_HEADERS or lowered.startswith("x-forwarded-"):
            hint = " (declare a security scheme in `security_schemes` instead)" if lowered == "authorization" else ""
            problems.append(f"{key!r} is a header the bridge sets itself or never sends{hint}")
        elif lowered in seen:
            problems.append(f"{key!r} is given twice")
        else:
            try:
                value = bound_value(spec)
            except BindError as exc:
                problems.append(f"{key!r}: {exc}")
                continue
            if value.value is not None and not HEADER_SAFE.fullmatch(value.value):
                problems.append(f"{key!r}: the value has line breaks, control or non-ASCII characters")
                continue
            found.append(StaticHeader(name=key, value=value))
            seen.add(lowered)
    return tuple(found), problems
