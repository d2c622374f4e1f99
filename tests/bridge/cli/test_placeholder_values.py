"""A README placeholder left in a client's config (``<set me: ...>``, ``<value>``) is never sent as the credential."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from bridge.cli.demo_upstream import serve_pet_store

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "generated" / "petstore"
WAIT = 120.0

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("value", ["<set me: API key (apiKey)>", "<value>", " <api key> "])
async def test_a_bracketed_placeholder_is_treated_as_unset_and_named(value: str) -> None:
    async with serve_pet_store() as (port, store):
        store.add("Rex", "dog")
        environ = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
        environ.update({"PETSTORE_BASE_URL": f"http://127.0.0.1:{port}/v1", "PETSTORE_API_KEY": value})
        command = [sys.executable, "-m", "bridge", "call", str(PACKAGE), "getPet", "--args", '{"petId": 1}']
        run = lambda: subprocess.run(command, capture_output=True, text=True, env=environ, timeout=WAIT, cwd=ROOT)  # noqa: E731
        done = await anyio.to_thread.run_sync(run)
    assert "PETSTORE_API_KEY" in done.stdout + done.stderr and "placeholder" in done.stderr
    assert store.requests == []  # nothing went out with the placeholder as the key
