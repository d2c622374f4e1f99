"""Security requirements, security schemes (with their environment variables) and servers."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.contract.catalogue import EnvRole, EnvVar, SchemeUse, SecurityScheme, ServerSpec, ServerVariable
from bridge.contract.expressions import json_pointer as jsonpointer
from generator.issues import Issue, Level
from generator.parse.context import Context as _Context
from generator.parse.context import RawOperation as _RawOperation
from generator.parse.context import Skip as _Skip
from generator.parse.context import deref as _deref
from generator.parse.context import text as _text
from generator.parse.decide.credential_notes import config_security_issues
from generator.parse.ir import Operation

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def requirements(ctx: _Context, raw: _RawOperation) -> tuple[tuple[SchemeUse, ...], ...]:
    """The operation's ``security``, else the document's; ``{}`` is an anonymous alternative.

    The config's ``security`` of the operation (``operations: {<id>: {security: ...}}``) wins over
    the spec's, and the config's top-level ``security`` replaces the document's default. An
    alternative naming an undeclared scheme cannot be satisfied and is left out (with one warning
    per scheme); the operation itself is still generated.
    """
    if "security" in raw.overrides:
        requirements = raw.overrides["security"]
        problems = list(config_security_issues(f"config: {raw.label}: security", requirements, ctx.schemes))
        if problems:
            ctx.issues.extend(problems)
            return ()
    elif "security" in raw.op:
        requirements = raw.op["security"]
    elif ctx.options.security is not None:
        requirements = ctx.options.security
    else:
        requirements = ctx.document.get("security", [])
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


SCHEME_TYPES = ("apiKey", "http", "oauth2", "openIdConnect", "mutualTLS")


def security_schemes(ctx: _Context, prefix: str) -> dict[str, SecurityScheme]:
    """The document's security schemes, and the ones the config declares (``security_schemes:``,
    OpenAPI Security Scheme Objects; a config scheme replaces a spec scheme of the same name)."""
    components = ctx.document.get("components")
    nodes = components.get("securitySchemes") if isinstance(components, dict) else None
    found: dict[str, tuple[str, Any, bool]] = {}
    for name, node in (nodes if isinstance(nodes, dict) else {}).items():
        found[str(name)] = (
            f"{ctx.source_name}: {jsonpointer.join('components', 'securitySchemes', name)}",
            node,
            False,
        )
    for name, node in ctx.options.security_schemes.items():
        found[str(name)] = (f"config: security_schemes/{name}", node, True)
    schemes: dict[str, SecurityScheme] = {}
    taken: set[str] = set()
    for name, (where, node, configured) in found.items():
        try:
            scheme = _deref(ctx.document, node, "security scheme") if not configured else node
        except _Skip as skip:
            ctx.warn(where, str(skip))
            continue
        if configured and (problem := _scheme_problem(scheme)) is not None:
            # The operator asked for a credential: leaving it out would send calls without it.
            ctx.issues.append(Issue(Level.ERROR, where, problem))
            continue
        if not isinstance(scheme, dict) or scheme.get("type") not in SCHEME_TYPES:
            ctx.warn(where, "unknown security scheme type; operations that use it are skipped")
            continue
        schemes[name] = _security_scheme(scheme, f"{prefix}_{_env_stem(name)}", taken)
    return schemes


def _scheme_problem(node: Any) -> str | None:
    if not isinstance(node, dict) or node.get("type") not in SCHEME_TYPES:
        return f"unknown security scheme type (one of {', '.join(SCHEME_TYPES)})"
    if node["type"] == "apiKey" and not (
        node.get("in") in ("header", "query", "cookie") and isinstance(node.get("name"), str) and node["name"]
    ):
        return "an apiKey scheme needs `in` (header, query or cookie) and `name`"
    if node["type"] == "http" and not (isinstance(node.get("scheme"), str) and node["scheme"]):
        return "an http scheme needs `scheme` (bearer, basic, ...)"
    return None


# http schemes a static credential cannot answer (they need a challenge-response exchange).
_UNSUPPORTED_HTTP = frozenset({"digest", "negotiate", "ntlm", "hoba", "mutual"})
_ENV_SUFFIX: dict[EnvRole, str] = {
    "value": "API_KEY",
    "token": "TOKEN",
    "username": "USERNAME",
    "password": "PASSWORD",
    "client_id": "CLIENT_ID",
    "client_secret": "CLIENT_SECRET",
    "cert_file": "CERT_FILE",
    "key_file": "KEY_FILE",
    "key_password": "KEY_PASSWORD",
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
    # The client certificate (PEM; its key in KEY_FILE or in the same file) is presented on the TLS
    # connection to the API: bridge/secrets/tls.py.
    return SecurityScheme(
        type="mutualTLS", description=description, env=_env(stem, ("cert_file", "key_file", "key_password"), taken)
    )


def _oauth2(node: Mapping[str, Any], description: str | None, stem: str, taken: set[str]) -> SecurityScheme:
    """A ready access token (``_TOKEN``) always works, whatever the flows; with a client-credentials
    flow the runtime can also fetch tokens itself (``_CLIENT_ID`` + ``_CLIENT_SECRET``)."""
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
        env = _env(stem, ("token", "client_id", "client_secret"), taken)
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
    """Only the schemes the generated tools need (in their security requirements, or filling a
    credential-slot parameter), in declaration order."""
    used = {use.scheme for op in operations for alternative in op.security for use in alternative}
    used |= {p.bound.scheme for op in operations for p in op.params if p.bound is not None and p.bound.scheme}
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
