"""Load an OpenAPI 2.0/3.0/3.1 description from a file, a URL or text into one bundled 3.x document.

This is the generator's front door: it reads YAML or JSON (told apart by content), refuses what is
not OpenAPI, bundles external refs under the loading policy (:mod:`generator.load.refs`), validates the
description as the user wrote it (:mod:`generator.load.validate`) and converts Swagger 2.0
(:mod:`generator.load.swagger2`); :mod:`generator.load.reading` reads and parses each file.
Anything that stops loading is raised as one :class:`~generator.load.reading.SpecError` carrying
every problem found, one ``FILE: /json/pointer: message`` line each.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from bridge.contract.expressions import json_pointer as pointer
from generator.issues import Issue, Level
from generator.load import azure, refs, swagger2
from generator.load.reading import SpecError, fetch_url, parse_document, read_file, read_reference
from generator.load.validate import Problem, find_problems, format_problem
from generator.options import DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_SPEC_BYTES

if TYPE_CHECKING:
    from generator.load.overlays.document import Overlay

__all__ = ["LoadedSpec", "load_document_text", "load_spec"]

_SUPPORTED = re.compile(r"^(2\.0|3\.[01]\.\d+)$")


@dataclass(frozen=True, slots=True)
class LoadedSpec:
    source: str  # the path or URL as given
    document: dict[str, Any]  # OpenAPI 3.x shape, only local "#/..." refs
    original_version: str  # "2.0", "3.0.3", "3.1.0" as declared by the spec
    sha256: str  # hex SHA-256 of the raw bytes of the main file
    issues: tuple[Issue, ...]  # warnings; errors are raised as SpecError
    self_contained: bool = True  # False: its $refs reached other files (or URLs)


def load_spec(
    source: str,
    *,
    allow_remote_refs: bool = False,
    validate: bool = True,
    fatal_validation: bool = True,
    fatal_refs: bool = True,
    timeout: float = DEFAULT_FETCH_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_SPEC_BYTES,
    overlays: Sequence[Overlay] = (),
) -> LoadedSpec:
    """Load the description at ``source`` (a file path, ``file:`` URL or http(s) URL).

    ``overlays`` are applied, in order, to the parsed document before anything else reads it
    (:mod:`generator.load.overlays.apply`); their warnings join the spec's. ``sha256`` stays the spec's.

    ``fatal_refs=False``: a ref that cannot be followed (missing or unparseable file, bad pointer,
    refused remote ref) is a warning; it stays in the document spelled so that it never resolves,
    and the operations that need it are skipped when they are parsed.

    Raises:
        SpecError: unreadable, not OpenAPI, a refused or broken ref (with ``fatal_refs``), or (with
        ``validate`` and ``fatal_validation``) invalid.
    """
    try:
        if urlsplit(source).scheme in ("http", "https"):
            raw = fetch_url(source, timeout=timeout, max_bytes=max_bytes)
            base_uri, root_dir = source, None
        else:
            path = os.path.realpath(url2pathname(urlsplit(source).path) if source.startswith("file:") else source)
            raw = read_file(path, max_bytes=max_bytes)
            # real paths on both sides, so "api.yaml#/..." from a bundled file is recognised as the main file
            base_uri, root_dir = Path(path).as_uri(), os.path.dirname(path)
    except refs.ReadError as exc:
        raise SpecError([f"{source}: {exc}"]) from None
    policy = refs.RefPolicy(root_dir=root_dir, allow_remote=allow_remote_refs)
    fatal = _Fatal(validate, fatal_validation, fatal_refs)
    return _load(raw, source, base_uri, policy, fatal, timeout, max_bytes, overlays)


def load_document_text(
    text: str | bytes,
    *,
    name: str = "<inline>",
    allow_remote_refs: bool = False,
    validate: bool = True,
    fatal_validation: bool = True,
    fatal_refs: bool = True,
    timeout: float = DEFAULT_FETCH_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_SPEC_BYTES,
    overlays: Sequence[Overlay] = (),
) -> LoadedSpec:
    """Load a description given as text; relative file refs are resolved against the working folder.

    Raises:
        SpecError: as :func:`load_spec`.
    """
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if len(raw) > max_bytes:
        raise SpecError([f"{name}: larger than the {max_bytes}-byte limit"])
    cwd = os.path.realpath(os.getcwd())
    policy = refs.RefPolicy(root_dir=cwd, allow_remote=allow_remote_refs)
    base_uri = Path(cwd, name).as_uri()
    fatal = _Fatal(validate, fatal_validation, fatal_refs)
    return _load(raw, name, base_uri, policy, fatal, timeout, max_bytes, overlays)


@dataclass(frozen=True, slots=True)
class _Fatal:
    validate: bool  # validate at all
    validation: bool  # a validation problem is an error
    refs: bool  # a ref that cannot be followed is an error


def _load(
    raw: bytes,
    name: str,
    base_uri: str,
    policy: refs.RefPolicy,
    fatal: _Fatal,
    timeout: float,
    max_bytes: int,
    overlays: Sequence[Overlay] = (),
) -> LoadedSpec:
    try:
        document = parse_document(raw, name=name)
    except refs.ReadError as exc:
        raise SpecError([f"{name}: {exc}"]) from None
    overlay_issues: list[Issue] = []
    if overlays:
        # Imported here: only a run with overlays loads the JSONPath library.
        from generator.load.overlays.apply import apply_overlays

        document, overlay_issues = apply_overlays(document, overlays)
    version = _declared_version(document, name)
    document, azure_issues = azure.merge_x_ms_paths(document, name)
    overlay_issues += azure_issues

    def read(uri: str) -> Any:
        return read_reference(uri, timeout=timeout, max_bytes=max_bytes)

    sha256 = hashlib.sha256(raw).hexdigest()
    try:
        bundled = refs.bundle(document, base_uri=base_uri, name=name, policy=policy, read=read, lenient=not fatal.refs)
        with refs.stand_ins(bundled):
            problems = _problems(bundled, name) if fatal.validate else []
        if problems and fatal.validation:
            raise SpecError([*map(str, bundled.broken), *map(str, problems)])
        # Not fatal: each problem is a warning ("FILE: /pointer: message") and generation goes on where
        # it can; operations it cannot convert are skipped with their own warning.
        issues = overlay_issues + [Issue(Level.WARNING, b.where, b.message) for b in bundled.broken]
        issues += [Issue(Level.WARNING, p.where, p.message) for p in problems]
        if version == "2.0":
            try:
                converted, conversion_issues = swagger2.convert(bundled.document, source=name)
            except (AttributeError, TypeError, KeyError, ValueError, IndexError):
                if not problems:
                    raise  # a valid document the converter cannot handle is a bug: let it show
                # Too malformed to convert: the validation problems say why, with their pointers.
                raise SpecError([*map(str, problems), f"{name}: cannot convert this Swagger 2.0 document"]) from None
            return LoadedSpec(
                name, converted, version, sha256, tuple(issues + conversion_issues), self_contained=not bundled.origins
            )
    except refs.RefError as exc:
        raise SpecError(exc.problems) from None
    except RecursionError:
        raise SpecError([f"{name}: the document is nested too deeply to process"]) from None
    return LoadedSpec(name, bundled.document, version, sha256, tuple(issues), self_contained=not bundled.origins)


@dataclass(frozen=True, slots=True)
class _Located:
    where: str  # "FILE: /json/pointer" or "FILE"
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def _problems(bundled: refs.Bundle, name: str) -> list[_Located]:
    """Validate the description as written; pointers into bundled parts are mapped back to their files."""
    found = []
    for problem in find_problems(bundled.document):
        origin = refs.locate(bundled.origins, problem.tokens)
        file, tokens = (name, problem.tokens) if origin is None else (origin[0], tuple(pointer.split(origin[1])))
        located = format_problem(file, Problem(tokens, problem.message))
        found.append(_Located(located[: -len(problem.message) - 2], problem.message))
    return found


def _declared_version(document: Any, name: str) -> str:
    if not isinstance(document, dict):
        kind = "empty" if document is None else f"a {type(document).__name__}, not a mapping"
        raise SpecError([f"{name}: not an OpenAPI document (the top level is {kind})"])
    if "openapi" in document:
        version = document["openapi"]
    elif "swagger" in document:
        version = document["swagger"]
    else:
        raise SpecError([f"{name}: not an OpenAPI document (it has no 'openapi' or 'swagger' key)"])
    if not isinstance(version, str):
        raise SpecError([f'{name}: the version must be a string such as "3.0.3"; got {version!r} (quote it in YAML)'])
    if not _SUPPORTED.match(version) or ("swagger" in document) != (version == "2.0"):
        raise SpecError([f"{name}: unsupported version {version!r} (supported: swagger 2.0, openapi 3.0.x and 3.1.x)"])
    return version
