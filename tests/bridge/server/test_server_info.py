"""Instructions, title and icons in ``initialize``: spec text made plain, bounded and link-free; icons checked."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mcp import Client

from bridge.contract.catalogue import IconSpec
from bridge.contract.icons import MAX_DATA_BYTES, IconError, icon_from_option, icon_from_url
from bridge.contract.plain_text import DESCRIPTION_LIMIT, first_paragraph, plain_text
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime
from tests.bridge.calls.longrunning.harness import SPEC

MARKUP = st.sampled_from(
    ["[", "]", "(", ")", "<", ">", "!", "*", "_", "`", "#", ">", "@", ":", "/", ".", "www.", "http://", "https://",
     "javascript:", "mailto:", "&lt;", "&gt;", "&#60;", "<a href='x'>", "</a>", "<img src=x>", "\u202e", "\x00", "\n",
     "\n\n", " ", "word", "é"]
)  # fmt: skip


@settings(max_examples=500)
@given(st.lists(MARKUP, max_size=60).map("".join))
@example(".<@word._")  # a stray "<" dropped last once joined an e-mail address back together
def test_plain_text_never_holds_a_link_a_tag_or_a_control_character(text: str) -> None:
    plain = plain_text(text, 120)
    assert len(plain) <= 120
    assert "<" not in plain and ">" not in plain
    assert not re.search(r"\[[^\]]*\]\([^)]*\)", plain)  # no Markdown link or image
    assert not re.search(r"(?i)[a-z][a-z0-9+.\-]*://|www\.\S|[\w.+\-]+@[\w\-]+\.\w|mailto:|javascript:", plain)
    assert "\u202e" not in plain and "\x00" not in plain and "\n" not in plain


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("A pet store.", "A pet store."),
        ("# Pets API\n\nManage **pets**. More below.\n\nSecond paragraph.", "Manage pets. More below."),
        ("See [the docs](https://evil.example/x) now.", "See the docs now."),
        ("Logo ![alt text](https://t.example/p.png) here.", "Logo alt text here."),
        ("Go to https://evil.example/?q=1 or www.evil.example today.", "Go to or today."),
        ("Mail ops@example.com please.", "Mail ops at example.com please."),
        ("<p>Hello <a href='https://x'>there</a></p>", "Hello there"),
        ("&lt;script&gt;alert(1)&lt;/script&gt; fine", "alert(1) fine"),
        ("[ref link][1]\n\n[1]: https://evil.example", "ref link"),
        ("Right\u202eto left", "Rightto left"),
        ("", None),
        ("   \n\n  ", None),
    ],
)
def test_the_description_becomes_one_plain_paragraph(description: str, expected: str | None) -> None:
    assert first_paragraph(description) == expected


def test_a_long_description_is_cut_at_a_word() -> None:
    about = first_paragraph("word " * 1000)
    assert about is not None and len(about) <= DESCRIPTION_LIMIT and about.endswith("…")


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


@pytest.mark.parametrize(
    ("src", "operator", "ok"),
    [
        ("https://cdn.example/logo.png", False, True),
        ("https://cdn.example/logo", False, True),
        (f"data:image/png;base64,{PNG}", False, True),
        ("http://cdn.example/logo.png", False, False),  # not https
        ("javascript:alert(1)", False, False),
        ("file:///etc/passwd", False, False),
        ("https://user:pw@cdn.example/logo.png", False, False),
        ("https://cdn.example/logo.svg", False, False),  # SVG can carry script: not from spec text
        ("https://cdn.example/logo.svg", True, True),  # the operator may choose one
        ("data:image/svg+xml;base64,PHN2Zz4=", False, False),
        ("data:text/html;base64,PHA+", True, False),
        ("data:image/png;base64,!!!", True, False),
        ("https://cdn.example/" + "a" * 3000, True, False),
        ("https://cdn.example/a b.png", True, False),
    ],
)
def test_icons_are_https_or_data_images_only(src: str, operator: bool, ok: bool) -> None:
    if ok:
        assert icon_from_url(src, operator=operator).src
    else:
        with pytest.raises(IconError):
            icon_from_url(src, operator=operator)


def test_an_icon_file_becomes_a_data_url_and_a_big_one_is_refused(tmp_path: Path) -> None:
    small = tmp_path / "logo.png"
    small.write_bytes(b"\x89PNG" + b"\x00" * 100)
    icon = icon_from_option(str(small))
    assert icon.src.startswith("data:image/png;base64,") and icon.mime_type == "image/png"
    big = tmp_path / "big.png"
    big.write_bytes(b"\x00" * (MAX_DATA_BYTES + 1))
    with pytest.raises(IconError):
        icon_from_option(str(big))
    with pytest.raises(IconError):
        icon_from_option(str(tmp_path / "logo.exe"))


@dataclass
class Initialized:
    server_info: Any
    instructions: str | None


async def _initialize(catalogue: Any, options: ServeOptions) -> Initialized:
    runtime = build_runtime(catalogue, ServeOptions(base_url="http://127.0.0.1:9/v1"), environ={})
    registry = build_registry(catalogue, runtime, None)
    server = build_bridge_server(catalogue, registry, runtime=runtime, options=options)
    try:
        async with Client(server, mode="legacy") as client:
            return Initialized(client.server_info, client.instructions)
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_initialize_carries_the_description_title_and_icon() -> None:
    from tests.bridge.calls.longrunning.harness import jobs_catalogue

    client = await _initialize(jobs_catalogue(), ServeOptions())
    assert client.server_info is not None
    assert client.server_info.title == "Jobs"
    assert [i.src for i in client.server_info.icons or []] == ["https://jobs.example/logo.png"]
    instructions = client.instructions or ""
    assert instructions.startswith("Tools for the Jobs API (version 1.0.0).\nA batch job service: start a job")
    assert "https://" not in instructions and "[" not in instructions and "**" not in instructions
    assert "help at jobs.example" in instructions


@pytest.mark.anyio
async def test_the_package_config_and_icon_option_override_the_spec() -> None:
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    server = {
        "title": "Job runner",
        "instructions": "Use listJobs first. [x](https://evil)",
        "icons": ["https://a.example/i.webp"],
    }
    catalogue, _ = build_catalogue(str(SPEC), GenerateOptions(name="jobs", server=server))
    client = await _initialize(catalogue, ServeOptions())
    assert client.server_info is not None and client.server_info.title == "Job runner"
    assert (client.instructions or "").split("\n")[1] == "Use listJobs first. x"
    assert [i.src for i in client.server_info.icons or []] == ["https://a.example/i.webp"]
    chosen = IconSpec(src="https://b.example/other.png", mime_type="image/png")
    overridden = await _initialize(catalogue, ServeOptions(icons=(chosen,)))
    assert overridden.server_info is not None
    assert [i.src for i in overridden.server_info.icons or []] == ["https://b.example/other.png"]


def test_a_bad_x_logo_is_a_warning_and_no_icon(tmp_path: Path) -> None:
    import json

    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    ok = {"200": {"description": "ok"}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1", "x-logo": {"url": "javascript:alert(1)"}},
        "paths": {"/a": {"get": {"operationId": "a", "responses": ok}}},
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(spec))
    catalogue, issues = build_catalogue(str(path), GenerateOptions())
    assert catalogue.server is None
    assert [issue.where for issue in issues] == [f"{path}: /info/x-logo"]
