"""The README's first command: generate the bundled example, serve it, and drive it with an MCP client.

Steps: generate ``specs/petstore.yaml`` into ``generated/petstore``; start the embedded pet store
API on 127.0.0.1; spawn ``mcp-bridge serve generated/petstore`` over stdio with the official MCP
client; list the tools and make four calls (a read, a write, one that fails with 404, and one
cancelled mid-flight whose upstream request is seen closed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from bridge.cli.demo_upstream import DEMO_API_KEY, PetStore, serve_pet_store

ROOT = Path(__file__).resolve().parents[2]
SPEC = "specs/petstore.yaml"
PACKAGE = Path("generated/petstore")
CANCEL_AFTER_SECONDS = 1.0


def _show(label: str, result: Any) -> None:
    text = " ".join(getattr(block, "text", f"<{block.type}>") for block in result.content)
    flag = "ERROR " if result.is_error else ""
    print(f"  {label}: {flag}{text[:300]}")


def _generate() -> None:
    from generator.generate import generate
    from generator.options import GenerateOptions

    result = generate(SPEC, PACKAGE, GenerateOptions(name="petstore"))
    print(f"Generated {result.out_dir} from {SPEC}: {len(result.api.operations)} tools")
    for op in result.api.operations:
        hints = op.annotations
        kind = "read-only" if hints.readOnlyHint else ("destructive" if hints.destructiveHint else "write")
        print(f"  {op.tool_name:<18} {op.label:<28} {kind}")


async def _drive(port: int, store: PetStore) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", "serve", str(PACKAGE)],
        env={"PETSTORE_BASE_URL": f"http://127.0.0.1:{port}/v1", "PETSTORE_API_KEY": DEMO_API_KEY},
        cwd=str(ROOT),
    )
    async with Client(params) as client:
        tools = await client.list_tools()
        print(f"\nServing over stdio: {len(tools.tools)} tools listed")
        _show("listPets(status=available)", await client.call_tool("listPets", {"status": "available"}))
        _show("createPet(name=Bella)", await client.call_tool("createPet", {"name": "Bella", "tag": "dog"}))
        _show("getPet(petId=999)", await client.call_tool("getPet", {"petId": 999}))
        _show("getPet(petId='x')", await client.call_tool("getPet", {"petId": "x"}))
        with anyio.move_on_after(CANCEL_AFTER_SECONDS) as scope:
            await client.call_tool("waitForAdoption", {"petId": 1})
        with anyio.fail_after(5):
            await store.waiting_aborted.wait()
        print(f"  waitForAdoption(petId=1): cancelled={scope.cancelled_caught}; upstream saw the request closed")


async def _main() -> None:
    _generate()
    async with serve_pet_store() as (port, store):
        print(f"Embedded pet store API on http://127.0.0.1:{port}/v1")
        await _drive(port, store)
    print("\nUpstream requests:", json.dumps([f"{m} {p}" for m, p in store.requests]))


def main() -> None:
    anyio.run(_main)


if __name__ == "__main__":
    main()
