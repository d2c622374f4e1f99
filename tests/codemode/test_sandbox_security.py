"""Hostile programs: each promise of SECURITY.md's code-mode section, proven by one attack.

Every program goes through the whole stack (official client -> run_query/run_code -> sandbox ->
call core -> fake upstream). A refused program is a tool error; the upstream sees no request.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bridge.codemode import RUN_CODE, RUN_QUERY
from bridge.sandbox import SandboxLimits
from tests.codemode.harness import SECRET, code_client, petstore_package, text

pytestmark = pytest.mark.anyio

LIMITS = SandboxLimits(wall_seconds=2.0, memory_bytes=32 * 1024 * 1024, max_calls=5)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return petstore_package(tmp_path_factory.mktemp("hostile"))


# Programs that must fail, each with a word its error must carry (the exception or limit).
HOSTILE = [
    ("while True:\n    pass\n", "longer than"),
    ("x = 'a' * (10 ** 10)\n", "MemoryError"),
    ("x = [0] * (10 ** 9)\n", "MemoryError"),
    ("def f(n):\n    return f(n + 1)\nf(0)\n", "RecursionError"),
    ("import os\nos.listdir('/')\n", "Error"),
    ("import os\nos.environ['PETSTORE_API_KEY']\n", "Error"),
    ("import os\nos.getenv('PETSTORE_API_KEY')\n", "Error"),
    ("import socket\n", "socket"),
    ("import subprocess\n", "subprocess"),
    ("import urllib.request\n", "urllib"),
    ("import http.client\n", "http"),
    ("import ctypes\n", "ctypes"),
    ("import importlib\nimportlib.import_module('os')\n", "importlib"),
    ("import asyncio\nawait asyncio.open_connection('127.0.0.1', 80)\n", "open_connection"),
    ("import sys\nsys.modules\n", "sys"),
    ("open('/etc/passwd').read()\n", "open"),
    ("__import__('os')\n", "__import__"),
    ("().__class__.__base__.__subclasses__()\n", "__subclasses__"),
    ("getPet.__globals__\n", "Error"),
    ("exec(\"import os\\nos.listdir('/')\")\n", "Error"),
    ("eval(\"open('/etc/passwd')\")\n", "Error"),
]


@pytest.mark.parametrize(("program", "word"), HOSTILE)
async def test_hostile_program_is_refused_without_touching_the_host(package: Path, program: str, word: str) -> None:
    async with code_client(package, limits=LIMITS) as (client, fake):
        started = time.monotonic()
        result = await client.call_tool(RUN_CODE, {"code": program})
        elapsed = time.monotonic() - started
    assert result.is_error, text(result)
    assert word in text(result)
    assert SECRET not in text(result) and "/work" not in text(result)
    assert fake.requests == []
    assert elapsed < LIMITS.wall_seconds + 3


async def test_ten_thousand_api_calls_stop_at_the_call_limit(package: Path) -> None:
    program = (
        "n = 0\n"
        "for i in range(10000):\n"
        "    try:\n"
        "        await getPet(petId=1)\n"
        "    except ApiError:\n"
        "        n += 1\n"
        "n\n"
    )
    async with code_client(package, limits=LIMITS) as (client, fake):
        fake.reply(json_body={"id": 1, "name": "Rex"})
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert result.is_error
    assert "more than 5 API calls" in text(result) or "Error" in text(result)
    assert len(fake.requests) == LIMITS.max_calls


async def test_gathered_calls_beyond_the_limit_are_not_sent(package: Path) -> None:
    program = "import asyncio\nawait asyncio.gather(*[getPet(petId=i) for i in range(1, 50)])\n"
    async with code_client(package, limits=LIMITS) as (client, fake):
        fake.reply(json_body={"id": 1, "name": "Rex"})
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert result.is_error
    assert len(fake.requests) <= LIMITS.max_calls


async def test_a_write_from_run_query_is_refused(package: Path) -> None:
    for program in ("await deletePet(petId=1)\n", "f = deletePet\nawait f(petId=1)\n"):
        async with code_client(package, limits=LIMITS) as (client, fake):
            result = await client.call_tool(RUN_QUERY, {"code": program})
        assert result.is_error
        assert fake.requests == []


async def test_a_huge_return_value_is_cut_to_the_result_budget(package: Path) -> None:
    async with code_client(package, limits=LIMITS) as (client, _):
        result = await client.call_tool(RUN_QUERY, {"code": "'x' * (8 * 1024 * 1024)\n"})
    if not result.is_error:
        assert result.structured_content is not None and "_truncated" in result.structured_content
    assert len(text(result)) < 100_000


async def test_printed_output_is_bounded(package: Path) -> None:
    async with code_client(package, limits=LIMITS) as (client, _):
        result = await client.call_tool(RUN_QUERY, {"code": "for i in range(100000):\n    print('x' * 100)\n1\n"})
    assert len(text(result)) < 100_000
