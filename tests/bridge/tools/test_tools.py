from __future__ import annotations

from typing import Any

import pytest

from bridge.tools.errors import ToolDefinitionError
from bridge.tools.registry import Tool, ToolContext, ToolRegistry


async def _noop(args: dict[str, Any], ctx: ToolContext) -> None:
    return None


@pytest.mark.parametrize("name", ["", "a" * 129, "GET /pets/{id}", "naïve", "a b"])
def test_invalid_tool_name_fails_at_registration(name: str) -> None:
    with pytest.raises(ToolDefinitionError):
        ToolRegistry([Tool(name=name, run=_noop)])


@pytest.mark.parametrize("name", ["a", "a" * 128, "list_pets", "pets.get-v2"])
def test_valid_tool_names_register(name: str) -> None:
    assert name in ToolRegistry([Tool(name=name, run=_noop)])


def test_duplicate_tool_name_fails_at_registration() -> None:
    registry = ToolRegistry([Tool(name="x", run=_noop)])
    with pytest.raises(ToolDefinitionError):
        registry.add(Tool(name="x", run=_noop))


def test_replace_overrides_an_existing_tool() -> None:
    registry = ToolRegistry([Tool(name="x", run=_noop, description="old")])
    registry.add(Tool(name="x", run=_noop, description="new"), replace=True)
    tool = registry.get("x")
    assert tool is not None and tool.description == "new"


def test_input_schema_must_be_an_object() -> None:
    with pytest.raises(ToolDefinitionError):
        ToolRegistry([Tool(name="x", run=_noop, input_schema={"type": "array"})])
