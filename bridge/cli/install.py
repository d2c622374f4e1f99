"""``mcp-bridge install CLIENT PACKAGE``: add a package's server to an MCP client's configuration file.

The entry is the one the package README shows (bridge/contract/clients/entry.py), with the
values of its variables taken from this environment (or the entry already there), never a
placeholder. The file keeps every other entry and key; the old one is copied aside first and the
new one replaces it in one rename, so a crash leaves either file whole. Names only in messages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import click

from bridge.cli.client_files import ClientFileError, default_config_file, merge_entry, read_config, stable_program
from bridge.contract.catalogue import Catalogue
from bridge.contract.clients.entry import CLIENTS, package_variables, server_entry
from bridge.contract.clients.placeholders import looks_like_placeholder
from bridge.contract.clients.start_mode import start_mode
from bridge.secrets.credentials import Credentials
from bridge.tools.errors import BridgeError


@click.command()
@click.argument("client", type=click.Choice(sorted(CLIENTS)))
@click.argument("package", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--config-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The client's configuration file [default: the client's usual one].",
)
@click.option("--name", help="Name of the server entry [default: the package's name].")
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Write the entry even when variables the package needs are not set (they are named; add them later).",
)
def install(client: str, package: Path, config_file: Path | None, name: str | None, allow_missing: bool) -> None:
    """Add PACKAGE's server to CLIENT's MCP configuration, with the variables it needs from this environment."""
    from bridge.serving.package import load_catalogue

    try:
        catalogue = load_catalogue(package)
    except BridgeError as exc:
        raise click.ClickException(str(exc)) from None
    target = config_file or default_config_file(client)
    name = name or catalogue.name
    try:
        existing = _existing_env(target, client, name)
    except ClientFileError as exc:
        raise click.ClickException(str(exc)) from None
    env = _values(catalogue, existing, os.environ)
    placeholders = sorted(key for key, value in env.items() if looks_like_placeholder(value))
    if placeholders:
        raise click.ClickException(
            f"{', '.join(placeholders)}: the value looks like a placeholder, not a real one; "
            "set the real value in the environment and run install again"
        )
    missing = _missing(catalogue, env)
    if missing and not allow_missing:
        raise click.ClickException(
            "not set: "
            + "; ".join(missing)
            + f". Set them and run again, or --allow-missing to add them to {target} later"
        )
    command, *program_args = stable_program()
    mode_args, mode_reason = start_mode(catalogue)
    args = [*program_args, "serve", str(package.resolve()), *mode_args]
    entry = server_entry(client, command, args, env)
    try:
        backup = merge_entry(target, CLIENTS[client].servers_key, name, entry)
    except ClientFileError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(
        f"{CLIENTS[client].label}: server {name!r} written to {target}" + (f" (backup: {backup})" if backup else "")
    )
    if env:
        click.echo("with " + ", ".join(sorted(env)))
    if mode_reason:
        click.echo(f"Started with --mode discovery: {mode_reason}")
    if missing:
        click.echo(f"still to add to its env in {target}: " + "; ".join(missing), err=True)
    click.echo(f"Restart {CLIENTS[client].label} to load it.")


def _existing_env(target: Path, client: str, name: str) -> dict[str, str]:
    servers = read_config(target).get(CLIENTS[client].servers_key)
    entry = servers.get(name) if isinstance(servers, dict) else None
    env = entry.get("env") if isinstance(entry, dict) else None
    return {k: v for k, v in env.items() if isinstance(v, str)} if isinstance(env, dict) else {}


def _values(catalogue: Catalogue, existing: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The package's variables with a value: this environment's, else the entry already in the file."""
    values: dict[str, str] = {}
    names = [var.name for var in package_variables(catalogue)]
    names.append(f"{catalogue.env_prefix}_BASE_URL")
    names += [f"{catalogue.env_prefix}_SERVER_{v.upper()}" for s in catalogue.servers for v in s.variables]
    names.append(f"{catalogue.env_prefix}_CA_BUNDLE")
    for name in dict.fromkeys(names):
        value = environ.get(name) or existing.get(name)
        if value:
            values[name] = value
    return values


def _missing(catalogue: Catalogue, env: Mapping[str, str]) -> list[str]:
    """What a call would still lack: always-needed variables, and credentials of tools no alternative serves."""
    missing = [var.name for var in package_variables(catalogue) if var.required and var.name not in env]
    credentials = Credentials(catalogue.security_schemes, env)
    for entry in catalogue.tools:
        alternatives = entry.binding.security
        if not alternatives or any(all(credentials.configured(u.scheme) for u in alt) for alt in alternatives):
            continue
        for use in alternatives[0]:  # the spec's first choice is the one to name
            reason = credentials.missing(use.scheme)
            if reason is not None and reason not in missing:
                missing.append(reason)
    return missing
