"""The base URL every request of an API goes to: configuration first, else one of the spec's servers.

The first server unless the operator chooses another (``--server N``). Server variables are the
chosen server's; they come from configuration only and are restricted to the spec's ``enum``; the
result is an absolute http(s) URL without credentials, query or fragment, or a
:class:`ConfigurationError` that says how to set one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from urllib.parse import quote

import httpx

from bridge.contract.catalogue import ServerSpec
from bridge.tools.errors import ConfigurationError

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: httpx.URL) -> tuple[str, str, int]:
    """``(scheme, host, port)`` with the default port filled in."""
    return url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme, 0)


def _check_base(url: httpx.URL, source: str) -> httpx.URL:
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigurationError(f"{source} must be an absolute http:// or https:// URL.")
    if url.userinfo:
        raise ConfigurationError(
            f"{source} must not contain a user name or password; configure credentials through the "
            "environment variables of the API's security schemes."
        )
    if url.query or url.fragment:
        raise ConfigurationError(f"{source} must not contain a query string or fragment.")
    return url


def resolve_base_url(
    servers: Sequence[ServerSpec],
    *,
    override: str | None,
    variables: Mapping[str, str],
    env_var: str | None = None,
    server: int | None = None,
) -> httpx.URL:
    """The base URL every request of the API goes to.

    ``override`` (``--base-url`` or configuration) wins. Otherwise server number ``server`` of
    the catalogue (counted from 1; the first when None) is used, its ``{variables}`` filled from
    ``variables`` or their defaults; a value outside a variable's ``enum`` is refused, and so is
    a variable the server does not define. ``env_var`` names the environment variable that also
    sets the base URL, for error messages.

    Raises:
        ConfigurationError: no usable absolute http(s) URL results.
    """
    how = "--base-url" + (f" (or {env_var})" if env_var else "")
    if override:
        return _check_base(httpx.URL(override), f"The base URL given with {how}")
    if not servers:
        raise ConfigurationError(f"The API description lists no server: set the API's base URL with {how}.")
    chosen = choose_server(servers, server)
    unknown = sorted(set(variables) - set(chosen.variables))
    if unknown:
        known = ", ".join(sorted(chosen.variables)) or "none"
        others = [n for n, s in enumerate(servers, 1) if set(unknown) <= set(s.variables) and s is not chosen]
        hint = (
            f" Server {others[0]} ({servers[others[0] - 1].url}) defines them: choose it with --server {others[0]}."
            if others
            else ""
        )
        raise ConfigurationError(
            f"Unknown server variable(s) {', '.join(unknown)}; the server {chosen.url!r} defines: {known}.{hint}"
        )

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        spec = chosen.variables.get(name)
        if spec is None:
            raise ConfigurationError(f"The server URL {chosen.url!r} uses {{{name}}}, which it does not define.")
        value = variables.get(name, spec.default)
        if not value and _in_authority(chosen.url, name):
            raise ConfigurationError(
                f"The server URL {chosen.url!r} needs {{{name}}}, which has no default: set it with "
                f"--server-var {name}=VALUE."
            )
        if spec.enum and value not in spec.enum:
            raise ConfigurationError(
                f"Server variable {name}={value!r} is not allowed; choose one of: {', '.join(spec.enum)}."
            )
        return quote(value, safe=":/.-_~")

    filled = re.sub(r"\{([^{}]+)\}", fill, chosen.url)
    url = httpx.URL(filled)
    if url.is_relative_url or not url.host:
        raise ConfigurationError(
            f"The API's server URL {chosen.url!r} is relative, so the bridge does not know which host to call: "
            f"set the API's base URL with {how}, e.g. https://api.example.com{url.path if url.path != '/' else ''}."
        )
    return _check_base(url, f"The server URL {chosen.url!r}")


def choose_server(servers: Sequence[ServerSpec], number: int | None) -> ServerSpec:
    """Server ``number`` (from 1) of ``servers``, the first when None; a number out of range is refused."""
    if number is None:
        return servers[0]
    if not 1 <= number <= len(servers):
        listing = "; ".join(f"{n}: {s.url}" for n, s in enumerate(servers, 1))
        raise ConfigurationError(f"--server {number} is not one of the spec's servers ({listing}).")
    return servers[number - 1]


def _in_authority(template: str, name: str) -> bool:
    """Whether ``{name}`` is part of the template's host (an empty value there leaves no host)."""
    rest = template.partition("://")[2] or template
    return "{" + name + "}" in rest.partition("/")[0]
