"""Security requirements, security schemes (with their environment variables) and servers."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from bridge import json_pointer as jsonpointer
from bridge.catalogue import EnvVar, SchemeUse, SecurityScheme, ServerSpec, ServerVariable
from generator.ir import Operation
from generator.parse_context import Context as _Context
from generator.parse_context import RawOperation as _RawOperation
from generator.parse_context import Skip as _Skip
from generator.parse_context import deref as _deref
from generator.parse_context import text as _text

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def requirements(ctx: _Context, raw: _RawOperation) -> tuple[tuple[SchemeUse, ...], ...]:
    """The operation's ``security``, else the document's; ``{}`` is an anonymous alternative.

    An alternative naming an undeclared scheme cannot be satisfied and is left out (with one
    warning per scheme); the operation itself is still generated.
    """
    requirements = raw.op["security"] if "security" in raw.op else ctx.document.get("security", [])
    if requirements is None:
        return ()
    if not isinstance(requirements, list):
        raise _Skip("security must be a list")
    alternatives = []
    for requirement in requirements:
        if not isinstance(requirement, dict):
            raise _Skip("a security requirement is not an object")
        undeclared = [str(scheme) for scheme in requirement if scheme not in ctx.schemes]
        for scheme in undeclared:
            _warn_undeclared_scheme(ctx, scheme)
        if not undeclared:
            alternatives.append(
                tuple(
                    SchemeUse(scheme=scheme, scopes=tuple(str(s) for s in scopes) if isinstance(scopes, list) else ())
                    for scheme, scopes in requirement.items()
                )
            )
    return tuple(alternatives)


def _warn_undeclared_scheme(ctx: _Context, scheme: str) -> None:
    if scheme not in ctx.undeclared_schemes:
        ctx.undeclared_schemes.add(scheme)
        detail = f"security scheme {scheme!r} is used but not declared; requirements naming it are ignored"
        ctx.warn(f"{ctx.source_name}: /components/securitySchemes", detail)


def security_schemes(ctx: _Context, prefix: str) -> dict[str, SecurityScheme]:
    components = ctx.document.get("components")
    nodes = components.get("securitySchemes") if isinstance(components, dict) else None
    if not isinstance(nodes, dict):
        return {}
    schemes: dict[str, SecurityScheme] = {}
    taken: set[str] = set()
    for name, node in nodes.items():
        where = f"{ctx.source_name}: {jsonpointer.join('components', 'securitySchemes', name)}"
        try:
            scheme = _deref(ctx.document, node, "security scheme")
        except _Skip as skip:
            ctx.warn(where, str(skip))
            continue
        if not isinstance(scheme, dict) or scheme.get("type") not in (
            "apiKey",
            "http",
            "oauth2",
            "openIdConnect",
            "mutualTLS",
        ):
            ctx.warn(where, "unknown security scheme type; operations that use it are skipped")
            continue
        schemes[str(name)] = _security_scheme(scheme, f"{prefix}_{_env_stem(str(name))}", taken)
    return schemes


# http schemes a static credential cannot answer (they need a challenge-response exchange).
_UNSUPPORTED_HTTP = frozenset({"digest", "negotiate", "ntlm", "hoba", "mutual"})
EnvRole = Literal["value", "token", "username", "password", "client_id", "client_secret"]
_ENV_SUFFIX: dict[EnvRole, str] = {
    "value": "API_KEY",
    "token": "TOKEN",
    "username": "USERNAME",
    "password": "PASSWORD",
    "client_id": "CLIENT_ID",
    "client_secret": "CLIENT_SECRET",
}


def _security_scheme(node: Mapping[str, Any], stem: str, taken: set[str]) -> SecurityScheme:
    kind = node["type"]
    description = _text(node.get("description"))
    if kind == "apiKey":
        location = node.get("in")
        param_name = node.get("name")
        ok = location in ("header", "query", "cookie") and isinstance(param_name, str) and bool(param_name)
        return SecurityScheme(
            type="apiKey",
            description=description,
            location=location if ok else None,
            param_name=str(param_name) if ok else None,
            env=_env(stem, ("value",), taken),
            supported=ok,
        )
    if kind == "http":
        http_scheme = str(node.get("scheme") or "").lower()
        roles: tuple[EnvRole, ...] = ("username", "password") if http_scheme == "basic" else ("token",)
        return SecurityScheme(
            type="http",
            description=description,
            http_scheme=http_scheme,
            env=_env(stem, roles, taken),
            supported=bool(http_scheme) and http_scheme not in _UNSUPPORTED_HTTP,
        )
    if kind == "oauth2":
        return _oauth2(node, description, stem, taken)
    if kind == "openIdConnect":
        return SecurityScheme(type="openIdConnect", description=description, env=_env(stem, ("token",), taken))
    return SecurityScheme(type="mutualTLS", description=description, supported=False)


def _oauth2(node: Mapping[str, Any], description: str | None, stem: str, taken: set[str]) -> SecurityScheme:
    """Client credentials: the runtime fetches tokens. Other flows need a user: take a ready token."""
    flows = node.get("flows") if isinstance(node.get("flows"), dict) else {}
    assert isinstance(flows, dict)
    scopes = tuple(
        dict.fromkeys(
            str(scope)
            for flow in flows.values()
            if isinstance(flow, dict) and isinstance(flow.get("scopes"), dict)
            for scope in flow["scopes"]
        )
    )
    client = flows.get("clientCredentials")
    token_url = client.get("tokenUrl") if isinstance(client, dict) else None
    if isinstance(token_url, str) and token_url:
        env = _env(stem, ("client_id", "client_secret"), taken)
        return SecurityScheme(type="oauth2", description=description, token_url=token_url, scopes=scopes, env=env)
    return SecurityScheme(type="oauth2", description=description, scopes=scopes, env=_env(stem, ("token",), taken))


def _env_stem(scheme_name: str) -> str:
    """``bearerAuth`` → ``BEARER_AUTH``."""
    return _NON_ALNUM.sub("_", _CAMEL_BOUNDARY.sub("_", scheme_name).lower()).strip("_").upper() or "AUTH"


def _env(stem: str, roles: Sequence[EnvRole], taken: set[str]) -> tuple[EnvVar, ...]:
    """``PREFIX_SCHEME_SUFFIX`` per role; the suffix is not repeated when the scheme name ends with it."""
    names = []
    for role in roles:
        suffix = _ENV_SUFFIX[role]
        name = stem if stem.endswith("_" + suffix) else f"{stem}_{suffix}"
        unique, number = name, 2
        while unique in taken:
            unique, number = f"{name}_{number}", number + 1
        taken.add(unique)
        names.append(EnvVar(role=role, name=unique))
    return tuple(names)


def used_schemes(schemes: dict[str, SecurityScheme], operations: Sequence[Operation]) -> dict[str, SecurityScheme]:
    """Only the schemes the generated tools need, in declaration order."""
    used = {use.scheme for op in operations for alternative in op.security for use in alternative}
    return {name: scheme for name, scheme in schemes.items() if name in used}


def servers(ctx: _Context) -> tuple[ServerSpec, ...]:
    nodes = ctx.document.get("servers")
    if not isinstance(nodes, list):
        return ()
    servers = []
    for position, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("url"), str):
            ctx.warn(f"{ctx.source_name}: {jsonpointer.join('servers', position)}", "server without a url; ignored")
            continue
        variables = node.get("variables") if isinstance(node.get("variables"), dict) else {}
        assert isinstance(variables, dict)
        servers.append(
            ServerSpec(
                url=node["url"],
                description=_text(node.get("description")),
                variables={str(name): _server_variable(value) for name, value in variables.items()},
            )
        )
    return tuple(servers)


def _server_variable(node: Any) -> ServerVariable:
    node = node if isinstance(node, dict) else {}
    enum = node.get("enum") if isinstance(node.get("enum"), list) else []
    assert isinstance(enum, list)
    return ServerVariable(
        default=str(node.get("default", "")),
        enum=tuple(str(value) for value in enum),
        description=_text(node.get("description")),
    )
