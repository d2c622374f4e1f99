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
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

from bridge.contract.expressions import json_pointer as pointer
from generator.load.ref_walker import BUNDLED_PATH_ITEMS, BUNDLED_UNKNOWN, SECTIONS_V3, RefVisitor, Tokens, Walker

__all__ = [
    "BUNDLED_PATH_ITEMS",
    "BUNDLED_UNKNOWN",
    "BrokenRef",
    "Bundle",
    "ReadError",
    "RefError",
    "RefPolicy",
    "bundle",
    "display_name",
    "locate",
    "stand_ins",
]

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
class BrokenRef:
    """A reference that cannot be followed (lenient bundling), left in the document spelled so that it
    never resolves: as written when it is local or refused, else ``FILE#fragment`` with the file
    named as problems name it. Whatever converts a part that holds it fails there, naming it."""

    holder: dict[str, Any]  # the object holding the reference, in the bundled document
    key: str  # "$ref", or the name of a discriminator mapping entry
    kind: str  # what the reference stands for: "schema", "parameter", "response"...
    where: str  # "FILE: /json/pointer" of the reference as written
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Bundle:
    document: dict[str, Any]
    # location of each bundled component -> (file it came from, JSON pointer in that file)
    origins: Mapping[Tokens, tuple[str, str]]
    broken: tuple[BrokenRef, ...] = ()  # only with lenient bundling


def bundle(
    document: dict[str, Any], *, base_uri: str, name: str, policy: RefPolicy, read: Reader, lenient: bool = False
) -> Bundle:
    """Return ``document`` with every external ref bundled; the input is never modified.

    ``lenient``: a ref that cannot be followed is no error but a :class:`BrokenRef` of the result,
    so one missing file costs the operations that need it, not the whole spec.

    Raises:
        RefError: (not ``lenient``) a ref is refused by the policy, cannot be read or does not resolve.
    """
    return _Bundler(document, base_uri=base_uri, name=name, policy=policy, read=read).run(lenient=lenient)


STAND_INS = "x-mcp-bridge-stand-ins"


@contextmanager
def stand_ins(bundled: Bundle) -> Iterator[dict[str, Any]]:
    """``bundled.document`` with every broken ref pointing at a valid stand-in of its kind, for as long
    as the block runs (the validator stops at the first ref it cannot resolve, hiding the rest)."""
    document = bundled.document
    if not bundled.broken:
        yield document
        return
    swagger2 = "swagger" in document
    saved = [(broken, broken.holder[broken.key]) for broken in bundled.broken]
    before = document.get(STAND_INS)
    stubs: dict[str, Any] = {}
    for number, broken in enumerate(bundled.broken):
        name = f"{broken.kind}_{number}"
        stubs[name] = _stand_in(broken.kind, number, swagger2=swagger2)
        broken.holder[broken.key] = f"#/{STAND_INS}/{name}"
    document[STAND_INS] = stubs
    try:
        yield document
    finally:
        if before is None:
            del document[STAND_INS]
        else:
            document[STAND_INS] = before
        for broken, value in saved:
            broken.holder[broken.key] = value


def _stand_in(kind: str, number: int, *, swagger2: bool) -> dict[str, Any]:
    """The smallest valid object of ``kind``; parameters get their own names (no duplicates)."""
    if kind == "parameter":
        typed: dict[str, Any] = {"type": "string"} if swagger2 else {"schema": {}}
        return {"name": f"{STAND_INS}-{number}", "in": "header", **typed}
    if kind == "response":
        return {"description": "stand-in for a broken reference"}
    if kind == "requestBody":
        return {"content": {}}
    if kind == "header":
        return {"type": "string"} if swagger2 else {"schema": {}}
    if kind == "securityScheme":
        return {"type": "basic"} if swagger2 else {"type": "http", "scheme": "basic"}
    return {}


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


class _Broken(Exception):
    """A reference cannot be followed; ``spelling`` is how the bundled document keeps it."""

    def __init__(self, message: str, spelling: str) -> None:
        super().__init__(message)
        self.spelling = spelling


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
        self.broken: list[BrokenRef] = []
        self.resolvable: dict[str, bool] = {}
        self.external = False
        self.output: dict[str, Any] = document

    def run(self, *, lenient: bool) -> Bundle:
        Walker(self._scan, swagger2=self.swagger2).walk(self.main, "document")
        if self.external:
            # the rewriting walk reports local and external problems in document order
            self.problems, self.broken = [], []
            self.output = _copy(self.main)
            Walker(self._make_rewriter(self.main_uri), swagger2=self.swagger2).walk(self.output, "document")
        if self.problems and not lenient:
            raise RefError(self.problems)
        return Bundle(self.output, self.origins if self.external else {}, tuple(self.broken))

    def _scan(self, holder: dict[str, Any], key: str, kind: str, where: Tokens) -> None:
        ref: str = holder[key]
        if not ref.startswith("#"):
            self.external = True
        elif not self._local_ok(ref):
            self._broken(holder, key, kind, self.name, (*where, key), _Broken(f"{ref!r} does not resolve", ref))

    def _local_ok(self, ref: str) -> bool:
        found = self.resolvable.get(ref)
        if found is None:
            found = self.resolvable[ref] = self._resolves(self.main, ref)
        return found

    def _require_local(self, ref: str) -> None:
        if not self._local_ok(ref):
            raise _Broken(f"{ref!r} does not resolve", ref)

    def _broken(self, holder: dict[str, Any], key: str, kind: str, file: str, where: Tokens, exc: _Broken) -> None:
        holder[key] = exc.spelling
        self._problem(file, where, str(exc))
        self.broken.append(BrokenRef(holder, key, kind, f"{file}: {pointer.join(*where)}", str(exc)))

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
            spot = (*where, key)
            try:
                new = self._rewrite(holder[key], kind, doc_uri, spot)
            except _Broken as exc:
                self._broken(holder, key, kind, self.names[doc_uri], spot, exc)
                return
            if new is not None:
                holder[key] = new

        return rewrite

    def _rewrite(self, ref: str, kind: str, doc_uri: str, where: Tokens) -> str | None:
        """The bundled spelling of ``ref`` (None: keep it); raises _Broken."""
        if doc_uri == self.main_uri and self._in_bundled(where):
            return None  # bundled copies were handled when made; the main walk reaches those in later sections
        if ref.startswith("#") and doc_uri == self.main_uri:
            self._require_local(ref)
            return None
        address, _, fragment = ref.partition("#")
        try:
            target_uri = self._target_uri(address, doc_uri) if address else doc_uri
        except _Refused as exc:
            raise _Broken(str(exc), ref) from None
        local = target_uri == self.main_uri
        # A local spelling of a broken ref into another file could resolve in the main document.
        spelling = "#" + fragment if local else display_name(target_uri) + ("#" + fragment if fragment else "")
        try:
            tokens = tuple(pointer.split("#" + fragment))
        except pointer.PointerError as exc:
            raise _Broken(str(exc), spelling) from None
        if local:
            self._require_local("#" + fragment)
            return "#" + fragment
        try:
            return self._bundle_target(target_uri, tokens, kind)
        except _Refused as exc:
            raise _Broken(str(exc), spelling) from None

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
