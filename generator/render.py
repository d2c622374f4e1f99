"""Rendering the intermediate model into the files of a package (thin jinja templates)."""

from __future__ import annotations

import json
import logging
from concurrent.futures import Executor
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import jinja2

from bridge.binding import CATALOGUE_FILE, CATALOGUE_FORMAT, Catalogue, ToolEntry
from bridge.stubs import STUBS_FILE
from generator.ir import Api
from generator.models import PARALLEL_MODELS_TOOLS, render_model_modules
from generator.stubs import stubs_with_warnings
from generator.write import MANIFEST_FILE, PackageFiles

TEMPLATES = ("server.py", "hooks.py", "README.md", "__init__.py")
logger = logging.getLogger(__name__)


def generator_version() -> str:
    try:
        return version("mcp-bridge")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def catalogue_from_api(api: Api) -> Catalogue:
    tools = tuple(
        ToolEntry(
            name=op.tool_name,
            title=op.title,
            description=op.tool_description,
            input_schema=op.input_schema,
            output_schema=op.output_schema,
            annotations=op.annotations,
            binding=op.binding,
        )
        for op in api.operations
    )
    return Catalogue(
        name=api.name,
        title=api.title,
        api_version=api.version,
        env_prefix=api.env_prefix,
        servers=api.servers,
        security_schemes=api.security_schemes,
        tools=tools,
    )


def dump_json(value: Any) -> bytes:
    return (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def catalogue_json(catalogue: Catalogue) -> bytes:
    data = catalogue.model_dump(mode="json", exclude_defaults=True)
    return dump_json({"format": CATALOGUE_FORMAT, **data})


def manifest_tools(api: Api) -> dict[str, str]:
    return {op.tool_name: op.label for op in sorted(api.operations, key=lambda o: o.tool_name)}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("generator", "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    # Spec text reaches generated Python only through repr(): a string literal can't become code.
    env.filters["pyrepr"] = lambda value: repr(str(value))
    env.filters["md_cell"] = _md_cell
    return env


def _md_cell(value: object) -> str:
    text = " ".join(str(value or "").split())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def render_package(
    api: Api, catalogue: Catalogue, *, spec_source: str, spec_sha256: str, models: bool = True
) -> PackageFiles:
    """The files of ``api``'s package; ``catalogue`` is what the runtime will serve."""
    context = {
        "api": api,
        "catalogue": catalogue,
        "spec_source": spec_source,
        "generator_version": generator_version(),
        "env_vars": _env_vars(catalogue),
    }
    env = _environment()
    package = PackageFiles()
    for name in TEMPLATES:
        text = env.get_template(f"{name}.jinja").render(**context)
        target = package.user_files if name == "hooks.py" else package.files
        target[name] = text.encode("utf-8")
    package.files[CATALOGUE_FILE] = catalogue_json(catalogue)
    package.files[MANIFEST_FILE] = dump_json(
        {
            "name": api.name,
            "generator": f"mcp-bridge {generator_version()}",
            "spec": {"source": spec_source, "sha256": spec_sha256},
            "tools": manifest_tools(api),
        }
    )
    # api.pyi (code mode's typed stubs) is another datamodel-code-generator run: on a big API the
    # three runs share two processes, the longest (api.pyi's) submitted first.
    entries = list(catalogue.tools)
    if models and len(entries) >= PARALLEL_MODELS_TOOLS:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=2) as pool:
            future = pool.submit(stubs_with_warnings, entries)
            _add_models(package, catalogue, pool)
            stubs, notes = future.result()
    else:
        if models:
            _add_models(package, catalogue)
        stubs, notes = stubs_with_warnings(entries)
    for note in notes:
        logger.warning("api.pyi: %s", note)
    package.files[STUBS_FILE] = stubs.encode("utf-8")
    return package


def _add_models(package: PackageFiles, catalogue: Catalogue, pool: Executor | None = None) -> None:
    wire_tools: list[dict[str, Any]] = []
    for tool in catalogue.tools:
        wire: dict[str, Any] = {"name": tool.name, "inputSchema": tool.input_schema}
        if tool.output_schema is not None:
            wire["outputSchema"] = tool.output_schema
        wire_tools.append(wire)
    for path, source in render_model_modules(wire_tools, pool).items():
        package.files[path] = source.encode("utf-8")


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
