"""Code mode end to end: the official client, the bridge in code mode, the fake upstream."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from bridge.modes.codemode import RUN_CODE, RUN_QUERY, SEARCH
from tests.bridge.modes.codemode.harness import SECRET, code_client, petstore_package, text, value

pytestmark = pytest.mark.anyio

PET = {"id": 1, "name": "Rex", "status": "available"}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return petstore_package(tmp_path_factory.mktemp("codemode"))


async def test_three_tools_with_honest_annotations(package: Path) -> None:
    async with code_client(package) as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {SEARCH, RUN_QUERY, RUN_CODE}
    query = tools[RUN_QUERY].annotations
    assert query is not None
    assert (query.read_only_hint, query.destructive_hint, query.idempotent_hint, query.open_world_hint) == (
        True,
        False,
        True,
        True,
    )
    code = tools[RUN_CODE].annotations
    assert code is not None
    assert (code.read_only_hint, code.destructive_hint) == (False, True)  # petstore deletes pets


async def test_a_read_only_package_has_no_run_code(tmp_path: Path) -> None:
    async with code_client(petstore_package(tmp_path, read_only=True)) as (client, _):
        names = {t.name for t in (await client.list_tools()).tools}
    assert names == {SEARCH, RUN_QUERY}


async def test_search_gives_signatures_and_on_request_the_stub(package: Path) -> None:
    async with code_client(package) as (client, _):
        found = (await client.call_tool(SEARCH, {"query": "get pet"})).structured_content
        assert found is not None
        first = found["operations"][0]
        assert first["name"] == "getPet"
        assert first["signature"] == "async def getPet(*, petId: int) -> GetPetOutput"
        assert first["effect"] == "read-only"
        assert first["returns"].startswith("{") and "name" in first["returns"]  # the fields a program reads
        assert "stub" not in first and "stubs" not in found
        listing = (await client.call_tool(SEARCH, {"query": "list pets", "limit": 1})).structured_content
        assert listing is not None
        pets = listing["operations"][0]
        assert pets["name"] == "listPets" and pets["returns"].startswith("list[{") and "limit" in pets["paging"]
        one = (await client.call_tool(SEARCH, {"name": "getPet"})).structured_content
        detailed = (await client.call_tool(SEARCH, {"query": "pet", "limit": 3, "detail": True})).structured_content
    assert one is not None and detailed is not None
    assert "class ListPetsOutput2" in one["stub"] and "async def getPet" in one["stub"]
    assert "createPet" not in one["stub"]
    # For the model: no imports, no prelude (the run tools say what ApiError is), no second signature.
    assert "import" not in one["stub"] and "ApiError" not in one["stub"] and "signature" not in one
    # Several operations: one text, each shape they share written once.
    names = [item["name"] for item in detailed["operations"]]
    assert len(names) == 3 and all(f"async def {n}(" in detailed["stubs"] for n in names)
    assert detailed["stubs"].count("class ListPetsOutput2(") == 1


async def test_a_program_calls_operations_and_gathers_them(package: Path) -> None:
    async with code_client(package) as (client, fake):
        fake.reply(json_body=PET)
        program = (
            "import asyncio\npets = await asyncio.gather(getPet(petId=1), getPet(petId=2))\n[p['name'] for p in pets]\n"
        )
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert value(result) == ["Rex", "Rex"]
    assert sorted(r.raw_path for r in fake.requests) == ["/pets/1", "/pets/2"]
    assert fake.violations == []


async def test_a_type_error_comes_back_before_any_call(package: Path) -> None:
    async with code_client(package) as (client, fake):
        result = await client.call_tool(RUN_QUERY, {"code": "p = await getPet(petId='one')\np['nme']"})
    assert result.is_error
    assert "type-check" in text(result) and "petId" in text(result)
    assert fake.requests == []


async def test_run_query_refuses_a_write_at_type_check(package: Path) -> None:
    async with code_client(package) as (client, fake):
        result = await client.call_tool(RUN_QUERY, {"code": "await deletePet(petId=1)"})
        assert result.is_error and "deletePet" in text(result) and RUN_CODE in text(result)
        assert fake.requests == []
        fake.reply(204)
        done = await client.call_tool(RUN_CODE, {"code": "await deletePet(petId=1)\n'gone'"})
    assert value(done) == "gone"
    assert [r.method for r in fake.requests] == ["DELETE"]


async def test_http_errors_raise_api_error_with_the_status(package: Path) -> None:
    async with code_client(package) as (client, fake):
        fake.reply(404, json_body={"message": "no such pet"})
        program = (
            "try:\n"
            "    await getPet(petId=7)\n"
            "    found = 'yes'\n"
            "except ApiError as error:\n"
            "    found = [api_status(error), 'no such pet' in str(error)]\n"
            "found\n"
        )
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert value(result) == [404, True]


async def test_a_bad_argument_raises_inside_the_program_naming_the_field(package: Path) -> None:
    async with code_client(package) as (client, fake):
        program = (
            "import json\n"
            'args = json.loads(\'{"petId": "x"}\')\n'
            "try:\n"
            "    await getPet(**args)\n"
            "    r = 'sent'\n"
            "except ApiError as error:\n"
            "    r = [api_status(error), str(error)]\n"
            "r\n"
        )
        result = await client.call_tool(RUN_QUERY, {"code": program})
    status, message = value(result)
    assert status is None and "petId" in message
    assert fake.requests == []


async def test_the_final_value_is_trimmed_with_the_result_budget(package: Path) -> None:
    async with code_client(package) as (client, _):
        result = await client.call_tool(RUN_QUERY, {"code": "[{'n': i, 'pad': 'x' * 50} for i in range(20000)]"})
    assert not result.is_error
    assert result.structured_content is not None
    assert "_truncated" in result.structured_content
    assert len(text(result)) < 40_000


@pytest.mark.parametrize(
    ("program", "frames"),
    [
        ("x = 1\ny = {}\ny['missing']\n", ['File "program.py", line 3, in <module>']),
        (
            "def f(d):\n    return d['missing']\n\nf({})\n",
            ['File "program.py", line 4, in <module>', 'File "program.py", line 2, in f'],
        ),
        ("exec('{}[1]')\n", ['File "program.py", line 1, in <module>', 'File "<string>", line 1']),
    ],
)
async def test_a_runtime_error_shows_the_programs_own_traceback(package: Path, program: str, frames: list[str]) -> None:
    async with code_client(package) as (client, _):
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert result.is_error
    message = text(result)
    assert all(frame in message for frame in frames), message
    assert "Error" in message.splitlines()[-1]
    assert "/work" not in message and "python-input" not in message
    assert '.py"' not in message.replace('"program.py"', "")


async def test_one_audit_line_per_api_call(package: Path, caplog: pytest.LogCaptureFixture) -> None:
    async with code_client(package) as (client, fake):
        fake.reply(json_body=PET)
        with caplog.at_level(logging.DEBUG, logger="bridge.audit"):
            await client.call_tool(RUN_QUERY, {"code": "a = await getPet(petId=1)\nb = await getPet(petId=2)\n1"})
    lines = [r.getMessage() for r in caplog.records if r.name == "bridge.audit"]
    assert len(lines) == 2
    assert all("tool=run_query" in line and "method=GET path=/pets/{petId}" in line for line in lines)


async def test_programs_never_see_the_credentials(package: Path) -> None:
    async with code_client(package) as (client, fake):
        fake.reply(json_body={"id": 1, "name": SECRET})
        program = "p = await getPet(petId=1)\n[p['name'], str(p)]"
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert SECRET not in json.dumps(result.model_dump(mode="json"))
    assert fake.requests[0].headers  # the key itself went upstream, only there


async def test_tool_names_that_are_not_identifiers_become_function_names(tmp_path: Path) -> None:
    package = petstore_package(tmp_path, overrides={"getPet": {"name": "pets-get.one"}})
    async with code_client(package) as (client, fake):
        fake.reply(json_body=PET)
        found = (await client.call_tool(SEARCH, {"name": "pets-get.one"})).structured_content
        assert found is not None and found["name"] == "pets_get_one"
        result = await client.call_tool(RUN_QUERY, {"code": "(await pets_get_one(petId=3))['name']"})
    assert value(result) == "Rex"
    assert [r.raw_path for r in fake.requests] == ["/pets/3"]


async def test_in_memory_serving_builds_the_stubs_it_needs(package: Path) -> None:
    from bridge.serving.package import load_catalogue

    async with code_client(None, catalogue=load_catalogue(package)) as (client, fake):
        fake.reply(json_body=PET)
        found = (await client.call_tool(SEARCH, {"query": "pet", "detail": True})).structured_content
        assert found is not None and all(f"async def {i['name']}(" in found["stubs"] for i in found["operations"])
        result = await client.call_tool(RUN_QUERY, {"code": "(await getPet(petId=1))['name']"})
        assert value(result) == "Rex"
        wrong = await client.call_tool(RUN_QUERY, {"code": "await getPet(petId='x')"})
    assert wrong.is_error and "type-check" in text(wrong)


class _BrokenTransport(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise RuntimeError("internal detail /srv/secret/path")


async def test_a_bridge_bug_in_a_call_reaches_the_program_as_a_fixed_text(package: Path) -> None:
    async with code_client(package, transport=_BrokenTransport()) as (client, _):
        program = "try:\n    await getPet(petId=1)\n    r = 'ok'\nexcept ApiError as e:\n    r = str(e)\nr"
        result = await client.call_tool(RUN_QUERY, {"code": program})
    message = value(result)
    assert "getPet" in message and "/srv/secret" not in message and "internal detail" not in message


async def test_a_syntax_error_is_reported_as_such_with_its_line(package: Path) -> None:
    async with code_client(package) as (client, fake):
        result = await client.call_tool(RUN_QUERY, {"code": "x = 1\ny = (\n"})
    assert result.is_error
    assert "not valid Python" in text(result) and "program.py:2" in text(result)
    assert fake.requests == []


async def test_programs_see_whole_response_data_only_their_value_is_trimmed(package: Path) -> None:
    pets = [{"id": i, "name": "n" * 5000, "status": "available"} for i in range(150)]
    async with code_client(package) as (client, fake):
        fake.reply(json_body=pets)
        program = "pets = await listPets()\n[len(pets), len(pets[0]['name'])]"
        result = await client.call_tool(RUN_QUERY, {"code": program})
    assert value(result) == [150, 5000]


async def test_programs_run_side_by_side_and_print_output_comes_back(package: Path) -> None:
    import anyio

    results: dict[int, Any] = {}
    async with code_client(package) as (client, fake):
        fake.reply(json_body=PET)

        async def run(i: int) -> None:
            program = f"print('run', {i})\np = await getPet(petId={i})\n[{i}, p['name']]"
            results[i] = (await client.call_tool(RUN_QUERY, {"code": program})).structured_content

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for i in range(1, 5):
                    group.start_soon(run, i)
    assert results == {i: {"result": [i, "Rex"], "printed": f"run {i}\n"} for i in range(1, 5)}
