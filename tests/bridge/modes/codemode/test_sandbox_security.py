"""Hostile programs: each promise of SECURITY.md's code-mode section, proven by one attack.

Every program goes through the whole stack (official client -> run_query/run_code -> sandbox ->
call core -> fake upstream). A refused program is a tool error; the upstream sees no request.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from bridge.modes.codemode import RUN_CODE, RUN_QUERY
from bridge.modes.sandbox import SandboxLimits
from tests.bridge.modes.codemode.harness import SECRET, code_client, petstore_package, text

pytestmark = pytest.mark.anyio

LIMITS = SandboxLimits(wall_seconds=2.0, memory_bytes=32 * 1024 * 1024, max_calls=5)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return petstore_package(tmp_path_factory.mktemp("hostile"))


# Programs that must fail, each with the reason its error must give (the checker's, the sandbox's
# or the limit's), never just any error.
HOSTILE = [
    ("while True:\n    pass\n", "The program ran longer than 2 s and was stopped."),
    ("x = 'a' * (10 ** 10)\n", "MemoryError: memory limit exceeded"),
    ("x = [0] * (10 ** 9)\n", "MemoryError: memory limit exceeded"),
    ("def f(n):\n    return f(n + 1)\nf(0)\n", "RecursionError: maximum recursion depth exceeded"),
    ("import os\nos.listdir('/')\n", "PermissionError: Permission denied: '/'"),
    ("import os\nos.environ['PETSTORE_API_KEY']\n", "RuntimeError: 'os.environ' is not supported in this environment"),
    ("import os\nos.getenv('PETSTORE_API_KEY')\n", "RuntimeError: 'os.getenv' is not supported in this environment"),
    ("import socket\n", "error[unresolved-import]: Cannot resolve imported module `socket`"),
    ("import subprocess\n", "error[unresolved-import]: Cannot resolve imported module `subprocess`"),
    ("import urllib.request\n", "error[unresolved-import]: Cannot resolve imported module `urllib.request`"),
    ("import http.client\n", "error[unresolved-import]: Cannot resolve imported module `http.client`"),
    ("import ctypes\n", "error[unresolved-import]: Cannot resolve imported module `ctypes`"),
    ("import importlib\nimportlib.import_module('os')\n", "Cannot resolve imported module `importlib`"),
    (
        "import asyncio\nawait asyncio.open_connection('127.0.0.1', 80)\n",
        "error[unresolved-attribute]: Module `asyncio` has no member `open_connection`",
    ),
    ("import sys\nsys.modules\n", "error[unresolved-attribute]: Module `sys` has no member `modules`"),
    ("open('/etc/passwd').read()\n", "error[unresolved-reference]: Name `open` used when not defined"),
    ("__import__('os')\n", "error[unresolved-reference]: Name `__import__` used when not defined"),
    ("().__class__.__base__.__subclasses__()\n", "error[unresolved-attribute]: Attribute `__subclasses__`"),
    ("getPet.__globals__\n", "AttributeError: 'function' object has no attribute '__globals__'"),
    ("exec(\"import os\\nos.listdir('/')\")\n", "PermissionError: Permission denied: '/'"),
    ("eval(\"open('/etc/passwd')\")\n", "PermissionError: Permission denied: '/etc/passwd'"),
    ('exec("import socket")\n', "ModuleNotFoundError: No module named 'socket'"),
    ("eval(\"__import__('os')\")\n", "NameError: name '__import__' is not defined"),
]

# The same attacks with the type checker told to look away (`# type: ignore`): the sandbox itself
# refuses each one at run time.
UNCHECKED = [
    ("import socket  # type: ignore\n", "ModuleNotFoundError: No module named 'socket'"),
    ("import subprocess  # type: ignore\n", "ModuleNotFoundError: No module named 'subprocess'"),
    ("import urllib.request  # type: ignore\n", "ModuleNotFoundError: No module named 'urllib'"),
    ("import ctypes  # type: ignore\n", "ModuleNotFoundError: No module named 'ctypes'"),
    ("open('/etc/passwd').read()  # type: ignore\n", "PermissionError: Permission denied: '/etc/passwd'"),
    ("__import__('os')  # type: ignore\n", "NameError: name '__import__' is not defined"),
    (
        "().__class__.__base__.__subclasses__()  # type: ignore\n",
        "AttributeError: 'tuple' object has no attribute '__class__'",
    ),
]


@pytest.mark.parametrize(("program", "reason"), HOSTILE + UNCHECKED)
async def test_hostile_program_is_refused_without_touching_the_host(package: Path, program: str, reason: str) -> None:
    async with code_client(package, limits=LIMITS) as (client, fake):
        with anyio.fail_after(LIMITS.wall_seconds + 20):  # a bound on the test, not a timing assertion
            result = await client.call_tool(RUN_CODE, {"code": program})
    assert result.is_error, text(result)
    assert reason in text(result), text(result)
    assert SECRET not in text(result) and "/work" not in text(result)
    assert fake.requests == []


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
    # The refused calls it caught are suspensions too: the loop stops at the sandbox's limit.
    assert "RuntimeError: suspension limit 120 exceeded" in text(result), text(result)
    assert len(fake.requests) == LIMITS.max_calls


async def test_gathered_calls_beyond_the_limit_are_not_sent(package: Path) -> None:
    program = "import asyncio\nawait asyncio.gather(*[getPet(petId=i) for i in range(1, 50)])\n"
    async with code_client(package, limits=LIMITS) as (client, fake):
        fake.reply(json_body={"id": 1, "name": "Rex"})
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert result.is_error
    assert "OSError: API call limit reached: a program may make at most 5 calls." in text(result)
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
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    assert result.structured_content["_truncated"] == ["result: text cut to 4000 of 8388608 characters"]
    assert len(text(result)) < 100_000


async def test_printed_output_is_bounded(package: Path) -> None:
    async with code_client(package, limits=LIMITS) as (client, _):
        result = await client.call_tool(RUN_QUERY, {"code": "for i in range(100000):\n    print('x' * 100)\n1\n"})
    assert not result.is_error, text(result)  # printing past the budget is cut, not a failure
    assert result.structured_content is not None and result.structured_content["result"] == 1
    assert "printed: text cut to 4000 of 10100000 characters" in result.structured_content["_truncated"]
    assert len(text(result)) < 100_000
