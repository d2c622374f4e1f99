"""Argument and output validation against a tool's JSON Schemas.

Arguments are checked before ``run`` with ``jsonschema`` (the draft named by ``$schema``, else
2020-12) and failures are worded like Zod v4 (:mod:`bridge.tools.schema_messages`), one line per bad
field. Outputs go through the same validators: hand-written tools in :func:`check_output`,
generated HTTP tools through :func:`output_issues` (``bridge.results.tool_result.OutputCheck``).

Validation accepts exactly what the advertised schema accepts, and no value can make it slow
(:mod:`bridge.tools.schema_validators`); arguments over :data:`~bridge.tools.argument_size.DEFAULT_MAX_ARGUMENT_BYTES`
(``--max-argument-bytes``) are refused before any schema work, naming the biggest argument and the
limit (:mod:`bridge.tools.argument_size`).

Validators are compiled on a schema's first use and kept in one bounded cache shared by every
tool's input and output checks, so start-up cost does not grow with the number of tools. An
argument, and an output value the parser made, first meets :mod:`bridge.tools.schema_compiled`'s
compiled check (jsonschema-rs); another output value :mod:`bridge.tools.schema_fast`'s quick check. Both
only ever say yes where the full validator finds nothing; anything else goes through the full
validator as before, which words every error.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from bridge.tools.argument_size import DEFAULT_MAX_ARGUMENT_BYTES, check_size
from bridge.tools.errors import InvalidArgumentsError, ToolError
from bridge.tools.registry import ToolRegistry
from bridge.tools.schema_defaults import Defaults, defaults_plan
from bridge.tools.schema_messages import format_issues
from bridge.tools.schema_validators import compile_validator, is_draft_2020_12, run_validator

if TYPE_CHECKING:
    from bridge.tools.schema_fast import Check

__all__ = ["MAX_CACHED_VALIDATORS", "VALIDATORS", "ArgumentValidator", "check_output", "output_issues"]

MAX_CACHED_VALIDATORS = 4096
"""Compiled input and output validators kept; the least recently used goes first."""

# --------------------------------------------------------------------------------------------
# The shared cache
# --------------------------------------------------------------------------------------------

_ANNOTATIONS = frozenset({"type", "title", "description", "$schema", "$id", "$comment", "examples"})


@dataclass(frozen=True, slots=True)
class _Compiled:
    schema: Mapping[str, Any]
    validator: Validator
    defaults: Defaults | None
    any_object: bool  # the schema is {"type": "object"} plus annotations: every object passes
    quick: Check | None  # outputs: a sound quick yes before the full walk (bridge.tools.schema_fast)
    compiled: Check | None  # a sound compiled quick yes (bridge.tools.schema_compiled)


class _ValidatorCache:
    """Compiled validators by schema object, for arguments and outputs alike, bounded in size.

    Keyed by identity (schemas are big, hashing them would cost more than validating); an entry
    holds its schema, so the id cannot be reused by another object while the entry lives.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[int, bool], _Compiled] = OrderedDict()

    def get(self, schema: Mapping[str, Any], *, arguments: bool, what: str) -> _Compiled:
        key = (id(schema), arguments)
        hit = self._entries.get(key)
        if hit is not None and hit.schema is schema:
            self._entries.move_to_end(key)
            return hit
        validator = compile_validator(schema, arguments=arguments, what=what)
        any_object = schema.get("type") == "object" and schema.keys() <= _ANNOTATIONS
        # 2020-12 schemas only: the quick checks know that draft's keywords (outputs: no formats).
        # Imported at the first check, not at start-up (the tools/list peak stays as it was).
        from bridge.tools.schema_compiled import compiled_check
        from bridge.tools.schema_fast import quick_check

        draft_2020_12 = is_draft_2020_12(validator)
        quick = None if arguments or not draft_2020_12 else quick_check(schema)
        fast = compiled_check(schema, arguments=arguments) if draft_2020_12 and not any_object else None
        defaults = defaults_plan(schema, schema) if arguments else None
        compiled = _Compiled(schema, validator, defaults, any_object, quick, fast)
        self._entries[key] = compiled
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return compiled

    def holds(self, schema: Mapping[str, Any], *, arguments: bool) -> bool:
        hit = self._entries.get((id(schema), arguments))
        return hit is not None and hit.schema is schema

    def __len__(self) -> int:
        return len(self._entries)


VALIDATORS = _ValidatorCache(MAX_CACHED_VALIDATORS)
"""The one cache every input and output check goes through."""


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


class ArgumentValidator:
    """Validates tool arguments against each tool's input schema.

    A tool's validator is compiled on its first call and kept in :data:`VALIDATORS`; a replaced
    schema (a different object) is recompiled. ``schemas`` is the registry, or a mapping of tool
    name to input schema. ``max_argument_bytes`` caps one call's arguments (0 or None: no cap).
    """

    def __init__(
        self,
        schemas: ToolRegistry | Mapping[str, Mapping[str, Any]],
        *,
        max_argument_bytes: int | None = DEFAULT_MAX_ARGUMENT_BYTES,
    ) -> None:
        self._schema_of: Callable[[str], Mapping[str, Any] | None]
        if isinstance(schemas, ToolRegistry):
            registry = schemas

            def schema_of(name: str) -> Mapping[str, Any] | None:
                tool = registry.get(name)
                return None if tool is None else tool.input_schema

            self._schema_of = schema_of
        else:
            self._schema_of = schemas.get
        self.max_argument_bytes = max_argument_bytes or 0

    def _get(self, tool_name: str) -> _Compiled:
        schema = self._schema_of(tool_name)
        if schema is None:
            raise KeyError(tool_name)
        return VALIDATORS.get(schema, arguments=True, what=f'The input schema of tool "{tool_name}"')

    def validate(
        self, tool_name: str, args: Mapping[str, Any] | None, *, apply_defaults: bool = True
    ) -> dict[str, Any]:
        """Return ``args`` with schema defaults applied (the input is not modified).

        ``apply_defaults=False`` checks only: for tools whose defaults belong to someone else
        (an API's parameter default is what the API assumes when the value is absent).

        Raises:
            ArgumentsTooLargeError: the arguments are over ``max_argument_bytes``.
            InvalidArgumentsError: the arguments do not match; the message lists every bad field.
            ToolDefinitionError: the tool's input schema itself is invalid or unresolvable.
            KeyError: no tool has that name.
        """
        compiled = self._get(tool_name)
        instance: dict[str, Any] = args if isinstance(args, dict) else dict(args or {})
        if self.max_argument_bytes:
            check_size(tool_name, instance, self.max_argument_bytes)
        if compiled.any_object:
            return instance
        # The compiled check says yes only where jsonschema's walk finds nothing; otherwise the walk
        # finds the errors (or none) and names every bad field.
        if compiled.compiled is not None and compiled.compiled(instance):
            errors: list[ValidationError] = []
        else:
            errors = run_validator(compiled.validator, instance, f'The input schema of tool "{tool_name}"')
        if errors:
            lines = format_issues(compiled.schema, errors)
            raise InvalidArgumentsError(f'Invalid arguments for tool "{tool_name}":\n' + "\n".join(lines))
        if compiled.defaults is None or not apply_defaults:
            return instance
        return compiled.defaults.apply(instance)


def output_issues(tool_name: str, schema: Mapping[str, Any], value: Any, *, json_data: bool = False) -> list[str]:
    """The ``path: message`` lines of every mismatch of ``value`` with a tool's output schema.

    Formats are not asserted (the SDK client does not assert them either), so an upstream's
    slightly unusual date does not turn a good answer into an error. ``json_data``: the caller
    vouches that ``value`` holds only what the JSON parser makes (a parsed upstream answer), which
    lets the compiled check judge it (:mod:`bridge.tools.schema_compiled`).

    Raises:
        ToolDefinitionError: the output schema itself is invalid or unresolvable.
    """
    what = f'The output schema of tool "{tool_name}"'
    compiled = VALIDATORS.get(schema, arguments=False, what=what)
    if json_data and compiled.compiled is not None and compiled.compiled(value):
        return []  # the compiled check says yes only where the full walk finds nothing
    if compiled.quick is not None and compiled.quick(value):
        return []  # the quick check says yes only where the full walk finds nothing
    errors = run_validator(compiled.validator, value, what)
    return format_issues(schema, errors) if errors else []


def check_output(tool_name: str, schema: Mapping[str, Any], value: Any) -> None:
    """Check a tool's return value against its output schema (see :func:`output_issues`).

    Raises:
        ToolError: the value does not match; the message names every mismatching field.
        ToolDefinitionError: the output schema itself is invalid or unresolvable.
    """
    lines = output_issues(tool_name, schema, value)
    if lines:
        raise ToolError(
            f'Tool "{tool_name}" returned a value that does not match its output schema: '
            + "; ".join(lines)
            + ". This is a fault of the tool or its upstream API, not of the arguments."
        )
