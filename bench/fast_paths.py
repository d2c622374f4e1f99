"""What the runtime fast paths of bench/FAST_PATHS.md save, in process, on GitHub's ``repos/get`` answer.

    .venv/bin/python -m bench.fast_paths [--rounds 31]

Each pair (the fast path, the path it shortcuts) runs on the same input in the same process,
alternated round by round; a round times a batch of calls with ``time.process_time`` and the
table gives the median microseconds a call. Both answers are compared first: the run stops if
they differ. Input: the 24 KB repository GitHub's spec gives as its example
(bench/github_repo.py) and the output schema the generator makes for ``GET /repos/{owner}/{repo}``;
the catalogue row parses the whole GitHub catalogue. Figures move with the load of the shared
machine: compare the two columns of one run. Writes the section between the markers of
bench/FAST_PATHS.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.common import BENCH_DIR, GITHUB_SPEC, machine_info, md_table, replace_section

BATCH_SECONDS = 0.05


def _per_call(func: Callable[[], Any], calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        func()
    return (time.process_time() - start) / calls * 1e6


def _pair(fast: Callable[[], Any], slow: Callable[[], Any], rounds: int) -> tuple[float, float]:
    start = time.process_time()
    slow()
    calls = max(1, int(BATCH_SECONDS / max(time.process_time() - start, 1e-6)))
    fast_times, slow_times = [], []
    for _ in range(rounds):
        fast_times.append(_per_call(fast, calls))
        slow_times.append(_per_call(slow, calls))
    return statistics.median(fast_times), statistics.median(slow_times)


def _inputs() -> tuple[Any, dict[str, Any], bytes, dict[str, Any], Any]:
    from bench.github_repo import OPERATION, repository
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    spec = json.loads(GITHUB_SPEC.read_text(encoding="utf-8"))
    catalogue, _ = build_catalogue(str(GITHUB_SPEC), GenerateOptions())
    path, method = OPERATION
    tool = next(t for t in catalogue.tools if t.binding.path == path and t.binding.method.lower() == method)
    assert tool.output_schema is not None
    return repository(spec), dict(tool.output_schema), catalogue.model_dump_json().encode(), spec, catalogue


def _tools_list(catalogue: Any, rounds: int) -> list[list[Any]]:
    """Building GitHub's whole tools/list answer: by hand (each tool still checked by the SDK's
    model) against the SDK's dump, per-version sieve and the JSON-RPC writer's dump."""
    import mcp_types as types
    from mcp_types import methods
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from bridge.calls.http_tools import tools_from_catalogue
    from bridge.calls.runtime import HttpRuntime
    from bridge.server.handlers import _checked_wire_data, wire_tool

    runtime = HttpRuntime.create(catalogue, base_url="http://127.0.0.1:9", environ={})
    tools = list(tools_from_catalogue(catalogue, runtime))
    version = HANDSHAKE_PROTOCOL_VERSIONS[-1]

    def ours() -> str:
        return json.dumps({"tools": [_checked_wire_data(t) for t in tools]})

    def sdks() -> str:
        dumped = types.ListToolsResult(tools=[wire_tool(t) for t in tools]).model_dump(
            by_alias=True, mode="json", exclude_none=True
        )
        return json.dumps(methods.serialize_server_result("tools/list", version, dumped))

    assert json.loads(ours()) == json.loads(sdks())
    fast_us, slow_us = _pair(ours, sdks, max(3, rounds // 10))
    name = f"hand-built tools/list (handlers `wire_data`), GitHub's {len(tools):,} tools, {version}"
    return [[name, "the SDK's dump and sieve", f"{fast_us:.0f}", f"{slow_us:.0f}", f"{slow_us / fast_us:.1f}x"]]


def measure(rounds: int) -> list[list[Any]]:
    import copy

    from bridge.request.sendable import _has_non_finite, _non_finite
    from bridge.results import trim
    from bridge.results.trim import TrimSettings, trim_result
    from bridge.secrets.redact import Redactor
    from bridge.secrets.redact_json import redact_json
    from bridge.serving.package import _parsed
    from bridge.tools.schema_compiled import compiled_check
    from bridge.tools.schema_fast import quick_check
    from bridge.tools.schema_validators import compile_validator
    from generator.generate import fewer_collections
    from generator.load.refs import _copy

    answer, schema, catalogue, spec, parsed = _inputs()
    tools_list_rows = _tools_list(parsed, rounds)
    text = json.dumps(answer)
    validator = compile_validator(schema, arguments=False, what="output")
    compiled = compiled_check(schema, arguments=False)
    quick = quick_check(schema)
    assert compiled is not None and quick is not None, "the repos/get schema gets both quick checks"
    assert compiled(answer) and quick(answer) and not list(validator.iter_errors(answer))
    redactor = Redactor(("sk-live-0123456789abcdef", "hunter2-but-longer"))
    assert redactor.leaves_alone(text) and redact_json(answer, redactor) == answer
    limits = TrimSettings().normalised()
    quick_trim = trim_result(answer, limits)
    assert quick_trim.value == trim._trim(dict(answer), limits, frozenset(), [], (), None).value
    assert repr(_parsed(catalogue)) == repr(json.loads(catalogue))
    assert not _has_non_finite(answer) and _non_finite(answer, "body", 0) is None

    pairs: list[tuple[str, str, Callable[[], Any], Callable[[], Any]]] = [
        (
            "compiled quick yes (schema_compiled)",
            "jsonschema's walk",
            lambda: compiled(answer),
            lambda: list(validator.iter_errors(answer)),
        ),
        (
            "quick yes (schema_fast)",
            "jsonschema's walk",
            lambda: quick(answer),
            lambda: list(validator.iter_errors(answer)),
        ),
        (
            "uncut copy (trim_quick)",
            "the full walk (trim_walk)",
            lambda: trim_result(answer, limits),
            lambda: trim._trim(dict(answer), limits, frozenset(), [], (), None),
        ),
        (
            "whole-answer pre-check (Redactor.leaves_alone)",
            "string-by-string walk (redact_json)",
            lambda: redactor.leaves_alone(text),
            lambda: redact_json(answer, redactor),
        ),
        (
            "non-finite test (sendable `_has_non_finite`), the answer as an argument",
            "path-naming walk (`_non_finite`)",
            lambda: _has_non_finite(answer),
            lambda: _non_finite(answer, "body", 0),
        ),
    ]
    rows = []
    for fast_name, slow_name, fast, slow in pairs:
        fast_us, slow_us = _pair(fast, slow, rounds)
        rows.append([fast_name, slow_name, f"{fast_us:.1f}", f"{slow_us:.1f}", f"{slow_us / fast_us:.1f}x"])
    gc.disable()  # as serving parses it (bridge/serving/tuning.py long_lived_objects)
    try:
        fast_us, slow_us = _pair(lambda: _parsed(catalogue), lambda: json.loads(catalogue), max(3, rounds // 10))
    finally:
        gc.enable()
    rows.append(
        [
            f"catalogue parse, pydantic-core (`_parsed`, {len(catalogue) / 1e6:.1f} MB), collector paused",
            "json.loads",
            f"{fast_us:.0f}",
            f"{slow_us:.0f}",
            f"{slow_us / fast_us:.1f}x",
        ]
    )
    with fewer_collections():  # as generate copies it (the collector's cost grows with this process's heap)
        fast_us, slow_us = _pair(lambda: _copy(spec), lambda: copy.deepcopy(spec), max(3, rounds // 10))
    name = f"JSON copy (refs `_copy`), GitHub's spec ({len(json.dumps(spec)) / 1e6:.1f} MB), as generate runs it"
    rows.append([name, "copy.deepcopy", f"{fast_us:.0f}", f"{slow_us:.0f}", f"{slow_us / fast_us:.1f}x"])
    return rows + tools_list_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    args = parser.parse_args()
    rows = measure(args.rounds)
    body = "\n".join(
        [
            f"Written by `python -m bench.fast_paths --rounds {args.rounds}` ({machine_info()}). CPU µs a call,",
            "median of the rounds, both columns alternated in one process, on GitHub's `repos/get` answer",
            "(the last three rows: a tenth of the rounds, on GitHub's whole catalogue, spec and tool list).",
            "",
            md_table(["fast path", "reference", "fast (µs)", "reference (µs)", "ratio"], rows, align="llrrr"),
        ]
    )
    replace_section(BENCH_DIR / "FAST_PATHS.md", "fast-paths", body, "## In-process figures (fast_paths)\n\n")
    print(body)


if __name__ == "__main__":
    main()
