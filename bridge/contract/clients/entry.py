"""One MCP client's server entry for a package: the README snippets and ``mcp-bridge install`` build it here.

Both need the same answer to "which variables does this package read": a snippet that left out a
``bind:`` or ``headers:`` variable, or the base URL of a spec whose server is relative, gave a
server whose every call failed. Contract-level so the generator (README) and the CLI (install)
share it; it reads only the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bridge.contract.catalogue import Catalogue

# Shown in a README snippet where the reader must put a value; `install` never writes one of these.
PLACEHOLDER_PREFIX = "<set me: "


@dataclass(frozen=True, slots=True)
class ClientShape:
    """Where a client keeps its MCP servers and how an entry looks there."""

    label: str
    servers_key: str  # "mcpServers", or VS Code's "servers"
    typed: bool  # the entry carries "type": "stdio"
    where: str  # the usual file, as the README names it


CLIENTS: dict[str, ClientShape] = {
    "claude-desktop": ClientShape(
        "Claude Desktop",
        "mcpServers",
        False,
        "`claude_desktop_config.json`: `~/Library/Application Support/Claude/` on macOS, `~/.config/Claude/` on Linux",
    ),
    "cursor": ClientShape("Cursor", "mcpServers", False, "`~/.cursor/mcp.json`, or `.cursor/mcp.json` in a project"),
    "vscode": ClientShape("VS Code", "servers", True, "`.vscode/mcp.json`"),
    "claude-code": ClientShape("Claude Code", "mcpServers", True, "`.mcp.json` in the project"),
}


@dataclass(frozen=True, slots=True)
class PackageVariable:
    """An environment variable the package reads, why, and whether serving fails without it."""

    name: str
    what: str
    required: bool


def base_url_variable(catalogue: Catalogue) -> str:
    return f"{catalogue.env_prefix}_BASE_URL"


def needs_base_url(catalogue: Catalogue) -> bool:
    """No server, or a relative one (``/v1``): nothing to call until ``<PREFIX>_BASE_URL`` is set."""
    return not catalogue.servers or "://" not in catalogue.servers[0].url


def package_variables(catalogue: Catalogue) -> list[PackageVariable]:
    """Every variable a client entry should carry: base URL when needed, credentials, bound values, headers.

    ``required`` marks those every call needs (a bound value, a header, the base URL); a
    credential's need depends on which security alternative a call uses, so the CLI decides it.
    """
    found: dict[str, PackageVariable] = {}

    def add(name: str, what: str, required: bool) -> None:
        if name not in found:
            found[name] = PackageVariable(name, what, required)

    if needs_base_url(catalogue):
        add(base_url_variable(catalogue), "base URL of the API", True)
    for scheme_name, scheme in sorted(catalogue.security_schemes.items()):
        if scheme.supported:
            for var in scheme.env:
                add(var.name, f"{_ROLES.get(var.role, var.role)} ({scheme_name})", False)
    for entry in catalogue.tools:
        body = entry.binding.body
        bound = [p.bound for p in entry.binding.params] + [f.bound for f in (body.bound_fields if body else ())]
        for value in bound:
            if value is not None and value.env and not value.scheme:
                add(value.env, "bound parameter", True)
    for header in catalogue.headers:
        if header.value.env:
            add(header.value.env, f"header {header.name}", True)
    return list(found.values())


_ROLES = {
    "value": "API key",
    "client_id": "client id",
    "client_secret": "client secret",
    "cert_file": "client certificate file",
    "key_file": "private key file",
    "key_password": "private key password",
}


def server_entry(client: str, command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """The JSON object one client keeps for one server (``env`` left out when empty)."""
    entry: dict[str, Any] = {"type": "stdio"} if CLIENTS[client].typed else {}
    entry.update(command=command, args=args)
    if env:
        entry["env"] = dict(sorted(env.items()))
    return entry


def readme_snippets(name: str, catalogue: Catalogue, command: str, args: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(where it goes, the client file's JSON) for each client, with ``<set me: ...>`` where a value goes.

    ``args`` are the ``serve`` arguments, the start mode (clients/start_mode.py) already added."""
    env = {var.name: f"{PLACEHOLDER_PREFIX}{var.what}>" for var in package_variables(catalogue)}
    return [
        (f"{shape.label} ({shape.where})", {shape.servers_key: {name: server_entry(client, command, args, env)}})
        for client, shape in CLIENTS.items()
    ]
