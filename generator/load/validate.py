"""Check a description against the OpenAPI 2.0/3.0/3.1 rules and list every problem with its JSON pointer.

openapi-spec-validator does the checking. Its whole-document check gives each error a path; its
semantic checks (schemas, duplicate operationIds, path parameters, defaults) give none, so the
keyword validators are wrapped to remember which node they were looking at.

Library behaviours changed here: schema ids seen are kept in a set instead of a list (the list made
GitHub's spec take 7 s longer); no ``$ref`` is ever fetched (refs were bundled and checked before);
the validator's own ``iter_errors`` is not called, since its ``lru_cache`` keeps every validated
document alive; and Swagger 2.0's ``type: file``, which the library checks with JSON Schema rules,
is not reported. Two slow steps are answered faster, with the library's answers (``validate_fast``):
each schema's meta-schema check, and the resolution of each path the walk reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError, best_match
from jsonschema_path import SchemaPath
from openapi_spec_validator import OpenAPIV2SpecValidator, OpenAPIV30SpecValidator, OpenAPIV31SpecValidator
from openapi_spec_validator.schemas.backend.jsonschema import create_validator as create_jsonschema_validator
from openapi_spec_validator.validation.keywords import SchemaValidator

from bridge.contract.expressions import json_pointer as pointer
from generator.load.openapi_seams import SCHEMA_META
from generator.load.validate_fast import fast_schema_meta, step_schema_path

Tokens = tuple[str, ...]

MAX_REPR = 200
_WHERE = "_bridge_where"


@dataclass(frozen=True, slots=True)
class Problem:
    tokens: Tokens  # JSON pointer tokens into the validated document
    message: str


def validate_document(document: Any, *, source: str) -> list[str]:
    """Every problem as ``FILE: /json/pointer: message`` (``FILE: message`` at the top level)."""
    return [format_problem(source, problem) for problem in find_problems(document)]


def format_problem(file: str, problem: Problem) -> str:
    if not problem.tokens:
        return f"{file}: {problem.message}"
    return f"{file}: {pointer.join(*problem.tokens)}: {problem.message}"


def find_problems(document: Any, *, accelerated: bool = True) -> list[Problem]:
    """Validate with the rules of the version ``document`` declares; ``[]`` when it is valid.

    ``accelerated=False`` runs the library's own slow steps instead of ``validate_fast``'s answers:
    the reference the tests compare those answers with.
    """
    if not isinstance(document, dict):
        return [Problem((), "not an OpenAPI document (the top level is not a mapping)")]
    base = _base_class(document)
    if base is None:
        return [Problem((), "unsupported or missing 'openapi'/'swagger' version")]
    problems = _structural_problems(base, document)
    reported = {problem.tokens for problem in problems}
    swagger2 = base is OpenAPIV2SpecValidator
    spec = step_schema_path(document, _NoRetrieval()) if accelerated else document
    validator = _located_class(base, accelerated)(spec)
    for problem, from_schema_check in _semantic(validator, document, structural_ok=not problems):
        # 3.0 schemas are checked by both passes; one message per spot is enough
        if from_schema_check and (problem.tokens in reported or (swagger2 and _is_file_type(problem))):
            continue
        problems.append(problem)
    return list(dict.fromkeys(problems))


_STRUCTURAL: dict[type[Any], Any] = {}


def _structural_problems(base: type[Any], document: dict[str, Any]) -> list[Problem]:
    """Problems against the OpenAPI meta-schema.

    The library's own validator (jsonschema-rs when installed) answers "valid?" in milliseconds
    where pure Python takes seconds on GitHub's spec; only an invalid document goes through the
    pure-Python validator, whose nested context lets a oneOf failure say which property is missing.
    """
    fast = base.schema_validator
    if callable(getattr(fast, "is_valid", None)) and fast.is_valid(document):
        return []
    validator = _STRUCTURAL.get(base)
    if validator is None:
        validator = _STRUCTURAL[base] = create_jsonschema_validator(base.schema_validator.schema)
    return [_structural(error) for error in validator.iter_errors(document)]


def _base_class(document: dict[str, Any]) -> type[Any] | None:
    if document.get("swagger") == "2.0":
        return OpenAPIV2SpecValidator
    version = document.get("openapi")
    if isinstance(version, str) and version.startswith("3.0"):
        return OpenAPIV30SpecValidator
    if isinstance(version, str) and version.startswith("3.1"):
        return OpenAPIV31SpecValidator
    return None


def _structural(error: ValidationError) -> Problem:
    detail = _explain(error)
    return Problem(tuple(str(token) for token in detail.absolute_path), _short_message(detail))


def _explain(error: ValidationError) -> ValidationError:
    """The most telling nested error of a oneOf/anyOf, which alone only says "not valid under any"."""
    for _ in range(32):
        # "X or a Reference" is the usual oneOf; without a $ref the Reference branch explains nothing
        relevant = [nested for nested in error.context or () if not _wants_ref(nested)]
        if not relevant:
            break
        error = best_match(relevant) or error
    return error


def _wants_ref(error: ValidationError) -> bool:
    return error.validator == "required" and error.validator_value == ["$ref"]


def _is_file_type(problem: Problem) -> bool:
    """Swagger 2.0 allows ``type: file``, but the library checks 2.0 schemas with JSON Schema rules."""
    return problem.tokens[-1:] == ("type",) and problem.message.startswith("'file' is not one of")


def _semantic(validator: Any, document: dict[str, Any], *, structural_ok: bool) -> list[tuple[Problem, bool]]:
    """Problems of the keyword checks, each flagged when it comes from a JSON Schema check of a schema."""
    problems: list[tuple[Problem, bool]] = []
    try:
        for error in validator.root_validator(validator.schema_path):
            problems.append((_located_problem(error, document), isinstance(error.validator, str)))
    # The library walks the document with plain indexing and fails on shapes the structural pass
    # already reported; a crash must not hide the problems found so far.
    except Exception as exc:
        if structural_ok:
            problems.append((Problem((), f"validation stopped: {type(exc).__name__}: {_shorten(str(exc))}"), False))
    return problems


def _located_problem(error: ValidationError, document: dict[str, Any]) -> Problem:
    where: Tokens | None = getattr(error, _WHERE, None)
    if where is None:
        return _structural(error)
    detail = _explain(error)
    tokens = _real_location(document, where) + tuple(str(token) for token in detail.absolute_path)
    return Problem(tokens, _short_message(detail))


def _short_message(error: ValidationError) -> str:
    # The jsonschema-rs backend (several times faster on big specs) appends a multi-line
    # "Failed validating ... On instance[...]" report to each message; the pointer says where.
    message = error.message.split("Failed validating", 1)[0].strip()
    for value in (error.instance, error.validator_value):
        text = repr(value)
        if len(text) > MAX_REPR and text in message:
            message = message.replace(text, text[: MAX_REPR // 2] + "…")
    return _shorten(message)


def _shorten(message: str) -> str:
    line = " ".join(message.split())
    return line if len(line) <= 2 * MAX_REPR else line[: 2 * MAX_REPR] + "…"


def _real_location(document: dict[str, Any], parts: tuple[Any, ...]) -> Tokens:
    """The library's path goes through refs; report where the node really is in the file."""
    node: Any = document
    tokens: list[str] = []
    try:
        for part in parts:
            node, tokens = _follow(document, node, tokens)
            node = node[int(part)] if isinstance(node, list) else node[part]
            tokens.append(str(part))
        node, tokens = _follow(document, node, tokens)
    except (KeyError, IndexError, TypeError, ValueError, pointer.PointerError):
        return tuple(str(part) for part in parts)
    return tuple(tokens)


def _follow(document: dict[str, Any], node: Any, tokens: list[str]) -> tuple[Any, list[str]]:
    for _ in range(64):  # a ref loop must not hang the report
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not (isinstance(ref, str) and ref.startswith("#")):
            break
        node, tokens = pointer.resolve(document, ref), pointer.split(ref)
    return node, tokens


_LOCATED: dict[tuple[type[Any], bool], type[Any]] = {}


class _IdSet(set[int]):
    """A set that answers the ``append`` the library calls on its list of visited schema ids."""

    def append(self, value: int) -> None:
        self.add(value)


def _refuse(uri: str) -> Any:
    raise LookupError(f"{uri}: references are bundled before validation and never fetched by it")


class _NoRetrieval(dict[str, Callable[[str], Any]]):
    """Claims every URI scheme so jsonschema-path never falls back to ``urlopen``."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Callable[[str], Any]:
        return _refuse


def _located_class(base: type[Any], accelerated: bool) -> type[Any]:
    located = _LOCATED.get((base, accelerated))
    if located is None:
        located = _LOCATED[base, accelerated] = _make_located_class(base, accelerated)
    return located


def _make_located_class(base: type[Any], accelerated: bool) -> type[Any]:
    keyword_validators = {
        name: _located_keyword(keyword, ("default",) if name == "default" else (), accelerated)
        for name, keyword in base.keyword_validators.items()
    }
    namespace = {"keyword_validators": keyword_validators, "resolver_handlers": _NoRetrieval()}
    return type(f"Located{base.__name__}", (base,), namespace)


def _located_keyword(keyword: type[Any], suffix: Tokens, accelerated: bool) -> type[Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Iterator[ValidationError]:
        where = next((arg for arg in args if isinstance(arg, SchemaPath)), None)
        for error in keyword.__call__(self, *args, **kwargs):
            # Nested validators run first, so the innermost node a problem was found at wins.
            if where is not None and getattr(error, _WHERE, None) is None:
                setattr(error, _WHERE, (*where.parts, *suffix))
            yield error

    namespace: dict[str, Any] = {"__call__": call}
    if issubclass(keyword, SchemaValidator):
        namespace["__init__"] = _fast_schema_init(keyword)
        if accelerated:
            namespace[SCHEMA_META] = fast_schema_meta(keyword)
    return type(f"Located{keyword.__name__}", (keyword,), namespace)


def _fast_schema_init(keyword: type[Any]) -> Callable[..., None]:
    def init(self: Any, registry: Mapping[str, Any]) -> None:
        keyword.__init__(self, registry)
        self.visited_schema_ids = _IdSet()
        self.meta_checked_schema_ids = _IdSet()

    return init
