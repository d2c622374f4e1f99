"""Rendering the intermediate model into the files of a package (thin jinja templates)."""

from __future__ import annotations

import functools
import json
import shlex
from dataclasses import dataclass
from typing import Any

import jinja2
import pydantic
import pydantic_core

from bridge.contract.catalogue import (
    CA_BUNDLE_SUFFIX,
    CATALOGUE_FILE,
    CATALOGUE_FORMAT,
    Catalogue,
    SecurityScheme,
    ToolEntry,
    stub_entries,
)
from bridge.contract.clients.entry import readme_snippets
from bridge.contract.clients.start_mode import start_mode
from bridge.contract.runtime_requirements import requirements_txt
from bridge.contract.stubs import STUBS_FILE
from bridge.contract.version import bridge_version
from generator.emit.pysafe import py_str
from generator.emit.stubs import stubs_with_warnings
from generator.emit.write import MANIFEST_FILE, PackageFiles
from generator.issues import Issue, Level
from generator.parse.ir import Api

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


_TOOLS_SLOT = "\x00tools\x00"


def catalogue_json(catalogue: Catalogue) -> bytes:
    """``catalogue.json``: exactly :func:`dump_json` of the whole catalogue, written one tool at a time.

    Tools share schema objects in memory (a component used by 400 operations is one dict); dumped
    whole, every share became a copy at once, and a 400-operation API with deeply nested bodies
    needed 640 MB for a 64 MB file.
    """
    if not catalogue.tools:
        return dump_json({"format": CATALOGUE_FORMAT, **catalogue.model_dump(mode="json", exclude_defaults=True)})
    data = catalogue.model_dump(mode="json", exclude_defaults=True, exclude={"tools"})
    head = dump_json({"format": CATALOGUE_FORMAT, **_with_tools_slot(data)})
    adapter = _tool_adapter()
    before, after = head.split(json.dumps(_TOOLS_SLOT).encode())
    chunks = [before, b"[\n"]
    for number, tool in enumerate(catalogue.tools):
        text = _indented(adapter.dump_python(tool, mode="json", exclude_defaults=True))
        chunks.append(b"\n".join(b"  " + line for line in text.split(b"\n")))
        chunks.append(b",\n" if number < len(catalogue.tools) - 1 else b"\n")
    chunks += [b" ]", after]
    return b"".join(chunks)


def _indented(value: Any) -> bytes:
    """``json.dumps(value, indent=1, ensure_ascii=False)`` in UTF-8, by pydantic-core's encoder.

    The standard library encodes with ``indent`` in pure Python (its C encoder is for compact
    output only): 1.3 s of a 1,000-operation spec's 34 MB catalogue, against 0.1 s here. The
    bytes are the same but for exponents below ten, written ``1e-7`` where json writes ``1e-07``;
    non-finite numbers stay ``NaN``/``Infinity`` as json writes them.
    """
    return pydantic_core.to_json(value, indent=1, inf_nan_mode="constants")


def _with_tools_slot(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the slot where the tools go, in the catalogue's field order."""
    out: dict[str, Any] = {}
    for name in Catalogue.model_fields:
        if name == "tools":
            out["tools"] = _TOOLS_SLOT
        elif name in data:
            out[name] = data[name]
    return out


@functools.cache
def _tool_adapter() -> pydantic.TypeAdapter[ToolEntry]:
    return pydantic.TypeAdapter(ToolEntry)


def manifest_tools(api: Api, catalogue: Catalogue | None = None) -> dict[str, str]:
    """Tool name -> what it runs ("GET /pets", or "workflow <id>"), by name."""
    tools = {op.tool_name: op.label for op in api.operations}
    for flow in catalogue.workflows if catalogue is not None else ():
        tools[flow.name] = flow.operation
    return dict(sorted(tools.items()))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("generator.emit", "templates"),
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
    mode_args, mode_reason = start_mode(catalogue)
    context = {
        "api": api,
        "catalogue": catalogue,
        "spec_source": spec_source,
        "generator_version": bridge_version(),
        "env_vars": _env_vars(catalogue),
        "serve_command": shlex.join([run.program[0], *args]),
        "client_configs": _client_configs(api.name, catalogue, run.program[0], [*args, *mode_args]),
        "start_mode_reason": mode_reason,
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
            "env_prefix": api.env_prefix,
            "generator": f"mcp-bridge {bridge_version()}",
            "spec": {"source": spec_source, "sha256": spec_sha256},
            # Which API this is, so `generate -o` onto another API's package is refused (write.same_api).
            "api": api_identity(api),
            # Overlays applied to the spec, in order (only when there are some: older manifests stay as they were).
            **({"overlays": [{"source": name, "sha256": digest} for name, digest in overlays]} if overlays else {}),
            **({"workflows": [{"source": name, "sha256": digest} for name, digest in workflows]} if workflows else {}),
            "files": sorted([*package.files, MANIFEST_FILE]),
            "tools": manifest_tools(api, catalogue),
        }
    )
    return package


def api_identity(api: Api) -> dict[str, object]:
    """What tells one API from another in a manifest: its title and its servers' URL templates."""
    return {"title": api.title, "servers": [server.url for server in api.servers]}


def _client_configs(name: str, catalogue: Catalogue, program: str, args: list[str]) -> list[tuple[str, str]]:
    """(where it goes, JSON) for each client, built by the code `mcp-bridge install` uses; json.dumps quotes."""
    return [
        (where, json.dumps(config, indent=2, ensure_ascii=False))
        for where, config in readme_snippets(name, catalogue, program, args)
    ]


def _env_vars(catalogue: Catalogue) -> list[tuple[str, str]]:
    rows = [(f"{catalogue.env_prefix}_BASE_URL", "Base URL of the API (overrides the spec's servers)")]
    slots: dict[str, list[str]] = {}
    bound: dict[str, list[str]] = {}
    for tool in catalogue.tools:
        for param in tool.binding.params:
            if param.bound is not None and param.bound.env:
                target = slots if param.bound.scheme else bound
                target.setdefault(param.bound.env, []).append(f"`{param.wire}` ({param.location})")
        for field_ in tool.binding.body.bound_fields if tool.binding.body is not None else ():
            if field_.bound is not None and field_.bound.env:
                bound.setdefault(field_.bound.env, []).append(f"`{field_.wire}` (body)")
    for scheme_name, scheme in sorted(catalogue.security_schemes.items()):
        for var in scheme.env:
            role = _ROLE_TEXT.get(var.role, var.role)
            if scheme.type == "oauth2" and var.role == "token" and scheme.token_url:
                role = "a ready access token (when set, the client credentials are not used)"
            what = f"`{scheme_name}` ({_scheme_kind(scheme)}): {role}"
            if var.name in slots:
                what += "; also fills the parameter " + ", ".join(dict.fromkeys(slots[var.name])) + " wherever declared"
            rows.append((var.name, what))
    for name, uses in bound.items():
        rows.append((name, "bound parameter " + ", ".join(dict.fromkeys(uses)) + " (a secret)"))
    for header in catalogue.headers:
        if header.value.env:
            rows.append((header.value.env, f"header `{header.name}` sent on every request (a secret)"))
    rows.append(
        (
            f"{catalogue.env_prefix}_{CA_BUNDLE_SUFFIX}",
            "PEM file of the CAs the API's TLS certificate must chain to (a private CA; default: the system store)",
        )
    )
    return rows


_ROLE_TEXT = {
    "value": "the API key",
    "token": "the token",
    "username": "user name",
    "password": "password",
    "client_id": "client id (client-credentials grant: the bridge fetches and refreshes tokens)",
    "client_secret": "client secret",
    "cert_file": "PEM file of the client certificate (with its key, unless the key file is set)",
    "key_file": "PEM file of the certificate's private key",
    "key_password": "password of an encrypted private key",
}


def _scheme_kind(scheme: SecurityScheme) -> str:
    if scheme.type == "apiKey":
        return f"API key in {scheme.location} `{scheme.param_name}`"
    if scheme.type == "http":
        return f"HTTP {scheme.http_scheme}"
    if scheme.type == "oauth2":
        return "OAuth2: a ready access token, or client id and secret" if scheme.token_url else "OAuth2 access token"
    if scheme.type == "openIdConnect":
        return "OpenID Connect access token"
    return "mutual TLS client certificate"
