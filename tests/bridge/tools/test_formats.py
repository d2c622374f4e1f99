"""File arguments are checked by a decoder in bounded memory; argument sizes are capped."""

from __future__ import annotations

import base64
import re
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.formats import is_base64_file
from bridge.request.build import decode_file
from bridge.tools.argument_size import DEFAULT_MAX_ARGUMENT_BYTES, ArgumentsTooLargeError, argument_bytes
from bridge.tools.errors import InvalidArgumentsError
from bridge.tools.validation import ArgumentValidator

# The regex generated packages used to carry for file arguments: the oracle of what they take.
FILE_PATTERN = (
    r"^(data:([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)?(;[^,;]*)*;base64,)?"
    r"([A-Za-z0-9+/_-]{4})*([A-Za-z0-9+/_-]{2}(==)?|[A-Za-z0-9+/_-]{3}=?)?$"
)
FILE = {"type": "string", "contentEncoding": "base64"}
UPLOAD = {"type": "object", "properties": {"file": FILE, "note": {"type": "string"}}, "additionalProperties": False}

_PAYLOADS = st.text(alphabet="AQZaz09+/-_=!. é", max_size=14)
_HEADERS = st.one_of(
    st.just(""),
    st.builds(
        lambda mime, params, tail: f"data:{mime}{params};{tail},",
        st.sampled_from(["", "image/png", "text/plain", "a", "aa", "x/", "/y", "ab/c+d"]),
        st.sampled_from(["", ";name=a.png", ";charset=utf-8", ";", ";a;b", ";name=été"]),
        st.sampled_from(["base64", "BASE64", "base6", "base64;x"]),
    ),
)


@given(_HEADERS, _PAYLOADS)
@settings(max_examples=500, deadline=None)
def test_the_decoder_check_admits_exactly_what_the_generated_pattern_did(header: str, payload: str) -> None:
    value = header + payload
    assert is_base64_file(value) is (re.fullmatch(FILE_PATTERN, value) is not None)


@given(st.binary(max_size=64), st.booleans(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_every_encoding_of_a_file_passes_and_decodes_to_it(data: bytes, url_safe: bool, strip: bool) -> None:
    text = (base64.urlsafe_b64encode if url_safe else base64.b64encode)(data).decode()
    text = text.rstrip("=") if strip else text
    for value in (text, f"data:application/octet-stream;base64,{text}"):
        assert is_base64_file(value)
        assert decode_file(value, "file")[0] == data


def test_a_file_argument_that_is_not_base64_is_refused_with_a_zod_message() -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        ArgumentValidator({"t": UPLOAD}).validate("t", {"file": "not base64!"})
    assert str(caught.value).splitlines()[1:] == ["file: Invalid base64-encoded string"]


OLD_UPLOAD = {"type": "object", "properties": {"file": {**FILE, "pattern": FILE_PATTERN}}}  # packages made before


@pytest.mark.parametrize("schema", [UPLOAD, OLD_UPLOAD], ids=["decoder", "old package's regex"])
@pytest.mark.parametrize("where", ["plain", "data URI"])
def test_checking_a_big_file_argument_allocates_a_bounded_amount(where: str, schema: dict[str, Any]) -> None:
    value = base64.b64encode(b"\x00\xff" * (3 * 1024 * 1024)).decode()  # 8 MiB of base64
    if where == "data URI":
        value = "data:image/png;base64," + value
    validator = ArgumentValidator({"t": schema})
    tracemalloc.start()
    try:
        assert validator.validate("t", {"file": value}) == {"file": value}
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Chunks of 64 KiB: a few hundred kilobytes whatever the size (Python's re took ~60 bytes a
    # character). tracemalloc sees Python's allocations; the Rust regex's are in bench/VALIDATION.md.
    assert peak < 1024 * 1024


# --------------------------------------------------------------------------- argument sizes


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
    )
)
@settings(max_examples=200, deadline=None)
def test_argument_bytes_is_at_least_the_utf8_size_of_the_strings_in_it(value: Any) -> None:
    def strings(v: Any) -> int:
        if isinstance(v, str):
            return len(v.encode("utf-8", "surrogatepass"))
        if isinstance(v, dict):
            return sum(len(k.encode("utf-8", "surrogatepass")) + strings(x) for k, x in v.items())
        if isinstance(v, list):
            return sum(strings(x) for x in v)
        return 0

    assert argument_bytes(value) >= strings(value)


@pytest.mark.parametrize(
    ("args", "biggest"),
    [
        ({"file": "QUFB" * 300, "note": "hi"}, "file"),  # one big string
        ({"file": "QUFB", "note": "n" * 1200}, "note"),
        ({"note": "n" * 500, "file": "QUFB" * 150}, "file"),  # together over, each under
    ],
)
def test_arguments_over_the_cap_are_refused_naming_the_biggest_and_the_limit(
    args: dict[str, Any], biggest: str
) -> None:
    limit = 1000
    with pytest.raises(ArgumentsTooLargeError) as caught:
        ArgumentValidator({"t": UPLOAD}, max_argument_bytes=limit).validate("t", args)
    assert isinstance(caught.value, InvalidArgumentsError)  # a tool error, before any request
    assert f'"{biggest}" is {argument_bytes(args[biggest])} bytes' in str(caught.value)
    assert f"the limit is {limit} bytes" in str(caught.value)


def test_arguments_under_the_cap_or_with_no_cap_pass() -> None:
    args = {"file": "QUFB" * 1000}
    assert ArgumentValidator({"t": UPLOAD}, max_argument_bytes=4100).validate("t", args) == args
    assert ArgumentValidator({"t": UPLOAD}, max_argument_bytes=0).validate("t", args) == args
    assert ArgumentValidator({"t": UPLOAD}).max_argument_bytes == DEFAULT_MAX_ARGUMENT_BYTES


@pytest.mark.anyio
async def test_the_server_refuses_oversized_arguments_with_a_tool_error_and_never_runs_the_tool() -> None:
    import anyio
    import mcp_types
    from mcp import Client

    from bridge.server.handlers import build_server
    from bridge.tools.registry import Tool, ToolContext, ToolRegistry

    ran: list[dict[str, Any]] = []

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(args)
        return "ok"

    registry = ToolRegistry([Tool(name="upload", run=run, input_schema=UPLOAD)])
    server = build_server(registry, name="t", version="1", max_argument_bytes=1000)
    with anyio.fail_after(5):
        async with Client(server) as client:
            small = await client.call_tool("upload", {"file": "QUFB"})
            big = await client.call_tool("upload", {"file": "QUFB" * 1000})
    assert not small.is_error and ran == [{"file": "QUFB"}]
    assert big.is_error and len(ran) == 1
    assert isinstance(big.content[0], mcp_types.TextContent) and '"file" is 4002 bytes' in big.content[0].text


def test_the_cli_default_cap_is_the_validation_default() -> None:
    from bridge.cli.serve import serve

    (option,) = [p for p in serve.params if p.name == "max_argument_bytes"]
    assert option.default == DEFAULT_MAX_ARGUMENT_BYTES
