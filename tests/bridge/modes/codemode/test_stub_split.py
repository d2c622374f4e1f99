"""A package's api.pyi is read by name: split at its statements, each parsed only when a program reaches it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import HttpBinding, ToolAnnotationsSpec, ToolEntry
from bridge.contract.stubs import StubIndex
from bridge.modes.stubsource import PackageStubs
from generator.emit.stubs import render_stubs
from tests.golden import GENERATED_DIR

READ = ToolAnnotationsSpec(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=True)
NASTY = st.sampled_from(['"""', "'''", "\\", '"""\nimport os\n"""', "\nclass X:\n", "\r\n", "\x00", "\u2028", "\t"])
SPEC_TEXT = st.lists(st.one_of(st.text(max_size=30), NASTY), max_size=4).map("".join)


def _entry(name: str, description: str, properties: dict[str, Any]) -> ToolEntry:
    return ToolEntry(
        name=name,
        description=description,
        input_schema={"type": "object", "properties": properties, "required": list(properties)[:1]},
        output_schema={"type": "object", "properties": {"name": {"type": "string", "description": description}}},
        annotations=READ,
        binding=HttpBinding(method="get", path="/x"),
    )


def _same(split: StubIndex, whole: StubIndex) -> None:
    assert split.header == whole.header
    assert split.order == whole.order
    assert list(split.definitions) == list(whole.definitions)
    for name, definition in split.definitions.items():
        assert definition.source == whole.definitions[name].source, name
        assert definition.uses == whole.definitions[name].uses, name


def test_every_golden_api_pyi_indexes_by_lines_as_a_whole_parse_does() -> None:
    paths = sorted(GENERATED_DIR.glob("*/api.pyi"))
    assert paths
    for path in paths:
        source = path.read_text(encoding="utf-8")
        _same(StubIndex.parse(source), StubIndex._parse_whole(source))


@settings(max_examples=40, deadline=None)
@given(SPEC_TEXT, SPEC_TEXT)
def test_any_spec_text_in_the_stubs_indexes_by_lines_as_a_whole_parse_does(first: str, second: str) -> None:
    nested = {"type": "object", "properties": {"deep": {"type": "object", "properties": {first[:8] or "v": {}}}}}
    source = render_stubs([_entry("one", first, {"a": nested}), _entry("two", second, {"b": {"type": "string"}})])
    _same(StubIndex.parse(source), StubIndex._parse_whole(source))


def test_a_programs_stubs_are_built_from_the_definitions_it_names_only(tmp_path: Path) -> None:
    entries = [_entry("one", "First.", {"a": {"type": "string"}}), _entry("two", "Second.", {"b": {"type": "string"}})]
    source = render_stubs(entries)
    intact = StubIndex.parse(source).subset(["one"])
    # Another function's definition no parser could read: a program naming `one` never parses it.
    broken = source.replace("async def two(", "async def two(((")
    assert broken != source
    (tmp_path / "api.pyi").write_text(broken, encoding="utf-8")

    async def stubs_for_one() -> str:
        index = await PackageStubs(tmp_path / "api.pyi").index_for(["one"])
        return index.subset(["one"])

    assert anyio.run(stubs_for_one) == intact
    assert "async def one(" in intact and "two" not in intact
