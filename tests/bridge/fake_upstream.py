"""A fake upstream API (raw ASGI) that records every request and checks it against the spec.

Wire it in with ``httpx.ASGITransport(app=fake)``. Each request is recorded exactly as it arrived
(method, raw path, raw query string, headers, body) and, when a spec is given, validated with
openapi-core as an independent second check of the request builder: tests assert
``fake.violations == []``.

Answers come from ``fake.reply(...)`` (the default answer), ``fake.route(method, path, ...)``
(answers for one raw path), or a handler function for full control.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

import httpx
from openapi_core import Config, OpenAPI
from openapi_core.datatypes import RequestParameters
from werkzeug.datastructures import Headers, ImmutableMultiDict

from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import (
    BodyBinding,
    BodyField,
    Catalogue,
    EnvVar,
    HttpBinding,
    ParamBinding,
    SchemeUse,
    SecurityScheme,
    ServerSpec,
    ToolAnnotationsSpec,
    ToolEntry,
)
from bridge.contract.expressions import json_pointer as jsonpointer
from bridge.secrets.credentials import Credentials
from bridge.upstream.client import Upstream
from bridge.upstream.http_settings import HttpSettings

BASE_URL = "http://upstream.test"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass
class Recorded:
    """One request as the upstream received it."""

    method: str
    raw_path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        values = self.header_all(name)
        return values[0] if values else None

    def header_all(self, name: str) -> list[str]:
        return [v for n, v in self.headers if n.lower() == name.lower()]

    @property
    def target(self) -> str:
        return self.raw_path + (f"?{self.query}" if self.query else "")

    @property
    def query_pairs(self) -> list[tuple[str, str]]:
        return parse_qsl(self.query, keep_blank_values=True)

    @property
    def cookies(self) -> dict[str, str]:
        jar: dict[str, str] = {}
        for header in self.header_all("cookie"):
            for item in header.split(";"):
                name, _, value = item.strip().partition("=")
                if name:
                    jar[name] = value
        return jar

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)


Handler = Callable[[Recorded], Reply | Awaitable[Reply]]


def make_reply(
    status: int = 200,
    *,
    json_body: Any = None,
    body: bytes | str | None = None,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    if json_body is not None:
        raw = json.dumps(json_body).encode()
        content_type = content_type or "application/json"
    elif isinstance(body, str):
        raw = body.encode()
        content_type = content_type or "text/plain; charset=utf-8"
    else:
        raw = body or b""
    return Reply(status=status, body=raw, content_type=content_type, headers=list((headers or {}).items()))


class FakeUpstream:
    """Raw ASGI app: records, validates, answers."""

    def __init__(self, spec: Mapping[str, Any] | None = None, *, unvalidated_paths: tuple[str, ...] = ()) -> None:
        self.requests: list[Recorded] = []
        self.violations: list[str] = []
        self._default: Reply | Handler = Reply(status=200, body=b'{"ok":true}', content_type="application/json")
        self._routes: dict[tuple[str, str], Reply | Handler] = {}
        self._unvalidated = unvalidated_paths
        self._spec = dict(spec) if spec is not None else None
        self._openapi: OpenAPI | None = None
        if self._spec is not None:
            # openapi-core 0.23 only knows a few JSON media types; teach it the spec's `+json` ones.
            extra: dict[str, Callable[[bytes], Any]] = {
                media: _json_loads for media in _media_types(self._spec) if media.endswith("+json")
            }
            config = Config(spec_validator_cls=None, extra_media_type_deserializers=extra)  # type: ignore[arg-type]
            self._openapi = OpenAPI.from_dict(self._spec, config=config)

    # ------------------------------------------------------------------------------ configuration

    def reply(self, status: int = 200, **kwargs: Any) -> None:
        self._default = make_reply(status, **kwargs)

    def handler(self, handler: Handler) -> None:
        self._default = handler

    def route(self, method: str, raw_path: str, answer: Reply | Handler) -> None:
        self._routes[(method.upper(), raw_path)] = answer

    def transport(self) -> httpx.ASGITransport:
        return httpx.ASGITransport(app=self)

    # ------------------------------------------------------------------------------------- ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        raw_path = scope.get("raw_path") or scope["path"].encode()
        recorded = Recorded(
            method=scope["method"],
            raw_path=raw_path.decode("ascii"),
            query=scope.get("query_string", b"").decode("ascii"),
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]],
            body=bytes(body),
        )
        self.requests.append(recorded)
        if self._openapi is not None and not recorded.raw_path.startswith(self._unvalidated or ("\0",)):
            self._validate(recorded)
        answer = self._routes.get((recorded.method, recorded.raw_path), self._default)
        reply = answer if isinstance(answer, Reply) else answer(recorded)
        if not isinstance(reply, Reply):
            reply = await reply
        headers = [(k.lower().encode(), v.encode("latin-1")) for k, v in reply.headers]
        if reply.content_type is not None:
            headers.append((b"content-type", reply.content_type.encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": reply.body})

    # ------------------------------------------------------------------------------- validation

    def _validate(self, recorded: Recorded) -> None:
        assert self._openapi is not None and self._spec is not None
        try:
            request = _OpenAPIRequest(recorded, self._spec)
        except LookupError as exc:
            self.violations.append(f"{recorded.method} {recorded.target}: {exc}")
            return
        try:
            with warnings.catch_warnings():
                # openapi-core cannot check oauth2/openIdConnect credentials; the tests do.
                warnings.filterwarnings("ignore", "Unsupported scheme type", UserWarning)
                errors = list(self._openapi.iter_request_errors(request))
        except Exception as exc:  # openapi-core raises many unrelated types; record them all
            errors = [exc]
        for error in errors:
            self.violations.append(f"{recorded.method} {recorded.target}: {_describe(error)}")


def _describe(exc: BaseException) -> str:
    causes = []
    current: BaseException | None = exc
    while current is not None:
        causes.append(f"{type(current).__name__}: {current}")
        details = getattr(current, "schema_errors", None)
        if details:
            causes.extend(str(d.message) for d in details)
        current = current.__cause__ or current.__context__
    return " <- ".join(causes)


def _json_loads(value: bytes, **parameters: str) -> Any:
    return json.loads(value)


def _media_types(spec: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    for item in spec.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict):
                found.update(operation.get("requestBody", {}).get("content", {}))
    return found


def _template_regex(template: str) -> re.Pattern[str]:
    pattern = ""
    pos = 0
    for match in re.finditer(r"\{([^{}]+)\}", template):
        pattern += re.escape(template[pos : match.start()]) + f"(?P<{_group(match.group(1))}>[^/]+)"
        pos = match.end()
    return re.compile(pattern + re.escape(template[pos:]) + "$")


def _group(name: str) -> str:
    return "p_" + re.sub(r"\W", "_", name)


class _OpenAPIRequest:
    """openapi-core's Request protocol, built from the raw request (no framework involved).

    Path parameters are matched on the raw (encoded) path, so an encoded ``/`` stays inside its
    segment; values are then percent-decoded and keyed the way openapi-core's style
    deserializers look them up (``id``, ``.id``, ``;id*``…).
    """

    def __init__(self, recorded: Recorded, spec: Mapping[str, Any]) -> None:
        server = httpx.URL(spec["servers"][0]["url"])
        base_path = server.path.rstrip("/")
        self.host_url = f"{server.scheme}://{server.netloc.decode()}"
        self.method = recorded.method.lower()
        if not recorded.raw_path.startswith(base_path + "/"):
            raise LookupError(f"path outside the server base path {base_path!r}")
        sub = recorded.raw_path[len(base_path) :]
        for template, raw_item in spec["paths"].items():
            item = jsonpointer.resolve(spec, raw_item["$ref"]) if "$ref" in raw_item else raw_item
            match = _template_regex(template).match(sub)
            if match and self.method in item:
                break
        else:
            raise LookupError("no operation of the spec matches")
        self.path = recorded.raw_path
        self.path_pattern = base_path + template
        params = [*item.get("parameters", []), *item[self.method].get("parameters", [])]
        path_values: dict[str, Any] = {}
        for param in params:
            if param["in"] != "path":
                continue
            raw = match.group(_group(param["name"]))
            style = param.get("style", "simple")
            explode = param.get("explode", False)
            prefix = {"label": ".", "matrix": ";"}.get(style, "")
            key = prefix + param["name"] + ("*" if explode and prefix else "")
            path_values[key] = unquote(raw)
        headers = Headers(recorded.headers)
        self.parameters = RequestParameters(
            path=path_values,
            query=ImmutableMultiDict(recorded.query_pairs),
            header=headers,
            cookie=ImmutableMultiDict({k: unquote(v) for k, v in recorded.cookies.items()}),
        )
        self.body = recorded.body or None
        self.content_type = (recorded.header("content-type") or "application/octet-stream").lower()


# ------------------------------------------------------------------------------- test bindings
# The generator builds bindings from specs in production; tests build them with this small helper
# so they stay independent of it.

_DEFAULT_STYLE = {"path": "simple", "query": "form", "header": "simple", "cookie": "form"}
_BINARY_FORMATS = ("binary", "byte")


def binding_from_spec(
    spec: Mapping[str, Any],
    method: str,
    path: str,
    *,
    media_type: str | None = None,
    flatten: bool = True,
    wrap_output: bool = False,
    accept: tuple[str, ...] = (),
) -> HttpBinding:
    """The HttpBinding of ``method path`` in ``spec``: argument name = parameter/property name."""
    item = spec["paths"][path]
    operation = item[method.lower()]
    params: list[ParamBinding] = []
    for param in [*item.get("parameters", []), *operation.get("parameters", [])]:
        location = param["in"]
        style = param.get("style", _DEFAULT_STYLE[location])
        content = param.get("content")
        schema = param.get("schema", {})
        declared = schema.get("properties") if schema.get("type") == "object" else None
        params.append(
            ParamBinding(
                arg=param["name"] if location != "header" else param["name"].lower().replace("-", "_"),
                wire=param["name"],
                location=location,
                style=style,
                explode=param.get("explode", style == "form"),
                required=param.get("required", location == "path"),
                allow_reserved=param.get("allowReserved", False),
                content_type=next(iter(content)) if content else None,
                # As the generator does: declared properties only, unless the schema allows more.
                members=tuple(declared or ()),
                free_members=schema.get("type") == "object"
                and schema.get("additionalProperties", not declared) is not False,
            )
        )
    body: BodyBinding | None = None
    request_body = operation.get("requestBody")
    if request_body is not None:
        media = media_type or next(iter(request_body["content"]))
        media_obj = request_body["content"][media]
        schema = media_obj.get("schema", {})
        properties = schema.get("properties", {}) if schema.get("type") == "object" else {}
        file_fields = tuple(
            name
            for name, prop in properties.items()
            if prop.get("format") in _BINARY_FORMATS or prop.get("items", {}).get("format") in _BINARY_FORMATS
        )
        json_fields = tuple(
            name
            for name, enc in media_obj.get("encoding", {}).items()
            if enc.get("contentType", "").startswith("application/json")
        )
        required = request_body.get("required", False)
        if flatten and properties:
            fields = tuple(BodyField(arg=name, wire=name) for name in properties)
            body = BodyBinding(
                media_type=media, required=required, fields=fields, file_fields=file_fields, json_fields=json_fields
            )
        else:
            body = BodyBinding(
                media_type=media, required=required, arg="body", file_fields=file_fields, json_fields=json_fields
            )
    security_spec = operation.get("security", spec.get("security", []))
    security = tuple(
        tuple(SchemeUse(scheme=name, scopes=tuple(scopes)) for name, scopes in requirement.items())
        for requirement in security_spec
    )
    return HttpBinding(
        method=method.upper(),
        path=path,
        params=tuple(params),
        body=body,
        security=security,
        wrap_output=wrap_output,
        accept=accept,
    )


def env_name(prefix: str, scheme: str, role: str) -> str:
    scheme_part = re.sub(r"\W", "_", scheme).upper()
    return f"{prefix}_{scheme_part}_{role.upper()}"


def schemes_from_spec(spec: Mapping[str, Any], prefix: str = "TEST") -> dict[str, SecurityScheme]:
    """SecurityScheme objects for ``components.securitySchemes``, env vars named PREFIX_SCHEME_ROLE."""
    schemes: dict[str, SecurityScheme] = {}
    for name, raw in spec.get("components", {}).get("securitySchemes", {}).items():
        kind = raw["type"]
        roles: tuple[str, ...]
        token_url = None
        scopes: tuple[str, ...] = ()
        if kind == "apiKey":
            roles = ("value",)
        elif kind == "http" and raw["scheme"].lower() == "basic":
            roles = ("username", "password")
        elif kind == "oauth2":
            flow = raw.get("flows", {}).get("clientCredentials")
            roles = ("token", "client_id", "client_secret") if flow else ("token",)
            token_url = flow["tokenUrl"] if flow else None
            scopes = tuple(flow.get("scopes", {})) if flow else ()
        else:
            roles = ("token",)
        schemes[name] = SecurityScheme(
            type=kind,
            location=raw.get("in"),
            param_name=raw.get("name"),
            http_scheme=raw.get("scheme"),
            token_url=token_url,
            scopes=scopes,
            env=tuple(EnvVar(role=role, name=env_name(prefix, name, role)) for role in roles),  # type: ignore[arg-type]
        )
    return schemes


def entry_from_spec(
    spec: Mapping[str, Any],
    method: str,
    path: str,
    *,
    name: str | None = None,
    output_schema: Mapping[str, Any] | None = None,
    read_only: bool | None = None,
    **binding_options: Any,
) -> ToolEntry:
    binding = binding_from_spec(spec, method, path, **binding_options)
    operation = spec["paths"][path][method.lower()]
    safe = method.upper() in ("GET", "HEAD") if read_only is None else read_only
    fallback = method.lower() + "_" + re.sub(r"\W+", "_", path).strip("_")
    return ToolEntry(
        name=name or operation.get("operationId") or fallback,
        title=operation.get("summary"),
        description=operation.get("description", operation.get("summary", "")),
        input_schema={"type": "object"},
        output_schema=dict(output_schema) if output_schema is not None else None,
        annotations=ToolAnnotationsSpec(
            readOnlyHint=safe, destructiveHint=method.upper() == "DELETE", idempotentHint=safe, openWorldHint=True
        ),
        binding=binding,
    )


def catalogue_from_spec(spec: Mapping[str, Any], entries: tuple[ToolEntry, ...], prefix: str = "TEST") -> Catalogue:
    return Catalogue(
        name="test",
        title=spec.get("info", {}).get("title", "Test"),
        api_version=spec.get("info", {}).get("version", "1"),
        env_prefix=prefix,
        servers=tuple(ServerSpec(url=s["url"]) for s in spec.get("servers", [])),
        security_schemes=schemes_from_spec(spec, prefix),
        tools=entries,
    )


def runtime_for(
    fake: FakeUpstream,
    catalogue: Catalogue,
    *,
    environ: Mapping[str, str] | None = None,
    base_url: str | None = None,
    settings: HttpSettings | None = None,
    clock: Callable[[], float] | None = None,
) -> HttpRuntime:
    """An HttpRuntime whose API calls and token requests all go to ``fake``."""
    settings = settings or HttpSettings()
    url = httpx.URL(base_url or catalogue.servers[0].url)
    options: dict[str, Any] = {"clock": clock} if clock is not None else {}
    credentials = Credentials(
        catalogue.security_schemes, environ or {}, base_url=url, transport=fake.transport(), **options
    )
    upstream = Upstream(url, settings=settings, transport=fake.transport(), redact=credentials.redact)
    return HttpRuntime(upstream=upstream, credentials=credentials, base_url=url, settings=settings)
