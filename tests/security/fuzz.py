"""Coverage-guided fuzzing with atheris (test plan row 37): three parsers that take untrusted input.

    python -m tests.security.fuzz request -runs=20000     # arguments -> HTTP request (P12, P13, P16)
    python -m tests.security.fuzz arguments -runs=20000   # JSON arguments -> validation (P17)
    python -m tests.security.fuzz spec -runs=5000         # bytes -> spec loader and parser

Each target may only raise the error the component promises (InvalidArgumentsError, SpecError);
anything else, or a built request that leaves the origin or changes the path's segments, is a
crash that atheris reports with the input that caused it. ``test_fuzz.py`` runs each briefly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import atheris

with atheris.instrument_imports(include=["bridge", "generator"]):
    import httpx

    from bridge.contract.catalogue import ToolEntry
    from bridge.request.base_url import origin_of
    from bridge.request.build import build_request, check_prepared
    from bridge.request.styles import is_dot_segment
    from bridge.serving.package import load_catalogue
    from bridge.tools.errors import InvalidArgumentsError
    from bridge.tools.validation import ArgumentValidator
    from generator.generate import build_from_loaded
    from generator.issues import GenerationError
    from generator.load.reading import SpecError
    from generator.load.spec import load_document_text
    from generator.options import GenerateOptions
    from tests.golden import GENERATED_DIR
    from tests.security.operations import bound_env

BASE = httpx.URL("http://upstream.test:8080/base")
MAX_SPEC_BYTES = 64 * 1024


def _entries() -> list[ToolEntry]:
    return [entry for folder in sorted(GENERATED_DIR.iterdir()) for entry in load_catalogue(folder).tools]


ENTRIES = _entries()
VALIDATOR = ArgumentValidator({entry.name: entry.input_schema for entry in ENTRIES})


def _value(fdp: atheris.FuzzedDataProvider) -> Any:
    kind = fdp.ConsumeIntInRange(0, 4)
    if kind == 0:
        return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 40))
    if kind == 1:
        return fdp.ConsumeInt(4)
    if kind == 2:
        return fdp.ConsumeBool()
    if kind == 3:
        return [fdp.ConsumeUnicodeNoSurrogates(8) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    return {fdp.ConsumeUnicodeNoSurrogates(6): fdp.ConsumeUnicodeNoSurrogates(8) for _ in range(2)}


def _arguments(fdp: atheris.FuzzedDataProvider, entry: ToolEntry) -> dict[str, Any]:
    names = list(entry.input_schema.get("properties", {})) or ["x"]
    return {fdp.PickValueInList(names): _value(fdp) for _ in range(fdp.ConsumeIntInRange(0, len(names) + 1))}


def fuzz_request(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    entry = fdp.PickValueInList(ENTRIES)
    try:
        request = build_request(entry.binding, _arguments(fdp, entry), base_url=BASE, bound=bound_env(entry.binding))
    except InvalidArgumentsError:
        return
    url = httpx.URL(str(request.url))
    if origin_of(url) != origin_of(BASE) or url.userinfo or url.fragment:
        raise AssertionError(f"request left the upstream: {url}")
    segments = url.raw_path.decode("ascii").split("?", 1)[0].split("/")[1:]
    if len(segments) != len(request.template_segments):
        raise AssertionError(f"segment count changed: {url}")
    for actual, literal in zip(segments, request.template_segments, strict=True):
        if (literal is not None and actual != literal) or (literal is None and is_dot_segment(actual)):
            raise AssertionError(f"path escaped its template: {url}")
    for name, value in request.headers:
        if any(ord(c) < 0x20 or ord(c) >= 0x7F for c in name + value if c != "\t"):
            raise AssertionError(f"unsafe header {name!r}")
    check_prepared(request, BASE)


def fuzz_arguments(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    entry = fdp.PickValueInList(ENTRIES)
    text = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    try:
        args = json.loads(text)
    except (ValueError, RecursionError):
        return
    if not isinstance(args, dict):
        return
    try:
        VALIDATOR.validate(entry.name, args)
    except InvalidArgumentsError:
        return


def fuzz_spec(data: bytes) -> None:
    if len(data) > MAX_SPEC_BYTES:
        return
    try:
        loaded = load_document_text(data, name="fuzzed.yaml", validate=True, fatal_validation=False)
        build_from_loaded(loaded, GenerateOptions())
    except (SpecError, GenerationError):
        return


TARGETS: dict[str, Callable[[bytes], None]] = {
    "request": fuzz_request,
    "arguments": fuzz_arguments,
    "spec": fuzz_spec,
}


def main() -> None:
    target = TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
