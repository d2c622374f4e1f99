"""Rendering the intermediate model into the files of a package (thin jinja templates)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

import jinja2

from bridge.catalogue import CATALOGUE_FILE, CATALOGUE_FORMAT, Catalogue, stub_entries
from bridge.runtime_requirements import requirements_txt
from bridge.stubs import STUBS_FILE
from bridge.version import bridge_version
from generator.ir import Api
from generator.issues import Issue, Level
from generator.pysafe import py_str
from generator.stubs import stubs_with_warnings
from generator.write import MANIFEST_FILE, PackageFiles

TEMPLATES = ("server.py", "hooks.py", "README.md", "__init__.py")
REQUIREMENTS_FILE = "requirements.txt"  # the slim install: what serving this package needs


@dataclass(frozen=True, slots=True)
class RunCommand:
    """How the package's README tells a person and an MCP client to start the server.

    The golden record is rendered with the defaults (``mcp-bridge serve generated/<name>``) so it
    is byte-identical on every machine; the CLI passes this run's absolute program and folder.
    """

    program: tuple[str, ...] = ("mcp-bridge",)  # or (python, "-m", "bridge")
    package: str | None = None  # None: generated/<name>
    absolute: bool = False  # True: the package's real absolute folder, known once the target is

    def args(self, api_name: str) -> list[str]:
        return [*self.program[1:], "serve", self.package or f"generated/{api_name}"]


DEFAULT_RUN = RunCommand()


def dump_json(value: Any) -> bytes:
    return (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def catalogue_json(catalogue: Catalogue) -> bytes:
    data = catalogue.model_dump(mode="json", exclude_defaults=True)
    return dump_json({"format": CATALOGUE_FORMAT, **data})


def manifest_tools(api: Api, catalogue: Catalogue | None = None) -> dict[str, str]:
    """Tool name -> what it runs ("GET /pets", or "workflow <id>"), by name."""
    tools = {op.tool_name: op.label for op in api.operations}
    for flow in catalogue.workflows if catalogue is not None else ():
        tools[flow.name] = flow.operation
    return dict(sorted(tools.items()))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("generator", "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    # Spec text reaches generated Python only through py_str: a string literal can't become code.
    env.filters["py_str"] = py_str
    env.filters["md_cell"] = _md_cell
    return env


def _md_cell(value: object) -> str:
    text = " ".join(str(value or "").split())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def render_package(
    api: Api,
    catalogue: Catalogue,
    *,
    spec_source: str,
    spec_sha256: str,
    run: RunCommand = DEFAULT_RUN,
    overlays: tuple[tuple[str, str], ...] = (),
    workflows: tuple[tuple[str, str], ...] = (),
) -> PackageFiles:
    """The files of ``api``'s package; ``catalogue`` is what the runtime will serve."""
    args = run.args(api.name)
    context = {
        "api": api,
        "catalogue": catalogue,
        "spec_source": spec_source,
        "generator_version": bridge_version(),
        "env_vars": _env_vars(catalogue),
        "serve_command": shlex.join([run.program[0], *args]),
        "client_configs": _client_configs(api.name, catalogue, run.program[0], args),
    }
    env = _environment()
    package = PackageFiles()
    for name in TEMPLATES:
        text = env.get_template(f"{name}.jinja").render(**context)
        target = package.user_files if name == "hooks.py" else package.files
        target[name] = text.encode("utf-8")
    package.files[CATALOGUE_FILE] = catalogue_json(catalogue)
    requirements = requirements_txt(catalogue.mode, workflows=bool(catalogue.workflows))
    package.files[REQUIREMENTS_FILE] = requirements.encode("utf-8")
    stubs, notes = stubs_with_warnings(list(stub_entries(catalogue)))
    for note in notes:
        package.issues.append(Issue(Level.WARNING, STUBS_FILE, note))
    package.files[STUBS_FILE] = stubs.encode("utf-8")
    # The manifest lists what the tool wrote, so regenerating removes only those files.
    package.files[MANIFEST_FILE] = dump_json(
        {
            "name": api.name,
            "generator": f"mcp-bridge {bridge_version()}",
            "spec": {"source": spec_source, "sha256": spec_sha256},
            # Overlays applied to the spec, in order (only when there are some: older manifests stay as they were).
            **({"overlays": [{"source": name, "sha256": digest} for name, digest in overlays]} if overlays else {}),
            **({"workflows": [{"source": name, "sha256": digest} for name, digest in workflows]} if workflows else {}),
            "files": sorted([*package.files, MANIFEST_FILE]),
            "tools": manifest_tools(api, catalogue),
        }
    )
    return package


def _client_configs(name: str, catalogue: Catalogue, program: str, args: list[str]) -> list[tuple[str, str]]:
    """(where it goes, JSON) for Claude Desktop, Cursor and VS Code; json.dumps does the quoting."""
    env = {var.name: f"<{var.role}>" for scheme in catalogue.security_schemes.values() for var in scheme.env}
    if not catalogue.servers:  # no default base URL: the client must give one
        env = {f"{catalogue.env_prefix}_BASE_URL": "https://api.example.com", **env}
    server: dict[str, Any] = {"command": program, "args": args}
    if env:
        server["env"] = dict(sorted(env.items()))
    mcp_servers = json.dumps({"mcpServers": {name: server}}, indent=2, ensure_ascii=False)
    vscode = json.dumps({"servers": {name: {"type": "stdio", **server}}}, indent=2, ensure_ascii=False)
    return [
        ("Claude Desktop (`claude_desktop_config.json`)", mcp_servers),
        ("Cursor (`~/.cursor/mcp.json`, or `.cursor/mcp.json` in a project)", mcp_servers),
        ("VS Code (`.vscode/mcp.json`)", vscode),
    ]


def _env_vars(catalogue: Catalogue) -> list[tuple[str, str]]:
    rows = [(f"{catalogue.env_prefix}_BASE_URL", "Base URL of the API (overrides the spec's servers)")]
    for scheme_name, scheme in sorted(catalogue.security_schemes.items()):
        for var in scheme.env:
            kind = f"{scheme.type}, {scheme.http_scheme}" if scheme.http_scheme else scheme.type
            rows.append((var.name, f"`{scheme_name}` ({kind}): {var.role}"))
    bound: dict[str, list[str]] = {}
    for tool in catalogue.tools:
        for param in tool.binding.params:
            if param.bound is not None and param.bound.env:
                bound.setdefault(param.bound.env, []).append(f"`{param.wire}` ({param.location})")
    for name, uses in bound.items():
        rows.append((name, "bound parameter " + ", ".join(dict.fromkeys(uses)) + " (a secret)"))
    return rows
