"""Reading one document: a file or URL within a byte limit, parsed as JSON or YAML (told apart by content).

The spec, its external refs, overlays and Arazzo documents are all read here, so every one gets
the same limits: a byte cap, a deadline for URLs, no YAML alias bomb, and one :class:`SpecError`
(or ``refs.ReadError``) that names the file.
"""

from __future__ import annotations

import contextvars
import json
import os
import re
import stat
import time
import zlib
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import httpx
import yaml

from generator.load import refs

__all__ = [
    "MAX_EXPANDED_NODES",
    "SpecError",
    "fetch_url",
    "parse_document",
    "pinned_files",
    "read_file",
    "read_reference",
]

# Expanded node count above which a YAML document with aliases is refused (a "billion laughs" guard).
MAX_EXPANDED_NODES = 5_000_000

_YAML_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class SpecError(Exception):
    """The description cannot be loaded; ``problems`` holds one ``FILE: /pointer: message`` line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


_PINNED: contextvars.ContextVar[Mapping[str, bytes] | None] = contextvars.ContextVar("pinned_files", default=None)


@contextmanager
def pinned_files(files: Mapping[str, bytes]) -> Iterator[None]:
    """While inside, a read of one of ``files`` (by real path) answers the bytes given, not the disk's.

    ``serve spec.yaml`` keys its catalogue cache by the bytes of the spec, overlays and workflows:
    generating from those same bytes, rather than a second read, means a file saved during start-up
    cannot leave an entry whose catalogue is of another version than its key says.
    """
    token = _PINNED.set({os.path.realpath(path): data for path, data in files.items()})
    try:
        yield
    finally:
        _PINNED.reset(token)


def read_file(path: str, *, max_bytes: int, regular_only: bool = False) -> bytes:
    """The bytes of ``path``, at most ``max_bytes`` (the pinned bytes, inside :func:`pinned_files`).

    Raises:
        refs.ReadError: missing, unreadable, not a regular file (with ``regular_only``) or too large.
    """
    pinned = _PINNED.get()
    data = pinned.get(os.path.realpath(path)) if pinned else None
    if data is not None:
        if len(data) > max_bytes:
            raise refs.ReadError(f"larger than the {max_bytes}-byte limit")
        return data
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


def read_reference(uri: str, *, timeout: float, max_bytes: int) -> Any:
    if uri.startswith("file:"):
        raw = read_file(url2pathname(urlsplit(uri).path), max_bytes=max_bytes, regular_only=True)
    else:
        raw = fetch_url(uri, timeout=timeout, max_bytes=max_bytes)
    return parse_document(raw, name=urlsplit(uri).path)


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
