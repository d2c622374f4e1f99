"""What generate says about credentials: config requirements naming no scheme, an API that will be
called without any credential, parameters left out for carrying one, and arguments that ask the
model for a secret."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from generator.issues import Issue, Level
from generator.parse.ir import Api

# Argument names that hold a secret, compared lower-cased with separators removed (any case or
# separator style: clientSecret, client-secret, CLIENT_SECRET).
SECRET_NAMES = frozenset(
    {"secret", "password", "apikey", "token", "accesstoken", "clientsecret", "privatekey", "refreshtoken", "apisecret"}
)
LISTED_TOOLS = 5  # tools named per argument in the warning
_LISTED_CREDENTIAL_ARGS = 12  # parameters named in the left-out warning
_SEPARATORS = re.compile(r"[\s_\-.]+")


def secret_like(name: str) -> bool:
    """True when an argument called ``name`` would hold a secret."""
    return _SEPARATORS.sub("", name).lower() in SECRET_NAMES


def credential_args_warning(left_out: Mapping[str, set[str]]) -> str:
    """One line naming the credential-carrying arguments left out (the first few, by use), however
    many operations declare them: EC2 declares seven on each of 1,188."""
    ranked = sorted(left_out.items(), key=lambda item: (-len(item[1]), item[0]))
    shown = [f"{name} in {len(ops)} operation{'s' if len(ops) != 1 else ''}" for name, ops in ranked]
    more = len(shown) - _LISTED_CREDENTIAL_ARGS
    listed = "; ".join(shown[:_LISTED_CREDENTIAL_ARGS]) + (f"; and {more} more" if more > 0 else "")
    return (
        f"left out {len(ranked)} parameter or body propert{'ies' if len(ranked) != 1 else 'y'} that carry a "
        f"credential, never a model's argument: {listed}. The bridge sends the operator's credentials (security "
        "schemes); to send one of these, bind it with `bind: {NAME: env:VAR}` in --config"
    )


def config_security_issues(where: str, requirements: Any, schemes: Collection[str]) -> Iterator[Issue]:
    """Errors for a config ``security`` value that is malformed or names a scheme neither the spec
    nor the config declares: the operator asked for a credential that would never be sent."""
    if not isinstance(requirements, list) or not all(isinstance(r, Mapping) for r in requirements):
        yield Issue(Level.ERROR, where, "must be a list of requirements such as [{bearer: []}]")
        return
    for name in dict.fromkeys(str(s) for requirement in requirements for s in requirement):
        if name not in schemes:
            yield Issue(
                Level.ERROR,
                where,
                f"names the security scheme {name!r}, which neither the spec nor the config declares",
            )


def credential_notes(api: Api) -> Iterator[Issue]:
    """One warning when no operation would send any credential, and one listing the arguments
    named like secrets that nothing binds."""
    operations = api.operations
    if operations and not _any_credential(api):
        yield Issue(
            Level.WARNING,
            "security",
            "the spec declares no security for its operations and the config none, so calls go out without a "
            "credential; if the API needs one, declare it in --config (security_schemes: {bearer: {type: http, "
            "scheme: bearer}} and security: [{bearer: []}])",
        )
    found: dict[str, list[str]] = {}
    for op in operations:
        names = list(op.arguments.get("properties") or {})
        if op.body is not None and op.body.arg is not None:  # a whole-body argument: its top level too
            names += list(op.body.schema.get("properties") or {})
        for name in dict.fromkeys(str(n) for n in names):
            if secret_like(name):
                found.setdefault(name, []).append(op.tool_name)
    if found:
        listed = "; ".join(f"{arg} ({_tools(tools)})" for arg, tools in found.items())
        example = next(iter(found))
        yield Issue(
            Level.WARNING,
            "arguments",
            f"the model would be asked for arguments named like secrets: {listed}; if they are credentials, bind "
            f"them in --config (bind: {{{example}: env:VAR}}) so the bridge fills them and the model never sees them",
        )


def _any_credential(api: Api) -> bool:
    operations = api.operations
    if any(alternative for op in operations for alternative in op.security):
        return True
    if any(header.value.env for header in api.headers):
        return True
    bodies = [f for op in operations if op.body is not None for f in op.body.bound_fields]
    return any(p.bound is not None and p.bound.env for op in operations for p in op.params) or any(
        f.bound is not None and f.bound.env for f in bodies
    )


def _tools(tools: list[str]) -> str:
    shown = ", ".join(tools[:LISTED_TOOLS])
    more = len(tools) - LISTED_TOOLS
    count = f"{len(tools)} tool{'s' if len(tools) > 1 else ''}: "
    return count + (f"{shown} and {more} more" if more > 0 else shown)
