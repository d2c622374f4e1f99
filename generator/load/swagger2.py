"""Convert a bundled Swagger 2.0 document into the OpenAPI 3.0.3 shape the rest of the generator reads.

The input is never modified. Anything 3.0 cannot say exactly (``tsv`` arrays, ``ws`` schemes,
``body`` next to ``formData``) is converted as closely as possible and reported as a warning.
"""

from __future__ import annotations

from typing import Any

from bridge.contract.expressions import json_pointer as pointer
from generator.issues import Issue, Level
from generator.load.azure import parameterized_servers
from generator.load.refs import BUNDLED_PATH_ITEMS, BUNDLED_UNKNOWN

Tokens = tuple[str, ...]

OPENAPI_VERSION = "3.0.3"
DEFAULT_MEDIA_TYPE = "application/json"
FORM_URLENCODED = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
OCTET_STREAM = "application/octet-stream"

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
_OPERATION_KEYS = ("tags", "summary", "description", "externalDocs", "operationId")
_PARAMETER_SCHEMA_KEYS = (
    "type",
    "format",
    "enum",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
)
_REF_PREFIXES = {
    "#/definitions/": "#/components/schemas/",
    "#/responses/": "#/components/responses/",
    "#/parameters/": "#/components/parameters/",
    f"#/{BUNDLED_PATH_ITEMS}/": f"#/components/{BUNDLED_PATH_ITEMS}/",
    f"#/{BUNDLED_UNKNOWN}/": f"#/components/{BUNDLED_UNKNOWN}/",
}
_OAUTH2_FLOWS = {
    "implicit": ("implicit", ("authorizationUrl",)),
    "password": ("password", ("tokenUrl",)),
    "application": ("clientCredentials", ("tokenUrl",)),
    "accessCode": ("authorizationCode", ("authorizationUrl", "tokenUrl")),
}
_BINARY = {"type": "string", "format": "binary"}


def convert(document: dict[str, Any], *, source: str = "spec") -> tuple[dict[str, Any], list[Issue]]:
    """Return the 3.0.3 form of a Swagger 2.0 ``document`` and warnings about what did not map exactly."""
    converter = _Converter(document, source)
    return converter.run(), converter.issues


def _copy(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(value) for value in node]
    return node


def _extensions(node: dict[str, Any]) -> dict[str, Any]:
    return {key: _copy(value) for key, value in node.items() if key.startswith("x-")}


_UNRESOLVED = "x-unresolved"  # the "in" of a parameter whose $ref does not resolve


def _media_types(value: Any, default: list[str]) -> list[str]:
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return list(dict.fromkeys(value))
    return default


def _is_json(media_type: str) -> bool:
    essence = media_type.split(";")[0].strip().lower()
    return essence == DEFAULT_MEDIA_TYPE or essence.endswith("+json")


class _Converter:
    def __init__(self, document: dict[str, Any], source: str) -> None:
        self.doc = document
        self.source = source
        self.issues: list[Issue] = []
        self.consumes = _media_types(document.get("consumes"), [DEFAULT_MEDIA_TYPE])
        self.produces = _media_types(document.get("produces"), [DEFAULT_MEDIA_TYPE])
        parameters = document.get("parameters")
        self.global_parameters: dict[str, Any] = parameters if isinstance(parameters, dict) else {}

    def warn(self, where: Tokens, detail: str) -> None:
        self.issues.append(Issue(Level.WARNING, f"{self.source}: {pointer.join(*where)}", detail))

    def run(self) -> dict[str, Any]:
        doc = self.doc
        out: dict[str, Any] = {"openapi": OPENAPI_VERSION, "info": _copy(doc.get("info", {}))}
        if "externalDocs" in doc:
            out["externalDocs"] = _copy(doc["externalDocs"])
        out["servers"] = self._servers()
        for key in ("tags", "security"):
            if key in doc:
                out[key] = _copy(doc[key])
        out["paths"] = self._paths(doc.get("paths"))
        components = self._components()
        if components:
            out["components"] = components
        for key, value in _extensions(doc).items():
            if key not in (BUNDLED_PATH_ITEMS, BUNDLED_UNKNOWN):
                out[key] = value
        return out

    # --- top level -------------------------------------------------------------------------------

    def _servers(self) -> list[dict[str, Any]]:
        host = self.doc.get("host")
        base_path = self.doc.get("basePath")
        base = base_path if isinstance(base_path, str) else ""
        if base and not base.startswith("/"):
            base = "/" + base
        if "x-ms-parameterized-host" in self.doc:
            parameterized = parameterized_servers(self.doc, self._schemes(), base, self._resolve, self.warn)
            if parameterized is not None:
                return parameterized
        if not isinstance(host, str) or not host:
            return [{"url": base or "/"}]
        return [{"url": f"{scheme}://{host}{base.rstrip('/')}"} for scheme in self._schemes()]

    def _schemes(self) -> list[str]:
        schemes = self.doc.get("schemes")
        declared = schemes if isinstance(schemes, list) and schemes else ["https"]
        usable = [scheme for scheme in declared if scheme in ("http", "https")]
        if len(usable) < len(declared):
            self.warn(("schemes",), "only http and https servers are kept; other schemes are dropped")
        return usable or ["https"]

    def _paths(self, paths: Any) -> dict[str, Any]:
        if not isinstance(paths, dict):
            return {}
        out: dict[str, Any] = {}
        for path, item in paths.items():
            if path.startswith("x-"):
                out[path] = _copy(item)
            elif isinstance(item, dict):
                out[path] = self._path_item(item, ("paths", path))
        return out

    def _components(self) -> dict[str, Any]:
        doc = self.doc
        components: dict[str, Any] = {}
        definitions = doc.get("definitions")
        if isinstance(definitions, dict):
            components["schemas"] = {name: self._schema(schema) for name, schema in definitions.items()}
        responses = doc.get("responses")
        if isinstance(responses, dict):
            components["responses"] = {
                name: self._response(response, self.produces, ("responses", name))
                for name, response in responses.items()
            }
        self._global_parameters(components)
        schemes = doc.get("securityDefinitions")
        if isinstance(schemes, dict):
            components["securitySchemes"] = {
                name: self._security_scheme(scheme, ("securityDefinitions", name)) for name, scheme in schemes.items()
            }
        path_items = doc.get(BUNDLED_PATH_ITEMS)
        if isinstance(path_items, dict):
            components[BUNDLED_PATH_ITEMS] = {
                name: self._path_item(item, (BUNDLED_PATH_ITEMS, name)) for name, item in path_items.items()
            }
        if BUNDLED_UNKNOWN in doc:
            components[BUNDLED_UNKNOWN] = self._rewrite_refs(_copy(doc[BUNDLED_UNKNOWN]))
        return components

    def _global_parameters(self, components: dict[str, Any]) -> None:
        parameters: dict[str, Any] = {}
        bodies: dict[str, Any] = {}
        for name, param in self.global_parameters.items():
            where = ("parameters", name)
            location = param.get("in") if isinstance(param, dict) else None
            if location == "body":
                bodies[name] = self._request_body(param, self.consumes)
            elif location != "formData" and isinstance(param, dict):
                parameters[name] = self._parameter(param, where)
            # formData parameters have no 3.0 component; operations that use them get them inlined
        if parameters:
            components["parameters"] = parameters
        if bodies:
            components["requestBodies"] = bodies

    def _security_scheme(self, scheme: dict[str, Any], where: Tokens) -> dict[str, Any]:
        kind = scheme.get("type")
        out: dict[str, Any]
        if kind == "basic":
            out = {"type": "http", "scheme": "basic"}
        elif kind == "apiKey":
            out = {"type": "apiKey", "name": scheme.get("name"), "in": scheme.get("in")}
        elif kind == "oauth2" and scheme.get("flow") in _OAUTH2_FLOWS:
            flow_name, url_keys = _OAUTH2_FLOWS[scheme["flow"]]
            flow = {key: scheme.get(key) for key in url_keys}
            flow["scopes"] = _copy(scheme.get("scopes") or {})
            out = {"type": "oauth2", "flows": {flow_name: flow}}
        else:
            self.warn(where, f"unknown security scheme type {kind!r} (flow {scheme.get('flow')!r}); copied unchanged")
            return dict(_copy(scheme))
        if "description" in scheme:
            out["description"] = scheme["description"]
        out.update(_extensions(scheme))
        return out

    # --- references ------------------------------------------------------------------------------

    def _ref(self, ref: str) -> str:
        for old, new in _REF_PREFIXES.items():
            if ref.startswith(old):
                if old == "#/parameters/" and self._global_location(ref) == "body":
                    return "#/components/requestBodies/" + ref[len(old) :]
                return new + ref[len(old) :]
        return ref

    def _global_location(self, ref: str) -> Any:
        target = self._resolve(ref)
        return target.get("in") if isinstance(target, dict) else None

    def _resolve(self, ref: str) -> Any:
        try:
            return pointer.resolve(self.doc, ref)
        except pointer.PointerError:
            return None

    def _rewrite_refs(self, node: Any) -> Any:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str):
                    node[key] = self._ref(value)
                else:
                    self._rewrite_refs(value)
        elif isinstance(node, list):
            for value in node:
                self._rewrite_refs(value)
        return node

    # --- schemas ---------------------------------------------------------------------------------

    def _schema(self, node: Any) -> Any:
        if not isinstance(node, dict):
            return _copy(node)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out[key] = self._ref(value)
            elif key == "x-nullable":
                if value is True:
                    out["nullable"] = True
            elif key == "discriminator" and isinstance(value, str):
                out[key] = {"propertyName": value}
            elif key in ("properties", "patternProperties") and isinstance(value, dict):
                out[key] = {name: self._schema(sub) for name, sub in value.items()}
            elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
                out[key] = self._schema(value)
            elif key in ("allOf", "anyOf", "oneOf", "items") and isinstance(value, list):
                out[key] = [self._schema(sub) for sub in value]
            else:
                out[key] = _copy(value)
        if out.get("type") == "file":
            out.update(_BINARY)
        if "$ref" in out and out.get("nullable") is True:
            # 3.0 ignores keywords next to $ref; allOf keeps "nullable" meaningful
            out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
        return out

    def _value_schema(self, node: dict[str, Any]) -> dict[str, Any]:
        """Schema of a non-body parameter, header or items object, whose keywords sit on the object itself."""
        if isinstance(node.get("$ref"), str):
            return {"$ref": self._ref(node["$ref"])}
        schema = {key: _copy(node[key]) for key in _PARAMETER_SCHEMA_KEYS if key in node}
        items = node.get("items")
        if isinstance(items, dict):
            schema["items"] = self._value_schema(items)
        if schema.get("type") == "file":
            schema.update(_BINARY)
        if node.get("x-nullable") is True:
            schema["nullable"] = True
        return schema

    # --- paths and operations --------------------------------------------------------------------

    def _path_item(self, item: dict[str, Any], where: Tokens) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if isinstance(item.get("$ref"), str):
            out["$ref"] = self._ref(item["$ref"])
        for key in ("summary", "description"):
            if key in item:
                out[key] = item[key]
        entries = self._parameter_entries(item.get("parameters"), (*where, "parameters"))
        shared = [entry for entry in entries if entry[1].get("in") not in ("body", "formData")]
        moved = [entry for entry in entries if entry[1].get("in") in ("body", "formData")]
        if shared:
            out["parameters"] = [self._parameter_or_ref(*entry) for entry in shared]
        for method, operation in item.items():
            if method in _METHODS and isinstance(operation, dict):
                out[method] = self._operation(operation, moved, (*where, method))
        out.update(_extensions(item))
        return out

    def _parameter_entries(self, params: Any, where: Tokens) -> list[tuple[Any, dict[str, Any], Tokens]]:
        """(entry as written, parameter it stands for, pointer) for each usable parameter."""
        entries: list[tuple[Any, dict[str, Any], Tokens]] = []
        for index, entry in enumerate(params if isinstance(params, list) else []):
            at = (*where, str(index))
            param = entry
            if isinstance(entry, dict) and isinstance(entry.get("$ref"), str):
                param = self._resolve(entry["$ref"])
                if param is None:
                    # kept as a ref: the operation is skipped when parsed, naming it, not served without it
                    entries.append((entry, {"in": _UNRESOLVED}, at))
                    continue
            if not isinstance(param, dict) or not isinstance(param.get("in"), str):
                self.warn(at, "parameter cannot be resolved; skipped")
                continue
            entries.append((entry, param, at))
        return entries

    def _operation(
        self, operation: dict[str, Any], inherited: list[tuple[Any, dict[str, Any], Tokens]], where: Tokens
    ) -> dict[str, Any]:
        out: dict[str, Any] = {key: _copy(operation[key]) for key in _OPERATION_KEYS if key in operation}
        own = self._parameter_entries(operation.get("parameters"), (*where, "parameters"))
        overridden = {(param.get("name"), param.get("in")) for _, param, _ in own}
        entries = [entry for entry in inherited if (entry[1].get("name"), entry[1].get("in")) not in overridden]
        entries += own
        plain = [entry for entry in entries if entry[1]["in"] not in ("body", "formData")]
        if plain:
            out["parameters"] = [self._parameter_or_ref(*entry) for entry in plain]
        body = self._operation_body(operation, entries, where)
        if body is not None:
            out["requestBody"] = body
        produces = _media_types(operation.get("produces"), self.produces)
        responses = operation.get("responses")
        if isinstance(responses, dict):
            out["responses"] = self._responses(responses, produces, (*where, "responses"))
        for key in ("deprecated", "security"):
            if key in operation:
                out[key] = _copy(operation[key])
        out.update(_extensions(operation))
        return out

    def _operation_body(
        self, operation: dict[str, Any], entries: list[tuple[Any, dict[str, Any], Tokens]], where: Tokens
    ) -> dict[str, Any] | None:
        consumes = _media_types(operation.get("consumes"), self.consumes)
        bodies = [entry for entry in entries if entry[1]["in"] == "body"]
        form = [(param, at) for _, param, at in entries if param["in"] == "formData"]
        if bodies and form:
            self.warn(where, "has both body and formData parameters; the formData parameters are dropped")
        if bodies:
            entry, param, _ = bodies[-1]
            if isinstance(entry, dict) and "$ref" in entry and consumes == self.consumes:
                return {"$ref": self._ref(entry["$ref"])}
            return self._request_body(param, consumes)
        if form:
            return self._form_body(form, consumes)
        return None

    # --- parameters and bodies -------------------------------------------------------------------

    def _parameter_or_ref(self, entry: Any, param: dict[str, Any], where: Tokens) -> dict[str, Any]:
        if param.get("in") == _UNRESOLVED:
            return {"$ref": self._ref(entry["$ref"])}
        if isinstance(entry, dict) and isinstance(entry.get("$ref"), str) and entry["$ref"].startswith("#/parameters/"):
            return {"$ref": self._ref(entry["$ref"])}
        return self._parameter(param, where)

    def _parameter(self, param: dict[str, Any], where: Tokens) -> dict[str, Any]:
        location = param.get("in")
        out: dict[str, Any] = {"name": param.get("name"), "in": location}
        for key in ("description", "required", "deprecated", "allowEmptyValue"):
            if key in param:
                out[key] = param[key]
        if location == "path":
            out["required"] = True
        out["schema"] = self._value_schema(param)
        if param.get("type") == "array":
            out.update(self._style(param.get("collectionFormat"), str(location), where))
        out.update(_extensions(param))
        return out

    def _style(self, collection_format: Any, location: str, where: Tokens) -> dict[str, Any]:
        simple = {"style": "simple", "explode": False}
        plain = simple if location in ("path", "header") else {"style": "form", "explode": False}
        if collection_format in (None, "csv"):
            return plain
        if collection_format == "multi" and location in ("query", "formData"):
            return {"style": "form", "explode": True}
        delimited = {"ssv": "spaceDelimited", "pipes": "pipeDelimited"}.get(str(collection_format))
        if delimited and location in ("query", "formData"):
            return {"style": delimited, "explode": False}
        if collection_format == "tsv":
            self.warn(where, "collectionFormat tsv has no OpenAPI 3 equivalent; values are sent comma-separated")
        else:
            self.warn(
                where, f"collectionFormat {collection_format!r} is not allowed in {location}; sent comma-separated"
            )
        return plain

    def _request_body(self, param: dict[str, Any], consumes: list[str]) -> dict[str, Any]:
        schema = self._schema(param.get("schema", {}))
        body: dict[str, Any] = {}
        if "description" in param:
            body["description"] = param["description"]
        body["content"] = {media_type: {"schema": _copy(schema)} for media_type in consumes}
        body["required"] = param.get("required") is True
        if isinstance(param.get("name"), str):
            body["x-codegen-request-body-name"] = param["name"]
        body.update(_extensions(param))
        return body

    def _form_body(self, params: list[tuple[dict[str, Any], Tokens]], consumes: list[str]) -> dict[str, Any]:
        multipart = MULTIPART in consumes or any(param.get("type") == "file" for param, _ in params)
        properties: dict[str, Any] = {}
        required: list[str] = []
        encoding: dict[str, Any] = {}
        for param, at in params:
            name = str(param.get("name"))
            schema = self._value_schema(param)
            if "description" in param:
                schema["description"] = param["description"]
            properties[name] = schema
            if param.get("required") is True:
                required.append(name)
            if not multipart and param.get("type") == "array":
                encoding[name] = self._style(param.get("collectionFormat"), "formData", at)
        schema_out: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema_out["required"] = required
        media: dict[str, Any] = {"schema": schema_out}
        if encoding:
            media["encoding"] = encoding
        return {"content": {MULTIPART if multipart else FORM_URLENCODED: media}, "required": bool(required)}

    # --- responses -------------------------------------------------------------------------------

    def _responses(self, responses: dict[str, Any], produces: list[str], where: Tokens) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for code, response in responses.items():
            if code.startswith("x-"):
                out[code] = _copy(response)
            elif isinstance(response, dict):
                out[code] = self._response(response, produces, (*where, code))
        return out

    def _response(self, response: dict[str, Any], produces: list[str], where: Tokens) -> dict[str, Any]:
        if isinstance(response.get("$ref"), str):
            return {"$ref": self._ref(response["$ref"])}
        out: dict[str, Any] = {"description": response.get("description", "")}
        headers = response.get("headers")
        if isinstance(headers, dict):
            out["headers"] = {
                name: self._header(header) for name, header in headers.items() if isinstance(header, dict)
            }
        content = self._content(response, produces)
        if content:
            out["content"] = content
        out.update(_extensions(response))
        return out

    def _content(self, response: dict[str, Any], produces: list[str]) -> dict[str, Any]:
        schema = response.get("schema")
        if not isinstance(schema, dict):
            return {}
        content: dict[str, Any]
        if schema.get("type") == "file":
            binary_types = [media_type for media_type in produces if not _is_json(media_type)] or [OCTET_STREAM]
            content = {media_type: {"schema": dict(_BINARY)} for media_type in binary_types}
        else:
            converted = self._schema(schema)
            content = {media_type: {"schema": _copy(converted)} for media_type in produces}
        examples = response.get("examples")
        if isinstance(examples, dict):
            for media_type, example in examples.items():
                if media_type in content:
                    content[media_type]["example"] = _copy(example)
        return content

    def _header(self, header: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "description" in header:
            out["description"] = header["description"]
        out["schema"] = self._value_schema(header)
        if header.get("type") == "array":
            out.update({"style": "simple", "explode": False})
        out.update(_extensions(header))
        return out
