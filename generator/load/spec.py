"""Load an OpenAPI 2.0/3.0/3.1 description from a file, a URL or text into one bundled 3.x document.

This is the generator's front door: it reads YAML or JSON (told apart by content), refuses what is
not OpenAPI, bundles external refs under the loading policy (:mod:`generator.load.refs`), validates the
description as the user wrote it (:mod:`generator.load.validate`) and converts Swagger 2.0
(:mod:`generator.load.swagger2`). Anything that stops loading is raised as one :class:`SpecError`
carrying every problem found, one ``FILE: /json/pointer: message`` line each.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
import zlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import httpx
import yaml

from bridge.contract.expressions import json_pointer as pointer
from generator.issues import Issue, Level
from generator.load import refs, swagger2
from generator.load.validate import Problem, find_problems, format_problem
from generator.options import DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_SPEC_BYTES

if TYPE_CHECKING:
    from generator.load.overlays.document import Overlay

__all__ = ["LoadedSpec", "SpecError", "load_document_text", "load_spec", "parse_document"]

# Expanded node count above which a YAML document with aliases is refused (a "billion laughs" guard).
MAX_EXPANDED_NODES = 5_000_000
_SUPPORTED = re.compile(r"^(2\.0|3\.[01]\.\d+)$")
_YAML_TIMESTAMP = "tag:yaml.org,2002:timestamp"


@dataclass(frozen=True, slots=True)
class LoadedSpec:
    source: str  # the path or URL as given
    document: dict[str, Any]  # OpenAPI 3.x shape, only local "#/..." refs
    original_version: str  # "2.0", "3.0.3", "3.1.0" as declared by the spec
    sha256: str  # hex SHA-256 of the raw bytes of the main file
    issues: tuple[Issue, ...]  # warnings; errors are raised as SpecError


class SpecError(Exception):
    """The description cannot be loaded; ``problems`` holds one ``FILE: /pointer: message`` line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


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
        from generator.load.overlays.apply import apply_overlays  # it imports this module

        document, overlay_issues = apply_overlays(document, overlays)
    version = _declared_version(document, name)

    def read(uri: str) -> Any:
        return _read_reference(uri, timeout=timeout, max_bytes=max_bytes)

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
            return LoadedSpec(name, converted, version, sha256, tuple(issues + conversion_issues))
    except refs.RefError as exc:
        raise SpecError(exc.problems) from None
    except RecursionError:
        raise SpecError([f"{name}: the document is nested too deeply to process"]) from None
    return LoadedSpec(name, bundled.document, version, sha256, tuple(issues))


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


# --- reading --------------------------------------------------------------------------------------


def read_file(path: str, *, max_bytes: int, regular_only: bool = False) -> bytes:
    """The bytes of ``path``, at most ``max_bytes``.

    Raises:
        refs.ReadError: missing, unreadable, not a regular file (with ``regular_only``) or too large.
    """
    try:
        if regular_only and not stat.S_ISREG(os.stat(path).st_mode):
            raise refs.ReadError("not a regular file")
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise refs.ReadError("file not found") from None
    except IsADirectoryError:
        raise refs.ReadError("is a folder, not a file") from None
    except OSError as exc:
        raise refs.ReadError(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise refs.ReadError(f"larger than the {max_bytes}-byte limit")
    return data


def fetch_url(url: str, *, timeout: float, max_bytes: int) -> bytes:
    """GET ``url`` streamed, within ``timeout`` seconds overall and ``max_bytes`` decoded bytes.

    Raises:
        refs.ReadError: network failure, non-200 status, too slow or too large.
    """
    deadline = time.monotonic() + timeout
    # identity first: a gzip body is inflated here with a bound, never by httpx in one go
    headers = {"Accept-Encoding": "identity", "Accept": "application/json, application/yaml;q=0.9, */*;q=0.5"}
    try:
        with (
            httpx.Client(timeout=timeout, follow_redirects=True) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            if response.status_code != httpx.codes.OK:
                raise refs.ReadError(f"HTTP {response.status_code} {response.reason_phrase}")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise refs.ReadError(f"larger than the {max_bytes}-byte limit ({declared} bytes declared)")
            return _read_body(response, response.headers.get("content-encoding", ""), deadline, max_bytes)
    except httpx.TimeoutException:
        raise refs.ReadError(f"timed out after {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise refs.ReadError(f"cannot fetch: {exc}") from None


def _read_body(response: httpx.Response, encoding: str, deadline: float, max_bytes: int) -> bytes:
    encoding = encoding.strip().lower()
    if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
        raise refs.ReadError(f"unsupported content-encoding {encoding!r}")
    inflater = None if encoding in ("", "identity") else zlib.decompressobj(zlib.MAX_WBITS | 32)
    body = bytearray()
    for chunk in response.iter_raw():
        room = max_bytes - len(body)
        data = chunk if inflater is None else inflater.decompress(chunk, room + 1)
        if len(data) > room:
            raise refs.ReadError(f"larger than the {max_bytes}-byte limit")
        body += data
        # httpx timeouts apply per read; a server dripping bytes would otherwise never time out
        if time.monotonic() > deadline:
            raise refs.ReadError("timed out while reading the body")
    return bytes(body)


def _read_reference(uri: str, *, timeout: float, max_bytes: int) -> Any:
    if uri.startswith("file:"):
        raw = read_file(url2pathname(urlsplit(uri).path), max_bytes=max_bytes, regular_only=True)
    else:
        raw = fetch_url(uri, timeout=timeout, max_bytes=max_bytes)
    return parse_document(raw, name=urlsplit(uri).path)


# --- parsing --------------------------------------------------------------------------------------


class _SpecLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML loader keeping keys (``200:``, ``on:``) and timestamps as the text written in the file."""

    aliases_used = False

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        self.flatten_mapping(node)
        mapping: dict[Hashable, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise yaml.constructor.ConstructorError(
                    None, None, "mapping keys must be plain values", key_node.start_mark
                )
            mapping[key_node.value] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects and isinstance(node, yaml.CollectionNode):
            self.aliases_used = True
        return super().construct_object(node, deep=deep)


_SpecLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _YAML_TIMESTAMP]
    for first, resolvers in _SpecLoader.yaml_implicit_resolvers.items()
}
_SpecLoader.add_constructor(_YAML_TIMESTAMP, lambda loader, node: loader.construct_scalar(node))


_JSON_START = re.compile(r'\s*(\{\s*("|\})|\[)')  # `{"key"`, `{}` or `[`: JSON, not flow-style YAML


def parse_document(raw: bytes, *, name: str = "") -> Any:
    """Parse JSON or YAML, chosen by content: JSON first when the text starts with ``{`` (it is faster).

    A ``.json`` file, or text that looks like JSON, is JSON only: YAML would accept its syntax
    errors (a trailing comma) and report nothing.

    Raises:
        refs.ReadError: not UTF-8, not parseable (with line and column), or an alias bomb.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise refs.ReadError(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    json_only = name.lower().endswith(".json") or _JSON_START.match(text) is not None
    json_error: json.JSONDecodeError | None = None
    if json_only or text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            json_error = exc
        except RecursionError:
            raise refs.ReadError("nested too deeply") from None
    if json_error is not None and json_only:
        raise refs.ReadError(_json_message(json_error)) from None
    try:
        return _parse_yaml(text)
    except yaml.YAMLError as exc:
        if json_error is not None:
            raise refs.ReadError(_json_message(json_error)) from None
        raise refs.ReadError(_yaml_message(exc)) from None
    except RecursionError:
        raise refs.ReadError("nested too deeply") from None


def _json_message(exc: json.JSONDecodeError) -> str:
    return f"line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"


def _parse_yaml(text: str) -> Any:
    loader = _SpecLoader(text)
    try:
        document = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.aliases_used and _expanded_size(document, MAX_EXPANDED_NODES) > MAX_EXPANDED_NODES:
        raise refs.ReadError(f"YAML aliases expand to more than {MAX_EXPANDED_NODES} nodes")
    return document


def _expanded_size(node: Any, limit: int, seen: dict[int, int] | None = None) -> int:
    """Node count with aliases expanded, computed once per shared object so a bomb costs little."""
    if not isinstance(node, (dict, list)):
        return 1
    seen = {} if seen is None else seen
    known = seen.get(id(node))
    if known is not None:
        return known
    seen[id(node)] = limit + 1  # a node that contains itself expands forever
    total = 1
    for child in node.values() if isinstance(node, dict) else node:
        total += _expanded_size(child, limit, seen)
        if total > limit:
            break
    seen[id(node)] = total
    return total


def _yaml_message(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"line {mark.line + 1}, column {mark.column + 1}: invalid YAML: {exc.problem}"
    return "invalid YAML: " + " ".join(str(exc).split())
