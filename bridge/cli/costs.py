"""``mcp-bridge inspect``: what a package's tool list costs the model, tool by tool.

For each tool: its annotations, the tokens the model pays for it before any call (name +
description + input schema, as compact JSON: what clients put in the prompt) and the tokens of
its output schema, plus the bytes of the whole tool as ``tools/list`` sends it. Token counts use
``o200k_base`` when the ranks can be found offline (:mod:`bridge.cli.tokens`); otherwise they are
estimates and say so. ``--json`` prints the same as one JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bridge.cli.tokens import TokenCounter, load_counter
from bridge.contract.catalogue import Catalogue, ServeMode
from bridge.contract.clients.start_mode import DISCOVERY_HINT_TOKENS, estimated_tool_list_tokens, listed_tool

__all__ = ["Report", "ToolCost", "inspect_target", "model_visible_tokens", "print_report", "report_json"]

PIPE_WIDTH = 10_000  # rich folds at 80 columns when it cannot ask a terminal
_DUMMY_BASE_URL = "http://127.0.0.1:9"  # never contacted: inspect builds the tools, calls nothing


@dataclass(frozen=True, slots=True)
class ToolCost:
    name: str
    operation: str | None
    annotations: dict[str, bool]
    tokens: int  # name + description + inputSchema
    output_tokens: int
    bytes: int  # the whole tool as tools/list sends it


@dataclass(slots=True)
class Report:
    target: str
    api: str
    mode: ServeMode
    encoding: str
    exact: bool
    counter: str
    tools: list[ToolCost] = field(default_factory=list)
    instructions_tokens: int = 0
    operations: int = 0
    # The one count the generate hint, the package README's client configs and `install` give (and
    # decide discovery mode by): the tools/list payload at characters / 4 (start_mode.py). 0: not tools mode.
    start_estimate: int = 0

    @property
    def total_tokens(self) -> int:
        return sum(t.tokens for t in self.tools)

    @property
    def total_output_tokens(self) -> int:
        return sum(t.output_tokens for t in self.tools)

    @property
    def total_bytes(self) -> int:
        return sum(t.bytes for t in self.tools)

    def largest(self, count: int) -> list[ToolCost]:
        return sorted(self.tools, key=lambda t: (-t.tokens, t.name))[:count]


def model_visible_tokens(catalogue: Catalogue, counter: TokenCounter) -> int:
    """Tokens of the tools/list payload the catalogue's tools make (what the model pays up front):
    each tool as it is sent, its shown input schema and its output schema included."""
    return sum(counter.count_json(listed_tool(entry)) for entry in catalogue.tools)


def _load(target: str) -> tuple[Catalogue, Path | None]:
    from bridge.serving.assemble import load_target

    return load_target(target)


def inspect_target(target: str, *, mode: str | None = None, npm_dirs: Sequence[Path] = ()) -> Report:
    """Measure ``target`` (a package folder or a spec file) as ``serve`` would present it."""
    from bridge.server.handlers import wire_tool  # the exact tools/list form
    from bridge.server.info import server_identity
    from bridge.serving.assemble import ServeOptions, build_registry, build_runtime, server_instructions

    catalogue, package_dir = _load(target)
    chosen = mode or catalogue.mode
    served_mode: ServeMode = "discovery" if chosen == "discovery" else "code" if chosen == "code" else "tools"
    runtime = build_runtime(catalogue, ServeOptions(base_url=_DUMMY_BASE_URL), environ={})
    registry = build_registry(catalogue, runtime, package_dir)
    code = None
    if served_mode == "discovery":
        from bridge.modes.discovery import discovery_registry

        served = discovery_registry(registry, catalogue)
    elif served_mode == "code":
        from bridge.modes.codemode import CodeMode, code_registry
        from bridge.modes.sandbox import Sandbox
        from bridge.modes.stubsource import stub_source

        # The tool list only: the sandbox's workers start with a program, and none runs here.
        code = CodeMode(catalogue, registry, runtime, stub_source(package_dir, catalogue.tools), Sandbox())
        served = code_registry(code)
    else:
        served = registry
    counter = load_counter(npm_dirs=npm_dirs)
    report = Report(
        target=target,
        api=f"{catalogue.title} {catalogue.api_version}".strip(),
        mode=served_mode,
        encoding=counter.encoding,
        exact=counter.exact,
        counter=counter.source,
        operations=len(registry),
        start_estimate=estimated_tool_list_tokens(catalogue) if served_mode == "tools" else 0,
        instructions_tokens=counter.count(
            server_instructions(
                catalogue, served_mode, len(registry), code=code, about=server_identity(catalogue).about
            )
        ),
    )
    for tool in served:
        wire = wire_tool(tool).model_dump(mode="json", by_alias=True, exclude_none=True)
        visible = counter.count(tool.name) + counter.count(tool.description) + counter.count_json(wire["inputSchema"])
        output = counter.count_json(wire["outputSchema"]) if "outputSchema" in wire else 0
        raw = json.dumps(wire, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        annotations = {k: bool(v) for k, v in (tool.annotations or {}).items() if k.endswith("Hint")}
        meta = tool.meta or {}
        operation = meta.get("mcp-bridge/operation")
        report.tools.append(
            ToolCost(
                name=tool.name,
                operation=operation if isinstance(operation, str) else None,
                annotations=annotations,
                tokens=visible,
                output_tokens=output,
                bytes=len(raw),
            )
        )
    return report


def report_json(report: Report) -> str:
    data: dict[str, Any] = {
        "target": report.target,
        "api": report.api,
        "mode": report.mode,
        "operations": report.operations,
        "encoding": report.encoding,
        "exact": report.exact,
        "counter": report.counter,
        "total_tokens": report.total_tokens,
        "total_output_tokens": report.total_output_tokens,
        "instructions_tokens": report.instructions_tokens,
        "total_bytes": report.total_bytes,
        "start_estimate_tokens": report.start_estimate,
        "tools": [asdict(t) for t in report.tools],
    }
    return json.dumps(data, ensure_ascii=False, indent=1)


def _flags(annotations: dict[str, bool]) -> str:
    if annotations.get("readOnlyHint"):
        kind = "read-only"
    elif annotations.get("destructiveHint", True):
        kind = "destructive"
    else:
        kind = "writes"
    extra = []
    if annotations.get("idempotentHint"):
        extra.append("idempotent")
    if annotations.get("openWorldHint", True):
        extra.append("open-world")
    return ", ".join([kind, *extra])


def print_report(report: Report, *, largest: int = 10, console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        if not console.is_terminal:  # piped or redirected: one line per tool, names never folded
            console = Console(width=PIPE_WIDTH)
    how = "exact" if report.exact else "ESTIMATED"
    table = Table(
        title=f"{report.api}: {len(report.tools)} tools ({report.mode} mode), {report.encoding} tokens ({how})",
        show_lines=False,
    )
    table.add_column("tool", overflow="fold")
    table.add_column("operation", overflow="fold")
    table.add_column("annotations")
    table.add_column("tokens", justify="right")
    table.add_column("output schema", justify="right")
    table.add_column("bytes", justify="right")
    for tool in report.tools:
        table.add_row(
            tool.name,
            tool.operation or "",
            _flags(tool.annotations),
            f"{tool.tokens:,}",
            f"{tool.output_tokens:,}" if tool.output_tokens else "",
            f"{tool.bytes:,}",
        )
    table.add_section()
    table.add_row(
        "total",
        f"{report.operations} operations",
        "",
        f"{report.total_tokens:,}",
        f"{report.total_output_tokens:,}",
        f"{report.total_bytes:,}",
    )
    console.print(table)
    console.print(
        f"Model-visible (name + description + inputSchema): {report.total_tokens:,} tokens; "
        f"server instructions: {report.instructions_tokens:,} tokens; output schemas: "
        f"{report.total_output_tokens:,} tokens; tools/list: {report.total_bytes:,} bytes."
    )
    if report.start_estimate:
        console.print(
            f"The count generate's hint, the package README and `mcp-bridge install` use: about "
            f"{report.start_estimate:,} tokens (the tools/list payload, characters / 4; over "
            f"{DISCOVERY_HINT_TOKENS:,} they start it in discovery mode)."
        )
    if not report.exact:
        from rich.markup import escape  # the note names an extra in brackets, `[tokens]`, which is not markup

        console.print(f"[yellow]Token counts are estimates[/yellow] ({escape(report.counter)}).")
    if largest and report.tools:
        console.print(f"Largest {min(largest, len(report.tools))} tools:")
        for tool in report.largest(largest):
            console.print(f"  {tool.name}: {tool.tokens:,} tokens ({tool.bytes:,} bytes)")
