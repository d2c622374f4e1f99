"""A program's final value and printed output: bounded before redaction, built off the event loop (P41).

A model can make a program return a 10 MB string, a list of 200,000 objects, a string of
escapes redaction would decode, or a list nested 100,000 deep, and send it again and again: none
of it may hold other sessions' calls, fail the program, or give a result a client cannot parse.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

import bridge.modes.program_result
from bridge.contract.result_shape import MAX_RESULT_DEPTH
from bridge.modes.codemode import RUN_CODE, SEARCH
from bridge.modes.program_result import Printed, program_result
from bridge.results.trim import TrimSettings
from bridge.secrets.redact import Redactor
from bridge.secrets.redact_json import REDACT_SLACK
from tests.bridge.modes.codemode.harness import code_client, code_server, petstore_package, text

pytestmark = pytest.mark.anyio

# The red team's values: each fits the 64 MiB heap, and each held every session for 0.3-1.6 s.
BIG_VALUES = {
    "10 MB string": "'x' * 10_000_000",
    "200,000 strings": "[str(i) for i in range(200_000)]",
    "100,000 small objects": "[{1: i} for i in range(100_000)]",
    "7 million escapes": "'%2' * 7_000_000",
    "a map of 50,000 long keys": "{('k%d' % i) * 40: i for i in range(50_000)}",
    "100,000 levels": "x = []\nfor i in range(100_000):\n    x = [x]\nx",
}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return petstore_package(tmp_path_factory.mktemp("results"))


@pytest.mark.parametrize("program", BIG_VALUES.values(), ids=BIG_VALUES.keys())
async def test_a_big_final_value_never_holds_another_sessions_call(
    package: Path, program: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Making the big result waits (in whatever thread makes it) until the other session's call is
    # answered: on the event loop that wait would hold the quick call back, so the big one would
    # end first.
    making_big = anyio.Event()
    quick_done = threading.Event()
    threads: list[bool] = []
    real = bridge.modes.program_result.bounded_copy

    def gated(value: Any, *args: Any, **kwargs: Any) -> Any:
        on_loop = threading.current_thread() is threading.main_thread()
        threads.append(on_loop)
        if on_loop:
            making_big.set()
        else:
            anyio.from_thread.run_sync(making_big.set)
            quick_done.wait(timeout=10)
        return real(value, *args, **kwargs)

    monkeypatch.setattr(bridge.modes.program_result, "bounded_copy", gated)
    finished: list[str] = []
    async with code_server(package) as (server, _), Client(server) as big, Client(server) as quick:

        async def run_big() -> None:
            result = await big.call_tool(RUN_CODE, {"code": program})
            assert not result.is_error, text(result)
            assert result.structured_content is not None and "_truncated" in result.structured_content
            finished.append("big")

        async def run_quick() -> None:
            await making_big.wait()
            result = await quick.call_tool(SEARCH, {"query": "pet"})
            assert not result.is_error
            finished.append("quick")
            quick_done.set()

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run_big)
                tg.start_soon(run_quick)
    assert threads == [False]  # made in a worker thread
    assert finished == ["quick", "big"]


@pytest.mark.parametrize("program", BIG_VALUES.values(), ids=BIG_VALUES.keys())
async def test_redaction_of_a_final_value_never_reads_more_than_the_cap_and_some_slack(
    package: Path, program: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    longest: list[int] = [0]
    real = Redactor.__call__

    def measured(self: Redactor, value: str) -> str:
        longest[0] = max(longest[0], len(value))
        return real(self, value)

    monkeypatch.setattr(Redactor, "__call__", measured)
    async with code_client(package) as (client, _):
        with anyio.fail_after(60):
            result = await client.call_tool(RUN_CODE, {"code": program})
    assert not result.is_error, text(result)
    assert longest[0] <= TrimSettings().max_string + REDACT_SLACK  # type: ignore[operator]
    assert len(text(result).encode()) <= TrimSettings().max_bytes  # type: ignore[operator]


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, list | dict) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        depth += 1
    return depth


async def test_a_deeply_nested_value_is_emptied_past_the_result_depth_with_a_note(package: Path) -> None:
    async with code_client(package) as (client, _):
        result = await client.call_tool(RUN_CODE, {"code": BIG_VALUES["100,000 levels"]})
    assert not result.is_error, text(result)
    structured = result.structured_content
    assert structured is not None
    assert _depth(structured["result"]) == MAX_RESULT_DEPTH - 1  # the root object is the first level
    assert json.loads(text(result)) == structured
    (note,) = structured["_truncated"]
    assert f"nested deeper than {MAX_RESULT_DEPTH} levels" in note


async def test_printing_past_the_budget_is_cut_with_a_note_and_the_value_kept(package: Path) -> None:
    program = "for i in range(200_000):\n    print('line', i)\n'done'\n"
    async with code_client(package) as (client, _):
        result = await client.call_tool(RUN_CODE, {"code": program})
    assert not result.is_error, text(result)
    structured = result.structured_content
    assert structured is not None and structured["result"] == "done"
    assert structured["printed"].startswith("line 0\nline 1\n")
    total = sum(len(f"line {i}\n") for i in range(200_000))
    assert f"printed: text cut to 4000 of {total} characters" in structured["_truncated"]


def test_printed_output_over_the_budget_without_trimming_is_cut_here_with_a_note() -> None:
    printed = Printed()
    for i in range(100_000):
        printed("stdout", f"line {i}\n")
    result = program_result("done", printed, str, None)
    assert result.structured_content is not None
    shown = result.structured_content["printed"]
    assert len(shown) < 17_000 and shown.endswith(f"of {printed.total:,} characters]")


SECRET = "pet-secret-4d1c9e"  # the harness's API key


@settings(max_examples=60, deadline=None)
@given(
    at=st.sampled_from([3990, 3995, 3999, 4000, 4000 + REDACT_SLACK - 10, 4000 + REDACT_SLACK - 1])
    | st.integers(0, 40_000)
)
def test_a_secret_anywhere_in_a_long_value_leaves_no_prefix(at: int) -> None:
    from bridge.contract.catalogue import EnvVar, SecurityScheme
    from bridge.secrets.credentials import Credentials

    scheme = SecurityScheme(type="apiKey", location="header", param_name="X-K", env=(EnvVar(role="value", name="K"),))
    redact = Credentials({"k": scheme}, {"K": SECRET}).redact
    value = {"result": "a" * at + SECRET + "b" * 50_000, "many": ["c" * at + SECRET] * 300}
    printed = Printed()
    printed("stdout", "p" * at + SECRET + "q" * 10)
    result = program_result(value, printed, redact, TrimSettings())
    out = text(result) + json.dumps(result.structured_content)
    assert SECRET[:8] not in out
