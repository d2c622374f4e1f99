"""What each serve mode's tool list costs the model before the first call: tools, discovery, code.

    .venv/bin/python -m bench.mode_tokens      -> bench/MODES.md

GitHub's spec (`@octokit/openapi`, pinned in tests/node) and petstore are generated,
then served in process in each mode; the model-visible tokens of the tools/list answer are counted
as every other report counts them (bench/visible.py: o200k_base over the compact JSON of
``{name, description, inputSchema}`` per tool). The server's instructions (said once) are counted
beside them. This is the fixed cost of a mode; the per-task cost (results and programs) is the task
suite's (bench/tasks, bench/TASKS.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
from mcp import Client

from bench.common import BENCH_DIR, GITHUB_SPEC, ROOT, fake_environ
from bench.visible import how_counted, model_visible_tokens, token_counter, wire_dicts

REPORT = BENCH_DIR / "MODES.md"
MODES = ("tools", "discovery", "code")


async def _listed(package: Path, mode: str) -> tuple[list[dict[str, object]], str]:
    from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
    from bridge.serving.package import load_catalogue

    catalogue = load_catalogue(package)
    runtime = build_runtime(catalogue, ServeOptions(), environ=fake_environ(catalogue))
    registry = build_registry(catalogue, runtime, package)
    server = build_bridge_server(
        catalogue,
        registry,
        mode=mode,
        runtime=runtime,
        package_dir=package,  # type: ignore[arg-type]
    )
    async with runtime, Client(server) as client:
        listed = await client.list_tools(cache_mode="bypass")
        instructions = client.instructions
    return wire_dicts(listed.tools), instructions or ""


def main() -> None:
    from generator.generate import generate
    from generator.options import GenerateOptions

    counter = token_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, spec in (("petstore", ROOT / "specs" / "petstore.yaml"), ("github", GITHUB_SPEC)):
            package = Path(tmp) / label
            generate(str(spec), package, GenerateOptions())
            for mode in MODES:
                tools, instructions = anyio.run(_listed, package, mode)
                visible = model_visible_tokens(tools, counter)
                rows.append((label, mode, len(tools), visible, counter.count(instructions)))
    lines = [
        "# The fixed cost of each serve mode",
        "",
        "`python -m bench.mode_tokens` (see its docstring). " + how_counted(counter),
        "",
        "| spec | mode | tools | model-visible tokens of tools/list | tokens of the server's instructions |",
        "| --- | --- | ---: | ---: | ---: |",
        *[f"| {spec} | {mode} | {n} | {tokens:,} | {inst:,} |" for spec, mode, n, tokens, inst in rows],
        "",
    ]
    REPORT.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
