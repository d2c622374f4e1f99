"""The per-call profile reads py-spy's and callgrind's output the way they write it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import instructions, profile_serve
from bench.profile_serve import BRIDGE_GLUE, OTHER_THREADS, by_package, by_step, package_of, parse_raw

SITE = "/venv/lib/python3.11/site-packages"
RAW = "\n".join(
    [
        # the main thread, inside the bridge's tools/call handler: argument validation, then httpx
        "<module> (/usr/lib/python3.11/runpy.py);call_tool (/w/bridge/server/handlers.py);"
        "OperationCall.validate (/w/bridge/calls/operation.py:100);validate (/w/bridge/tools/validation.py:10) 3",
        f"<module> (/usr/lib/python3.11/runpy.py);call_tool (/w/bridge/server/handlers.py);"
        f"OperationCall.send (/w/bridge/calls/operation.py);AsyncClient.send ({SITE}/httpx/_client.py) 5",
        # the SDK serialising the result, and a stdio file worker
        f"<module> (/usr/lib/python3.11/runpy.py);ServerRunner._serialize ({SITE}/mcp/server/runner.py) 2",
        "Thread._bootstrap (/usr/lib/python3.11/threading.py);WorkerThread.run (/x/anyio/to_thread.py) 1",
        "not a line",
    ]
)


def test_a_raw_line_is_a_stack_from_the_outermost_frame_and_its_count() -> None:
    samples = parse_raw(RAW)
    assert [count for _, count in samples] == [3, 5, 2, 1]
    stack, _ = samples[0]
    assert stack[0] == ("<module>", "/usr/lib/python3.11/runpy.py")
    assert stack[-1] == ("validate", "/w/bridge/tools/validation.py")  # the line number is not part of the file


def test_samples_go_to_the_package_of_their_innermost_frame() -> None:
    packages = by_package(parse_raw(RAW))
    assert packages == {
        "bridge: argument validation": 3,
        "httpx + httpcore": 5,
        "MCP SDK": 2,
        OTHER_THREADS: 1,
    }


def test_a_step_counts_every_sample_with_its_function_on_the_stack() -> None:
    steps = by_step(parse_raw(RAW))
    assert steps["bridge tools/call handler (all below)"] == 8
    assert steps["  argument validation"] == 3
    assert steps["  send (bridge upstream + httpx)"] == 5
    assert steps["SDK: result serialisation (dump + per-version check)"] == 2
    assert steps["  credentials"] == 0


@pytest.mark.parametrize(
    ("filename", "package"),
    [
        ("/w/bridge/secrets/redact.py", "bridge: result (parse, redact, trim, output check)"),  # a module moved
        ("/w/bridge/serving/unknown_module.py", BRIDGE_GLUE),
        (f"{SITE}/pydantic_core/core_schema.py", "pydantic"),
        (f"{SITE}/mcp_types/_types.py", "MCP SDK"),
        ("/usr/lib/python3.11/asyncio/base_events.py", "event loop (asyncio, anyio)"),
        ("/usr/lib/python3.11/enum.py", "other (stdlib)"),
    ],
)
def test_files_map_to_packages_by_module_name(filename: str, package: str) -> None:
    assert package_of(filename) == package


def test_the_shares_are_scaled_to_the_measured_cpu() -> None:
    run = profile_serve.CaseProfile("s", "c", 10, cpu_ms=2.2)
    profile_serve._fill(run, parse_raw(RAW))
    assert run.samples == 11
    assert sum(run.packages_ms.values()) == pytest.approx(2.2)
    assert run.packages_ms["httpx + httpcore"] == pytest.approx(1.0)


def test_a_callgrind_dump_is_found_by_its_trigger_and_gives_its_total(tmp_path: Path) -> None:
    (tmp_path / "cg.1.1").write_text("desc: Trigger: dump other\nevents: Ir\nsummary: 5\n", encoding="utf-8")
    (tmp_path / "cg.1.2").write_text("desc: Trigger: dump wanted\nevents: Ir\nsummary: 123456\n", encoding="utf-8")
    assert instructions._counted(tmp_path, "wanted") == 123456
    assert instructions._counted(tmp_path, "missing") is None


def test_the_added_instructions_are_the_bridge_less_both_floors() -> None:
    data = {
        "servers": {
            "mcp-bridge github": {"repos/get": 10e6},
            instructions.FLOOR_KEY: {"constant": 2e6},
            instructions.DIRECT_KEY: {"repos/get": 3e6},
        }
    }
    assert instructions.added(data, "github", "repos/get") == (10e6, 2e6, 3e6, 5e6)
    assert instructions.added(data, "petstore", "getPet")[3] != instructions.added(data, "petstore", "getPet")[3]


def test_every_bridge_step_names_a_function_that_exists() -> None:
    # The steps match samples by file stem and function name: a moved or renamed module makes its
    # step read 0 silently (the layout of issue 21 did).
    root = Path(__file__).resolve().parents[2] / "bridge"
    stems = {path.stem: path for path in root.rglob("*.py")}
    for label, module, function in profile_serve.STEPS:
        if module in ("runner", "stdio"):  # the SDK's
            continue
        assert module in stems, (label, module)
        assert f"def {function}(" in stems[module].read_text(encoding="utf-8"), (label, module, function)
    for step, modules in profile_serve.BRIDGE_STEPS.items():
        assert any(m in stems for m in modules), step
