"""The confirmation gate's cost (P70, P56): what every call pays, and what building a form costs.

``python -m bench.confirm_bench`` prints a markdown table of CPU-time medians (of 7 runs of
``LOOPS`` each, in process: the bench machine is shared, wall time measures the neighbours) of:
the gate of a call on a server without ``--confirm`` (every call pays it), the gate of an
uncovered call under ``--confirm`` on a 2026-07-28 request (recorded for a later round: its
arguments digested), and the covered path's work before the user is asked: the request line
built a second time with bound values masked, and the form, for a ``PUT`` with 15 arguments and
for one with 200.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx

from bridge.calls.context import CallContext
from bridge.calls.gate import pass_gate, shown_target
from bridge.confirm.form import message
from bridge.confirm.policy import ConfirmSettings
from bridge.confirm.rounds import Sent, digest, size_of
from bridge.contract.catalogue import ToolEntry

RUNS = 7
LOOPS = 2000
BASE = httpx.URL("http://upstream.test/v2")
FIELDS = [f"field{i:03d}" for i in range(200)]


def _spec() -> dict[str, Any]:
    body = {"type": "object", "properties": {name: {"type": "string"} for name in FIELDS}}
    user_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Accounts", "version": "1"},
        "servers": [{"url": str(BASE)}],
        "paths": {
            "/users/{id}": {
                "get": {"operationId": "getUser", "parameters": [user_id], "responses": {"200": {"description": "ok"}}},
                "put": {
                    "operationId": "updateUser",
                    "parameters": [user_id, {"name": "notify", "in": "query", "schema": {"type": "boolean"}}],
                    "requestBody": {"content": {"application/json": {"schema": body}}},
                    "responses": {"200": {"description": "ok"}},
                },
            }
        },
    }


def _entries() -> dict[str, ToolEntry]:
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "accounts.json"
        path.write_text(json.dumps(_spec()), encoding="utf-8")
        catalogue, _ = build_catalogue(str(path), GenerateOptions(name="accounts"))
    return {entry.name: entry for entry in catalogue.tools}


class _Recording:
    """Like a 2026-07-28 request's confirmer on an uncovered call: digest the arguments, keep the answer."""

    def __init__(self) -> None:
        self.kept: list[Sent] = []

    async def __call__(self, entry: Any, arguments: Mapping[str, Any], target: str | None) -> Any:
        digest(dict(arguments))
        return None

    def sent(self, entry: Any, arguments: Mapping[str, Any], response: Any) -> None:
        self.kept.append(Sent(entry.operation, digest(dict(arguments)), response, size_of(response)))


def _median_us(call: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.process_time()
        for _ in range(LOOPS):
            call()
        times.append((time.process_time() - started) / LOOPS)
    return statistics.median(times) * 1e6


def _gate_us(entry: ToolEntry, settings: ConfirmSettings, context: CallContext) -> float:
    async def loop() -> float:
        times = []
        for _ in range(RUNS):
            started = time.process_time()
            for _ in range(LOOPS):
                await pass_gate(entry, {"id": "u1"}, context, settings=settings, base_url=BASE, bound={})
            times.append((time.process_time() - started) / LOOPS)
        return statistics.median(times) * 1e6

    return anyio.run(loop)


def main() -> None:
    entries = _entries()
    get, put = entries["getUser"], entries["updateUser"]
    few = {"id": "owner-account", "notify": True, **{name: "value " * 8 for name in FIELDS[:13]}}
    many = {"id": "owner-account", **{name: "value " * 8 for name in FIELDS}}
    recording = _Recording()
    rows = [
        ("gate, server without --confirm (every call)", _gate_us(get, ConfirmSettings(), CallContext(surface="b"))),
        (
            "gate, uncovered call under --confirm on 2026-07-28 (arguments digested)",
            _gate_us(get, ConfirmSettings(level="writes"), CallContext(surface="b", confirm=recording)),
        ),
    ]
    for label, arguments in (("15 arguments", few), ("200 arguments", many)):
        target = shown_target(put.binding, arguments, base_url=BASE, operation=put.operation, bound={})
        rows.append(
            (
                f"request line, masked ({label})",
                _median_us(
                    lambda a=arguments: shown_target(put.binding, a, base_url=BASE, operation=put.operation, bound={})
                ),
            )
        )
        rows.append(
            (
                f"form ({label})",
                _median_us(lambda a=arguments, t=target: message(put, a, t, api="Accounts", redact=lambda s: s)),
            )
        )
    print(f"| step | median of {RUNS} x {LOOPS} (µs, CPU) |")
    print("|---|---|")
    for label, value in rows:
        print(f"| {label} | {value:.1f} |")


if __name__ == "__main__":
    main()
