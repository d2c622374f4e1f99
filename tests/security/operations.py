"""Every operation the property tests fuzz: the golden packages and the @readme/oas-examples corpus."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import httpx

from bridge.contract.catalogue import HttpBinding, ToolEntry
from bridge.contract.expressions.json_pointer import resolve
from bridge.request.build import build_request
from bridge.serving.package import load_catalogue
from bridge.tools.errors import InvalidArgumentsError

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
def all_apis() -> tuple[tuple[str, frozenset[tuple[str, str]], tuple[ToolEntry, ...]], ...]:
    """``(source, apiKey slots, tools)`` for the golden packages and every corpus spec that loads.

    The slots are ``(location, name)`` of every apiKey scheme the document declares (header names
    lower-cased), used by its operations or not.
    """
    from generator.generate import build_api, finish_catalogue
    from generator.load.spec import load_spec
    from generator.options import GenerateOptions
    from tests.golden import GOLDEN_SPECS, spec_path
    from tests.node_tools import oas_examples

    found: list[tuple[str, frozenset[tuple[str, str]], tuple[ToolEntry, ...]]] = []
    for name in sorted(GOLDEN_SPECS):
        folder = ROOT / "generated" / name
        if (folder / "catalogue.json").is_file():
            document = load_spec(str(spec_path(name)), validate=False).document
            found.append((f"golden:{name}", api_key_slots(document), load_catalogue(folder).tools))
    for spec in oas_examples():
        try:
            loaded, api = build_api(str(spec), GenerateOptions())
            catalogue = finish_catalogue(api, GenerateOptions())
        except Exception:  # a spec the generator refuses is not part of this property
            continue
        source = f"corpus:{spec.parent.parent.name}/{spec.name}"
        found.append((source, api_key_slots(loaded.document), catalogue.tools))
    return tuple(found)


def api_key_slots(document: dict[str, Any]) -> frozenset[tuple[str, str]]:
    components = document.get("components")
    schemes = components.get("securitySchemes") if isinstance(components, dict) else None
    slots = set()
    for node in (schemes or {}).values() if isinstance(schemes, dict) else ():
        if isinstance(node, dict) and "$ref" in node:
            node = resolve(document, node["$ref"])
        if isinstance(node, dict) and node.get("type") == "apiKey" and isinstance(node.get("name"), str):
            location = node.get("in")
            slots.add((location, node["name"].lower() if location == "header" else node["name"]))
    return frozenset(slots)


@functools.cache
def all_operations() -> tuple[tuple[str, ToolEntry], ...]:
    """``(source, entry)`` for every tool of the golden packages and of every corpus spec that loads."""
    found = [(source, entry) for source, _, tools in all_apis() for entry in tools]
    return tuple((source, entry) for source, entry in found if base_args(entry) is not None)


def bound_env(binding: HttpBinding) -> dict[str, str]:
    """A value for every environment variable the binding's bound parameters and body properties
    read (credential slots included), so requests can be built as a configured server builds them."""
    names = [p.bound.env for p in binding.params if p.bound is not None and p.bound.env]
    if binding.body is not None:
        names += [f.bound.env for f in binding.body.bound_fields if f.bound is not None and f.bound.env]
    return dict.fromkeys(names, "bound-value-1234")


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
            build_request(binding, args, base_url=BASE, bound=bound_env(binding))
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
