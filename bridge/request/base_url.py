"""The base URL every request of an API goes to: configuration first, else the spec's first server.

Server variables come from configuration only and are restricted to the spec's ``enum``; the
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
) -> httpx.URL:
    """The base URL every request of the API goes to.

    ``override`` (``--base-url`` or configuration) wins. Otherwise the first server of the
    catalogue is used, its ``{variables}`` filled from ``variables`` or their defaults; a value
    outside a variable's ``enum`` is refused. ``env_var`` names the environment variable that
    also sets the base URL, for error messages.

    Raises:
        ConfigurationError: no usable absolute http(s) URL results.
    """
    how = "--base-url" + (f" (or {env_var})" if env_var else "")
    if override:
        return _check_base(httpx.URL(override), f"The base URL given with {how}")
    if not servers:
        raise ConfigurationError(f"The API description lists no server: set the API's base URL with {how}.")
    server = servers[0]
    unknown = sorted(set(variables) - set(server.variables))
    if unknown:
        known = ", ".join(sorted(server.variables)) or "none"
        raise ConfigurationError(f"Unknown server variable(s) {', '.join(unknown)}; the server defines: {known}.")

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        spec = server.variables.get(name)
        if spec is None:
            raise ConfigurationError(f"The server URL {server.url!r} uses {{{name}}}, which it does not define.")
        value = variables.get(name, spec.default)
        if spec.enum and value not in spec.enum:
            raise ConfigurationError(
                f"Server variable {name}={value!r} is not allowed; choose one of: {', '.join(spec.enum)}."
            )
        return quote(value, safe=":/.-_~")

    filled = re.sub(r"\{([^{}]+)\}", fill, server.url)
    url = httpx.URL(filled)
    if url.is_relative_url or not url.host:
        raise ConfigurationError(
            f"The API's server URL {server.url!r} is relative, so the bridge does not know which host to call: "
            f"set the API's base URL with {how}, e.g. https://api.example.com{url.path if url.path != '/' else ''}."
        )
    return _check_base(url, f"The server URL {server.url!r}")
