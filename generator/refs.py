"""Bundle a multi-file OpenAPI description into one document that holds only local ``#/...`` refs.

Local refs stay as they are. A ref to another file (or URL) is checked against the loading policy
(files only inside the main spec's folder, URLs only when remote refs are allowed), its target is
copied into the component section matching the kind of object the ref stands for, and the ref is
rewritten to point there. Refs are never inlined: later stages inline and handle cycles.

Naming rule for a bundled target ``FILE#/a/b/Name``: the last fragment token (``Name``), or the file
stem when the ref has no fragment; characters outside ``[A-Za-z0-9._-]`` become ``_``. When that name
is taken in the section it becomes ``<stem>_<Name>``, then ``<Name>_2``, ``<Name>_3``... Names are
handed out in document order, so the output does not depend on hashing or set order.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

from generator import pointer
from generator.ref_walker import BUNDLED_PATH_ITEMS, BUNDLED_UNKNOWN, SECTIONS_V3, RefVisitor, Tokens, Walker

Reader = Callable[[str], Any]
"""Absolute URI without fragment -> parsed document; raises :class:`ReadError`."""

_SECTIONS_V2 = {"schema": "definitions", "parameter": "parameters", "response": "responses"}


class ReadError(Exception):
    """One referenced document cannot be read or parsed; the message names no file."""


class RefError(Exception):
    """References cannot be followed; ``problems`` are ``FILE: /pointer: message`` lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True, slots=True)
class RefPolicy:
    root_dir: str | None  # real path of the folder file refs must stay in; None when the main spec is remote
    allow_remote: bool


@dataclass(frozen=True, slots=True)
class Bundle:
    document: dict[str, Any]
    # location of each bundled component -> (file it came from, JSON pointer in that file)
    origins: Mapping[Tokens, tuple[str, str]]


def bundle(document: dict[str, Any], *, base_uri: str, name: str, policy: RefPolicy, read: Reader) -> Bundle:
    """Return ``document`` with every external ref bundled; the input is never modified.

    Raises:
        RefError: a ref is refused by the policy, cannot be read or does not resolve.
    """
    return _Bundler(document, base_uri=base_uri, name=name, policy=policy, read=read).run()


def locate(origins: Mapping[Tokens, tuple[str, str]], tokens: Tokens) -> tuple[str, str] | None:
    """Map a location in a bundled document back to ``(file, pointer)`` when it lies in a bundled part."""
    for depth in range(len(tokens), 0, -1):
        found = origins.get(tokens[:depth])
        if found is not None:
            return found[0], found[1] + pointer.join(*tokens[depth:])
    return None


def display_name(uri: str) -> str:
    """How problems name a document: a path relative to the working folder when inside it, else as is."""
    if not uri.startswith("file:"):
        return uri
    path = url2pathname(urlsplit(uri).path)
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _copy(node: Any) -> Any:
    """Deep copy of JSON-shaped data, several times faster than :func:`copy.deepcopy`."""
    if isinstance(node, dict):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(value) for value in node]
    return node


def _sanitize(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)


def _stem(uri: str) -> str:
    name = posixpath.basename(unquote(urlsplit(uri).path)) or "bundled"
    for suffix in (".yaml", ".yml", ".json"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)] or "bundled"
    return name


def _name_candidates(uri: str, tokens: Tokens) -> Iterator[str]:
    stem = _sanitize(_stem(uri))
    if not tokens:
        base = stem
    elif tokens[-1].isdigit() and len(tokens) > 1:
        base = _sanitize(f"{tokens[-2]}_{tokens[-1]}")
    else:
        base = _sanitize(tokens[-1]) or stem
    yield base
    if tokens:
        yield f"{stem}_{base}"
    counter = 2
    while True:
        yield f"{base}_{counter}"
        counter += 1


class _Refused(Exception):
    pass


class _Bundler:
    def __init__(self, document: dict[str, Any], *, base_uri: str, name: str, policy: RefPolicy, read: Reader) -> None:
        self.main = document
        self.main_uri = base_uri
        self.name = name
        self.policy = policy
        self.read = read
        self.swagger2 = "swagger" in document
        self.docs: dict[str, Any] = {base_uri: document}
        self.names: dict[str, str] = {base_uri: name}
        self.failed: dict[str, str] = {}
        self.targets: dict[tuple[str, Tokens, Tokens], str] = {}
        self.origins: dict[Tokens, tuple[str, str]] = {}
        self.problems: list[str] = []
        self.resolvable: dict[str, bool] = {}
        self.external = False
        self.output: dict[str, Any] = document

    def run(self) -> Bundle:
        Walker(self._scan, swagger2=self.swagger2).walk(self.main, "document")
        if not self.external:
            if self.problems:
                raise RefError(self.problems)
            return Bundle(self.main, {})
        self.problems = []  # the rewriting walk reports local and external problems in document order
        self.output = _copy(self.main)
        Walker(self._make_rewriter(self.main_uri), swagger2=self.swagger2).walk(self.output, "document")
        if self.problems:
            raise RefError(self.problems)
        return Bundle(self.output, self.origins)

    def _scan(self, holder: dict[str, Any], key: str, kind: str, where: Tokens) -> None:
        ref: str = holder[key]
        if ref.startswith("#"):
            self._check_local(ref, self.name, (*where, key))
        else:
            self.external = True

    def _check_local(self, ref: str, file: str, where: Tokens) -> None:
        found = self.resolvable.get(ref)
        if found is None:
            found = self._resolves(self.main, ref)
            self.resolvable[ref] = found
        if not found:
            self._problem(file, where, f"{ref!r} does not resolve")

    @staticmethod
    def _resolves(document: Any, ref: str) -> bool:
        try:
            pointer.resolve(document, ref)
        except pointer.PointerError:
            return False
        return True

    def _problem(self, file: str, where: Tokens, message: str) -> None:
        self.problems.append(f"{file}: {pointer.join(*where)}: {message}")

    def _make_rewriter(self, doc_uri: str) -> RefVisitor:
        def rewrite(holder: dict[str, Any], key: str, kind: str, where: Tokens) -> None:
            new = self._rewrite(holder[key], kind, doc_uri, (*where, key))
            if new is not None:
                holder[key] = new

        return rewrite

    def _rewrite(self, ref: str, kind: str, doc_uri: str, where: Tokens) -> str | None:
        file = self.names[doc_uri]
        if doc_uri == self.main_uri and self._in_bundled(where):
            return None  # bundled copies were handled when made; the main walk reaches those in later sections
        if ref.startswith("#") and doc_uri == self.main_uri:
            self._check_local(ref, file, where)
            return None
        address, _, fragment = ref.partition("#")
        try:
            target_uri = self._target_uri(address, doc_uri) if address else doc_uri
            tokens = tuple(pointer.split("#" + fragment))
        except (_Refused, pointer.PointerError) as exc:
            self._problem(file, where, str(exc))
            return None
        if target_uri == self.main_uri:
            self._check_local("#" + fragment, file, where)
            return "#" + fragment
        try:
            return self._bundle_target(target_uri, tokens, kind)
        except _Refused as exc:
            self._problem(file, where, str(exc))
            return None

    def _in_bundled(self, where: Tokens) -> bool:
        return where[:2] in self.origins or where[:3] in self.origins

    def _target_uri(self, address: str, doc_uri: str) -> str:
        uri = urljoin(doc_uri, address)
        parts = urlsplit(uri)
        if parts.scheme in ("http", "https"):
            if not self.policy.allow_remote:
                raise _Refused(f"{address!r} is a remote reference; refusing to fetch it (remote refs are not allowed)")
            return parts._replace(fragment="").geturl()
        if parts.scheme != "file":
            raise _Refused(f"{address!r}: unsupported reference scheme {parts.scheme!r}")
        return self._local_uri(address, doc_uri, parts.netloc, parts.path)

    def _local_uri(self, address: str, doc_uri: str, host: str, path: str) -> str:
        root = self.policy.root_dir
        if not doc_uri.startswith("file:") or root is None:
            raise _Refused(f"{address!r}: a remote document cannot refer to local files")
        if host not in ("", "localhost"):
            raise _Refused(f"{address!r}: file URLs on another host are not supported")
        real = os.path.realpath(url2pathname(path))
        if os.path.commonpath([root, real]) != root:
            raise _Refused(f"{address!r} points outside the spec folder {root}; refusing to read it")
        return Path(real).as_uri()

    def _section(self, kind: str) -> Tokens:
        if self.swagger2:
            if kind == "pathItem":
                return (BUNDLED_PATH_ITEMS,)
            return (_SECTIONS_V2.get(kind, BUNDLED_UNKNOWN),)
        if kind == "pathItem" and not str(self.main.get("openapi", "")).startswith("3.0"):
            return ("components", "pathItems")
        if kind == "pathItem":
            return ("components", BUNDLED_PATH_ITEMS)
        return ("components", SECTIONS_V3.get(kind, BUNDLED_UNKNOWN))

    def _section_dict(self, section: Tokens) -> dict[str, Any]:
        node = self.output
        for token in section:
            child = node.get(token)
            if not isinstance(child, dict):
                child = node[token] = {}
            node = child
        return node

    def _bundle_target(self, uri: str, tokens: Tokens, kind: str) -> str:
        section = self._section(kind)
        key = (uri, tokens, section)
        known = self.targets.get(key)
        if known is not None:
            return known
        document = self._document(uri)
        try:
            content = pointer.resolve(document, pointer.join(*tokens))
        except pointer.PointerError:
            raise _Refused(f"{self.names[uri]} has nothing at {pointer.join(*tokens) or '/'}") from None
        entries = self._section_dict(section)
        name = next(c for c in _name_candidates(uri, tokens) if c not in entries)
        local = "#" + pointer.join(*section, name)
        self.targets[key] = local  # before walking the copy, so cycles end here
        self.origins[(*section, name)] = (self.names[uri], pointer.join(*tokens))
        entries[name] = copy = _copy(content)
        Walker(self._make_rewriter(uri), swagger2=self.swagger2, start=tokens).walk(copy, kind)
        return local

    def _document(self, uri: str) -> Any:
        if uri not in self.docs and uri not in self.failed:
            self.names[uri] = display_name(uri)
            try:
                self.docs[uri] = self.read(uri)
            except ReadError as exc:
                self.failed[uri] = f"cannot load {self.names[uri]}: {exc}"
        if uri in self.failed:
            raise _Refused(self.failed[uri])
        return self.docs[uri]
