"""Workflows and overlays: what a workflow step costs beside the tool call it makes, and how long overlays take.

``python -m bench.workflow_bench`` prints markdown tables (bench/WORKFLOWS.md) of medians:

- server CPU per call, in process, through the official MCP client in memory and a fake upstream
  answering at once: the ``getItem`` tool, a one-step workflow calling it, and a three-step one
  (so the per-step cost of the runner is the difference, against the tool call it wraps);
- overlay application on a synthetic spec of 2,000 and 20,000 paths (about 40,000 and 400,000
  nodes) for a targeted action, a wildcard one and a descendant-filter one, plus the hostile
  nested-descendant query that the node budget stops.

CPU time of this process (time.process_time), not wall time: the machine is shared.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import yaml

RUNS = 7
CALLS = 200


def _median_cpu(work: Callable[[], Any], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return statistics.median(times)


def _flows() -> dict[str, Any]:
    step = {
        "stepId": "a",
        "operationId": "getItem",
        "parameters": [{"name": "id", "in": "path", "value": "$inputs.id"}],
        "successCriteria": [{"condition": "$statusCode == 200"}],
        "outputs": {"name": "$response.body#/name"},
    }
    three = [dict(step, stepId=s) for s in ("a", "b", "c")]
    inputs = {"type": "object", "properties": {"id": {"type": "integer"}}}
    return {
        "arazzo": "1.0.1",
        "info": {"title": "bench", "version": "1"},
        "sourceDescriptions": [{"name": "shop", "url": "./shop.json"}],
        "workflows": [
            {"workflowId": "one", "inputs": inputs, "steps": [step], "outputs": {"name": "$steps.a.outputs.name"}},
            {"workflowId": "three", "inputs": inputs, "steps": three, "outputs": {"name": "$steps.c.outputs.name"}},
        ],
    }


async def _calls(folder: Path) -> dict[str, float]:
    from mcp import Client

    from bridge.calls.runtime import HttpRuntime
    from bridge.serving.assemble import build_bridge_server, build_registry
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions
    from tests.bridge.fake_upstream import FakeUpstream
    from tests.workflows.harness import ENV, SPEC, UPSTREAM

    (folder / "shop.json").write_text(json.dumps(SPEC))
    (folder / "flows.yaml").write_text(yaml.safe_dump(_flows()))
    catalogue, _ = build_catalogue(str(folder / "shop.json"), GenerateOptions(workflows=(str(folder / "flows.yaml"),)))
    fake = FakeUpstream()
    fake.reply(json_body={"id": 7, "name": "lamp", "price": 1})
    runtime = HttpRuntime.create(catalogue, base_url=UPSTREAM, environ=ENV, transport=fake.transport())
    results: dict[str, float] = {}
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, None), runtime=runtime)
        async with Client(server) as client:
            for name, args in (("getItem", {"id": 7}), ("one", {"id": 7}), ("three", {"id": 7})):
                for _ in range(20):  # warm up
                    await client.call_tool(name, args)
                samples = []
                for _ in range(RUNS):
                    started = time.process_time()
                    for _ in range(CALLS):
                        await client.call_tool(name, args)
                    samples.append((time.process_time() - started) / CALLS * 1000)
                results[name] = statistics.median(samples)
    return results


def _spec(paths: int) -> dict[str, Any]:
    operation = {"operationId": "op", "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                 "responses": {"200": {"description": "ok"}, "500": {"description": "boom"}}}  # fmt: skip
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
            "paths": {f"/p{i}": {"get": json.loads(json.dumps(operation))} for i in range(paths)}}  # fmt: skip


def _overlays() -> list[tuple[str, str, float | None]]:
    from generator.load.overlays.apply import apply_overlays
    from generator.load.overlays.document import Overlay
    from generator.load.reading import SpecError

    rows: list[tuple[str, str, float | None]] = []
    actions = {
        "targeted: $.paths['/p7'].get": {"target": "$.paths['/p7'].get", "update": {"summary": "x"}},
        "wildcard: $.paths.*.get": {"target": "$.paths.*.get", "update": {"x-safe": True}},
        "descendant: $..responses['500']": {"target": "$..responses['500']", "remove": True},
        "filter: $..parameters[?@.name == 'limit']": {
            "target": "$..parameters[?@.name == 'limit']",
            "update": {"description": "page size"},
        },
        "hostile: $..[?@..[?@..*]] (stopped by the budget)": {"target": "$..[?@..[?@..*]]", "update": {"x": 1}},
    }
    for paths in (2_000, 20_000):
        for label, action in actions.items():
            overlay = Overlay("b.yaml", "0" * 64, {"overlay": "1.0.0", "info": {}, "actions": [action]})

            def work(overlay: Overlay = overlay, paths: int = paths) -> None:
                try:
                    apply_overlays(_spec(paths), [overlay])
                except SpecError:
                    pass

            build = _median_cpu(lambda paths=paths: _spec(paths), 3)
            rows.append((f"{paths:,} paths", label, max(_median_cpu(work, 3) - build, 0.0)))
    return rows


def main() -> None:
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        calls = anyio.run(_calls, Path(tmp))
    print(f"Load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}; medians of {RUNS} runs.\n")
    print("| call | server CPU per call (ms) | vs the tool call |\n|---|---|---|")
    for name, label in (("getItem", "tool `getItem`"), ("one", "workflow, 1 step"), ("three", "workflow, 3 steps")):
        print(f"| {label} | {calls[name]:.2f} | {calls[name] / calls['getItem']:.2f}x |")
    per_step = (calls["three"] - calls["one"]) / 2
    print(f"\nEach further step: {per_step:.2f} ms ({per_step / calls['getItem']:.2f}x a tool call).\n")
    print("| spec | action | CPU (ms) |\n|---|---|---|")
    for spec, label, seconds in _overlays():
        print(f"| {spec} | {label} | {seconds * 1000:.0f} |" if seconds is not None else f"| {spec} | {label} | - |")


if __name__ == "__main__":
    main()
