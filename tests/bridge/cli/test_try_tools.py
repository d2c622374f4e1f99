"""``mcp-bridge list`` and ``mcp-bridge call`` as a user runs them: the real CLI against a loopback API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from bridge.cli.demo_upstream import DEMO_API_KEY, serve_pet_store

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "generated" / "petstore"
WAIT = 120.0

pytestmark = pytest.mark.anyio


async def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    environ = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    environ.update(env or {})
    command = [sys.executable, "-m", "bridge", *args]
    run = lambda: subprocess.run(command, capture_output=True, text=True, env=environ, timeout=WAIT, cwd=ROOT)  # noqa: E731
    return await anyio.to_thread.run_sync(run)


async def test_list_shows_every_tool_with_its_kind_and_required_arguments() -> None:
    done = await _cli("list", str(PACKAGE))
    assert done.returncode == 0, done.stderr
    assert "getPet  [read-only]" in done.stdout and "petId*: integer" in done.stdout
    assert "deletePet  [destructive]" in done.stdout
    as_json = await _cli("list", str(PACKAGE), "--json")
    names = {tool["name"] for tool in json.loads(as_json.stdout)}
    assert {"listPets", "getPet", "createPet", "deletePet"} <= names
    assert all(tool["name"] in done.stdout for tool in json.loads(as_json.stdout))


async def test_list_in_discovery_mode_shows_the_discovery_tools() -> None:
    done = await _cli("list", str(PACKAGE), "--mode", "discovery")
    assert done.returncode == 0, done.stderr
    assert "search_operations" in done.stdout and "getPet" not in done.stdout


async def test_call_sends_one_request_with_the_operators_credential_and_prints_the_result() -> None:
    async with serve_pet_store() as (port, store):
        store.add("Rex", "dog")
        env = {"PETSTORE_BASE_URL": f"http://127.0.0.1:{port}/v1", "PETSTORE_API_KEY": DEMO_API_KEY}
        done = await _cli("call", str(PACKAGE), "getPet", "--args", '{"petId": 1}', env=env)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["isError"] is False and shown["structuredContent"]["name"] == "Rex"
    assert store.requests == [("GET", "/v1/pets/1")]
    assert DEMO_API_KEY not in done.stdout + done.stderr


async def test_a_bad_argument_is_a_tool_error_naming_the_field_and_nothing_is_sent() -> None:
    async with serve_pet_store() as (port, store):
        env = {"PETSTORE_BASE_URL": f"http://127.0.0.1:{port}/v1", "PETSTORE_API_KEY": DEMO_API_KEY}
        done = await _cli("call", str(PACKAGE), "getPet", "--args", '{"petId": "one"}', env=env)
    assert done.returncode == 1
    shown = json.loads(done.stdout)
    assert shown["isError"] is True and "petId" in shown["content"][0]["text"]
    assert store.requests == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("call", "generated/petstore", "getPet", "--args", "{petId: 1}"), "not JSON"),
        (("call", "generated/petstore", "getPet", "--args", "[1]"), "JSON object"),
        (("list", "no/such/package"), "no/such/package"),
    ],
)
async def test_a_usage_mistake_is_one_message_and_no_traceback(args: tuple[str, ...], said: str) -> None:
    done = await _cli(*args)
    assert done.returncode != 0
    assert said in done.stderr and "Traceback" not in done.stderr
