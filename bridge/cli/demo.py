"""The README's first command: generate the bundled example, serve it, and drive it with an MCP client.

Steps: generate ``specs/petstore.yaml`` into ``generated/petstore``; start the embedded pet store
API on 127.0.0.1; spawn ``mcp-bridge serve generated/petstore`` over stdio with the official MCP
client; list the tools and make four calls (a read, a write, one that fails with 404, and one
cancelled mid-flight whose upstream request is seen closed).

From an installed wheel (``mcp-bridge demo`` outside a checkout) the spec is the copy shipped as
package data, and the package is generated into a temporary folder that goes when the demo ends.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import click

from bridge.cli.demo_upstream import DEMO_API_KEY, PetStore, serve_pet_store

ROOT = Path(__file__).resolve().parents[2]
SPEC = "specs/petstore.yaml"
PACKAGE = Path("generated/petstore")
SHIPPED_SPEC = Path(__file__).resolve().with_name("demo_petstore.yaml")  # specs/petstore.yaml, as package data
CANCEL_AFTER_SECONDS = 1.0


def _show(label: str, result: Any) -> None:
    text = " ".join(getattr(block, "text", f"<{block.type}>") for block in result.content)
    flag = "ERROR " if result.is_error else ""
    print(f"  {label}: {flag}{text[:300]}")


def _generate(spec: str, package: Path) -> None:
    from generator.generate import generate
    from generator.options import GenerateOptions

    result = generate(spec, package, GenerateOptions(name="petstore"))
    print(f"Generated {result.out_dir} from {spec}: {len(result.api.operations)} tools")
    for op in result.api.operations:
        hints = op.annotations
        kind = "read-only" if hints.readOnlyHint else ("destructive" if hints.destructiveHint else "write")
        print(f"  {op.tool_name:<18} {op.label:<28} {kind}")


async def _drive(port: int, store: PetStore, package: Path) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", "serve", str(package.resolve())],
        env={"PETSTORE_BASE_URL": f"http://127.0.0.1:{port}/v1", "PETSTORE_API_KEY": DEMO_API_KEY},
        cwd=str(package.resolve().parent),
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


async def _main(spec: str, package: Path) -> None:
    _generate(spec, package)
    async with serve_pet_store() as (port, store):
        print(f"Embedded pet store API on http://127.0.0.1:{port}/v1")
        await _drive(port, store, package)
    print("\nUpstream requests:", json.dumps([f"{m} {p}" for m, p in store.requests]))


def in_checkout(folder: Path) -> bool:
    """``folder`` is this project's checkout: the demo writes the golden record's petstore there."""
    return (folder / SPEC).is_file() and (folder / "generated").is_dir() and (folder / "pyproject.toml").is_file()


def main() -> None:
    here = Path.cwd()
    if in_checkout(here):
        anyio.run(_main, SPEC, PACKAGE)
        return
    with tempfile.TemporaryDirectory(prefix="mcp-bridge-demo-") as folder:
        anyio.run(_main, str(SHIPPED_SPEC), Path(folder) / "petstore")


@click.command("demo")
def demo() -> None:
    """Generate the bundled pet store example, serve it against an embedded API, and drive it with
    the official MCP client (in a checkout it writes generated/petstore; elsewhere a temporary folder)."""
    main()


if __name__ == "__main__":
    main()
