"""A program fails only where a model would expect it to: common idioms run, the rest is refused
early with what to write instead; the run tools say the sandbox's limits."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.modes.codemode import RUN_CODE, RUN_QUERY, SEARCH
from bridge.modes.program_idioms import refusals, rewrite, unknown_name_hints
from tests.bridge.modes.codemode.harness import code_client, petstore_package, text, value

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return petstore_package(tmp_path_factory.mktemp("idioms"))


# Each runs in the sandbox as CPython runs it.
IDIOMS = [
    ("next(x for x in [1, 2, 3] if x > 1)", 2),
    ("next((x for x in [1] if x > 5), None)", None),
    ("g = (x * 2 for x in [1, 2])\n[next(g), next(g)]", [2, 4]),
    ("next(zip([1, 2], ['a', 'b']))", [1, "a"]),
    ("next(enumerate('ab'))", [0, "a"]),
    ("next(reversed([1, 2]))", 2),
    ("list(map(str, [1, 2]))", ["1", "2"]),
    ("list(map(lambda a, b: a + b, [1, 2], [10, 20]))", [11, 22]),
    ("list(filter(None, [0, 1, '', 'a']))", [1, "a"]),
    ("list(filter(lambda p: p['n'] > 1, [{'n': 1}, {'n': 2}]))", [{"n": 2}]),
    ("next(map(str, [7]))", "7"),
    ("sum(x for x in range(4))", 6),
    ("','.join(str(x) for x in [1, 2])", "1,2"),
    ("sorted((x for x in [3, 1, 2]), reverse=True)", [3, 2, 1]),
    ("dict((k, len(k)) for k in ['a', 'bb'])", {"a": 1, "bb": 2}),
    ("any(x > 2 for x in [1, 3])", True),
    ("max((x for x in []), default=0)", 0),
    ("import asyncio\nasync def f(x):\n    return x\nawait asyncio.gather(*(f(x) for x in [1, 2]))", [1, 2]),
]


async def test_common_idioms_run_as_in_python(package: Path) -> None:
    async with code_client(package) as (client, _):
        for program, expected in IDIOMS:
            result = await client.call_tool(RUN_QUERY, {"code": program})
            assert not result.is_error, (program, text(result))
            assert value(result) == expected, program


async def test_a_generator_function_is_refused_before_anything_runs(package: Path) -> None:
    async with code_client(package) as (client, fake):
        program = "def pets():\n    yield 1\nawait getPet(petId=1)\nlist(pets())"
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert result.is_error
    assert "yield" in text(result) and "list" in text(result) and "no API call" in text(result)
    assert fake.requests == []


@pytest.mark.parametrize(
    ("program", "hint"),
    [
        ("await getPets(limit=1)", "Did you mean getPet, listPets?"),
        ("await list_pet()", "Did you mean listPets"),
        ("await frobnicate_everything()", f"{SEARCH} finds operations"),
        ("with open('x') as f:\n    pass", "`open` is not in the sandbox"),
        ("import statistics\nstatistics.mean([1])", "Module `statistics` is not in the sandbox"),
    ],
)
async def test_an_unknown_name_gets_the_closest_operations_and_a_pointer_to_search(
    package: Path, program: str, hint: str
) -> None:
    async with code_client(package) as (client, fake):
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert result.is_error and hint in text(result), text(result)
    assert fake.requests == []


async def test_the_run_tools_describe_the_sandboxs_limits(package: Path) -> None:
    async with code_client(package) as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in (RUN_QUERY, RUN_CODE):
        description = tools[name].description or ""
        assert "50 API calls" in description and "10 s" in description and "64 MB" in description
        assert "yield" in description and "json" in description


async def test_search_by_name_takes_method_and_path(package: Path) -> None:
    async with code_client(package) as (client, _):
        found = (await client.call_tool(SEARCH, {"name": "GET /pets/{petId}"})).structured_content
    assert found is not None and found["name"] == "getPet" and "async def getPet" in found["stub"]


# ------------------------------------------------------------------------------- the rewrite

ITEMS = st.lists(st.integers(min_value=-5, max_value=5), max_size=5)


def _genexp(draw: Any, depth: int = 0) -> str:
    items = repr(draw(ITEMS))
    source = items if depth > 1 or draw(st.booleans()) else f"({_genexp(draw, depth + 1)})"
    condition = draw(st.sampled_from(["", " if x > 0", " if x % 2"]))
    return f"x * 2 for x in {source}{condition}"


@st.composite
def programs(draw: Any) -> str:
    """Expressions that consume a generator expression the ways programs do."""
    inner = _genexp(draw)
    return draw(
        st.sampled_from(
            [
                f"next(({inner}), None)",
                f"sum({inner})",
                f"sorted({inner})",
                f"list({inner})",
                f"[y for y in ({inner})]",
                f"any({inner})",
                f"max(({inner}), default=-1)",
                f"tuple({inner})",
                f"(lambda g: [next(g, 0), next(g, 0)])(({inner}))",
                f"next(zip(({inner}), [1, 2, 3]), None)",
            ]
        )
    )


@settings(max_examples=200, deadline=None)
@given(programs())
def test_the_rewrite_keeps_what_python_computes(program: str) -> None:
    rewritten = rewrite(program)
    assert rewritten.count("\n") == program.count("\n")
    assert eval(compile(rewritten, "p", "eval")) == eval(compile(program, "p", "eval"))
    tree = ast.parse(rewritten)
    wrapped = {id(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "iter"}
    assert all(id(n) in wrapped for n in ast.walk(tree) if isinstance(n, ast.GeneratorExp))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_rewritten_checked_and_hinted_without_raising(source: str) -> None:
    rewrite(source)
    refusals(source)
    unknown_name_hints(source, ["listPets", "getPet"], SEARCH)


def test_a_program_without_generator_expressions_is_left_byte_for_byte() -> None:
    for program in ("x = [a for a in b]\nx", "await f(a=(1, 2))", "def g():\n    return 1\n", "not python ("):
        assert rewrite(program) == program


# ------------------------------------------------------------------- pages the spec under-declares

PAGED_SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Things", "version": "1"},
    "servers": [{"url": "http://upstream.test"}],
    "paths": {
        "/things": {
            "get": {
                "operationId": "listThings",
                "summary": "List things",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "offset", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "A page of things",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "data": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                                            },
                                        }
                                    },
                                }
                            }
                        },
                    }
                },
            }
        },
        "/things/{id}": {
            "get": {
                "operationId": "getThing",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {
                        "description": "A thing",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                                }
                            }
                        },
                    }
                },
            }
        },
    },
}


async def test_a_page_reads_paging_fields_its_spec_leaves_out_and_items_stay_exact(tmp_path: Path) -> None:
    import json as json_module

    from generator.generate import generate
    from generator.options import GenerateOptions
    from tests.bridge.fake_upstream import FakeUpstream

    spec = tmp_path / "things.json"
    spec.write_text(json_module.dumps(PAGED_SPEC), encoding="utf-8")
    package = tmp_path / "things"
    generate(str(spec), package, GenerateOptions())
    stub = (package / "api.pyi").read_text(encoding="utf-8")
    assert "extra_items=Any" in stub and "Pages: arguments limit, offset." in stub
    fake = FakeUpstream(PAGED_SPEC)
    async with code_client(package, fake=fake, environ={}) as (client, fake):
        fake.reply(json_body={"data": [{"id": "1", "name": "a"}], "next_page": {"offset": "o1"}})
        paged = await client.call_tool(RUN_QUERY, {"code": "p = await listThings(limit=1)\np['next_page']['offset']"})
        typo = await client.call_tool(RUN_QUERY, {"code": "t = await getThing(id='1')\nt['nme']"})
        search = (await client.call_tool(SEARCH, {"query": "list things", "limit": 1})).structured_content
    assert value(paged) == "o1", text(paged)
    assert typo.is_error and "nme" in text(typo) and "type-check" in text(typo)  # an item's keys stay exact
    assert [r.raw_path for r in fake.requests] == ["/things"]  # the typo cost no call
    assert search is not None
    (found,) = search["operations"]
    # the catalogue's output schemas spell out one object level (DEFAULT_OUTPUT_DEPTH): an
    # envelope's items are objects of unknown keys
    assert found["returns"] == "{data: list[object]}" and found["paging"] == "arguments limit, offset"


async def test_a_long_program_is_parsed_off_the_event_loop(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from bridge.modes import codemode as codemode_module

    threads: list[threading.Thread] = []
    real = codemode_module.prepare

    def spy(code: str) -> tuple[str, list[str]]:
        threads.append(threading.current_thread())
        return real(code)

    monkeypatch.setattr(codemode_module, "prepare", spy)
    program = "x = sum(a for a in range(3))\n" * 3000 + "def g():\n    yield 1\n"  # about 90 KB, refused
    async with code_client(package) as (client, fake):
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert result.is_error and "yield" in text(result) and fake.requests == []
    assert threads and all(t is not threading.main_thread() for t in threads)
