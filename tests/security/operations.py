"""Every operation the property tests fuzz: the golden packages and the @readme/oas-examples corpus."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import httpx

from bridge.binding import ToolEntry
from bridge.errors import InvalidArgumentsError
from bridge.package import load_catalogue
from bridge.request import build_request

ROOT = Path(__file__).resolve().parents[2]
BASE = httpx.URL("http://upstream.test:8080/base")
"""Base URL every fuzzed request is built against (a base path on purpose)."""

SAFE_TEXT = "dGVzdA=="
"""A value every argument accepts: plain text, valid base64 for file fields, a JSON string body."""

NASTY: tuple[str, ...] = (
    "..",
    ".",
    "",
    "../admin",
    "../../x",
    "a/../../b",
    "%2e%2e",
    "%2E%2E",
    ".%2E",
    "..%2f",
    "%252e%252e%252f",
    "..;x",
    "．．",
    "a/b",
    "a\\b",
    "a?x=1",
    "a#f",
    "a;b",
    "a b",
    "ü",
    "http://169.254.169.254/latest/meta-data/",
    "//evil.example/x",
    "http://127.0.0.2:1/",
    "@evil.example",
    "user:pw@evil.example",
    "\\\\evil.example\\share",
    "a\r\nX-Injected: 1",
    "\x00",
    "\x7f",
    "é",
    "a&admin=true#x",
    "%00",
    "%0d%0aX-Injected:%201",
    "{id}",
    "*",
)


@functools.cache
def all_operations() -> tuple[tuple[str, ToolEntry], ...]:
    """``(source, entry)`` for every tool of the golden packages and of every corpus spec that loads."""
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions
    from tests.node_tools import oas_examples

    found: list[tuple[str, ToolEntry]] = []
    for folder in sorted((ROOT / "generated").iterdir()):
        if (folder / "catalogue.json").is_file():
            found.extend((f"golden:{folder.name}", entry) for entry in load_catalogue(folder).tools)
    for spec in oas_examples():
        try:
            catalogue, _ = build_catalogue(str(spec), GenerateOptions())
        except Exception:  # a spec the generator refuses is not part of this property
            continue
        found.extend((f"corpus:{spec.parent.parent.name}/{spec.name}", entry) for entry in catalogue.tools)
    return tuple((source, entry) for source, entry in found if base_args(entry) is not None)


def base_args(entry: ToolEntry) -> dict[str, Any] | None:
    """Arguments that build a request for ``entry`` (None when no simple choice does)."""
    binding = entry.binding
    for body_value in (SAFE_TEXT, {}, {"k": SAFE_TEXT}):
        args: dict[str, Any] = {p.arg: SAFE_TEXT for p in binding.params}
        if binding.body is not None:
            if binding.body.arg is not None:
                args[binding.body.arg] = body_value
            for field in binding.body.fields:
                args[field.arg] = SAFE_TEXT
        try:
            build_request(binding, args, base_url=BASE)
        except InvalidArgumentsError:
            continue
        return args
    return None


def string_args(entry: ToolEntry) -> list[str]:
    """Every argument of ``entry`` that carries text into the request (parameters and body)."""
    binding = entry.binding
    names = [p.arg for p in binding.params]
    if binding.body is not None:
        if binding.body.arg is not None:
            names.append(binding.body.arg)
        names.extend(field.arg for field in binding.body.fields)
    return list(dict.fromkeys(names))
