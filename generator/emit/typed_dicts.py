"""JSON Schema shapes as ``TypedDict`` declarations: the typed layer of ``api.pyi``, written directly.

The input is one document whose ``$defs`` hold every tool's ``<Tool>Input``/``<Tool>Output`` and
the shapes they share (generator/shape/hoist.py). Each def becomes a class (an object with
properties, or an ``allOf`` of such) or a type alias (anything else); an object nested inline gets
a class of its own, named after its property.

Why not datamodel-code-generator, which made these stubs before: on GitHub's 1,223 operations it
took 6.9 s and 160 MB of a generate whose budget is 3 s, and no option of it is several times
faster (its pipeline resolves, renames and renders models for any target, pydantic included);
stubs need a small, fixed part of that. This module is that part, linear in the document.

Spec text reaches the output in three places only, each made safe here: class names go through
:func:`generator.shape.hoist.class_name` (letters and digits); keys that are not plain identifiers
use the functional form, where each key is a ``repr`` string; ``Literal`` values are ``repr`` of
strings, integers and booleans. Everything else is typing syntax this module writes itself.

Schemas it cannot type precisely degrade, never fail: an unresolvable ``$ref``, a ``not``, a float
in an ``enum`` or an ``allOf`` whose parts clash become ``Any`` or one flattened class.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from generator.shape.hoist import class_name

__all__ = ["Alias", "Declarations", "Field", "TypedDictClass", "typed_dicts"]

_LOCAL = "#/$defs/"
_IDENTIFIER_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Names the declarations themselves use: never a class's, and a key spelled like one would shadow
# it inside a class body, so such keys take the functional form.
TYPING_NAMES = frozenset({"Any", "Literal", "NotRequired", "Required", "TypeAlias", "TypedDict"})
_BUILTIN_TYPES = frozenset({"str", "int", "float", "bool", "list", "dict", "None"})
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_SHAPE_KEYS = frozenset(
    {"type", "properties", "items", "prefixItems", "additionalProperties", "enum", "const", "$ref"}
    | {"allOf", "anyOf", "oneOf"}
)


@dataclass(frozen=True, slots=True)
class Field:
    key: str
    annotation: str
    required: bool


@dataclass(slots=True)
class TypedDictClass:
    name: str
    fields: list[Field]
    bases: list[str] = field(default_factory=list)
    closed: bool = False
    extra_items: str | None = None  # PEP 728: the type of keys the schema does not name

    def render(self) -> str:
        optional = [f for f in self.fields if not f.required]
        total = not (self.fields and len(optional) == len(self.fields))
        keywords = [] if total else ["total=False"]
        if self.extra_items is not None:
            keywords.append(f"extra_items={self.extra_items}")
        elif self.closed:
            keywords.append("closed=True")

        def annotation(f: Field) -> str:
            return f.annotation if f.required or not total else f"NotRequired[{f.annotation}]"

        if self.functional:
            table = ", ".join(f"{f.key!r}: {annotation(f)}" for f in self.fields)
            return f"{self.name} = TypedDict({self.name!r}, {{{table}}}{''.join(', ' + k for k in keywords)})"
        head = ", ".join([*(self.bases or ["TypedDict"]), *keywords])
        body = [f"    {f.key}: {annotation(f)}" for f in self.fields] or ["    pass"]
        return "\n".join([f"class {self.name}({head}):", *body])

    @property
    def functional(self) -> bool:
        """Whether a key cannot be a class attribute (see :func:`_plain_key`); no bases then."""
        used = {w for f in self.fields for w in _IDENTIFIER_WORD.findall(f.annotation)}
        return any(not _plain_key(f.key) or f.key in used for f in self.fields)


@dataclass(frozen=True, slots=True)
class Alias:
    name: str
    annotation: str

    def render(self) -> str:
        return f"{self.name}: TypeAlias = {self.annotation}"


Declaration = TypedDictClass | Alias


@dataclass(slots=True)
class Declarations:
    """The declarations in an order where bases come before the classes that extend them."""

    items: list[Declaration]
    names: dict[str, str]  # def name -> its declaration's name
    _by_name: dict[str, Declaration] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name = {d.name: d for d in self.items}

    def get(self, name: str) -> Declaration | None:
        return self._by_name.get(name)

    def fields(self, name: str) -> dict[str, Field] | None:
        """Every key of the class ``name``, its bases' included; None for an alias or no class."""
        return _fields(self._by_name, self._by_name.get(name))


def _fields(done: Mapping[str, Declaration], declaration: Declaration | None) -> dict[str, Field] | None:
    if not isinstance(declaration, TypedDictClass):
        return None
    out: dict[str, Field] = {}
    for base in declaration.bases:
        out.update(_fields(done, done.get(base)) or {})
    out.update((f.key, f) for f in declaration.fields)
    return out


def _plain_key(key: str) -> bool:
    """A key that can be written ``key: T`` in a class body: an identifier, no keyword, not mangled
    (``__x`` becomes ``_Class__x`` there), not a name annotations use."""
    return (
        key.isidentifier()
        and key.isascii()
        and not keyword.iskeyword(key)
        and not (key.startswith("__") and not key.endswith("__"))
        and key not in TYPING_NAMES
        and key not in _BUILTIN_TYPES
    )


def _literal(values: Iterable[Any]) -> str | None:
    """``Literal[...]`` (with ``| None``) of enum values, or None when one has no Python literal type."""
    parts: list[str] = []
    nullable = False
    for value in values:
        if value is None:
            nullable = True
        elif isinstance(value, bool | int | str):
            text = repr(value)
            if text not in parts:
                parts.append(text)
        else:
            return None  # a float, an object or an array: the schema's type says it better
    if not parts:
        return "None" if nullable else None
    return f"Literal[{', '.join(parts)}]" + (" | None" if nullable else "")


def _union(parts: Iterable[str]) -> str:
    unique = list(dict.fromkeys(parts))
    if not unique or "Any" in unique:
        return "Any"
    if "None" in unique:  # ``X | None`` reads best with None last
        unique = [p for p in unique if p != "None"] + ["None"]
    return " | ".join(unique)


def _is_constraint(schema: Any) -> bool:
    """A subschema that narrows without saying a shape (``{"required": ["a"]}`` in a ``oneOf``)."""
    return isinstance(schema, dict) and not (set(schema) & _SHAPE_KEYS)


class _Emitter:
    def __init__(self, defs: Mapping[str, Any], reserved: Iterable[str], closed_roots: Iterable[str]) -> None:
        self.defs = defs
        self.taken = set(reserved) | TYPING_NAMES | _BUILTIN_TYPES
        self.closed_roots = set(closed_roots)
        self.names = {key: self._claim(key) for key in defs}
        self.done: dict[str, Declaration] = {}  # by declaration name
        self.order: list[Declaration] = []
        self.building: set[str] = set()
        self._class_defs: dict[str, bool] = {}
        self.inline: dict[tuple[Any, ...], str] = {}  # an inline class's content -> its name

    def _claim(self, base: str) -> str:
        base = class_name(base, "Shape")
        name, n = base, 2
        while name in self.taken or keyword.iskeyword(name):
            name, n = f"{base}{n}", n + 1
        self.taken.add(name)
        return name

    def _add(self, declaration: Declaration) -> None:
        self.done[declaration.name] = declaration
        self.order.append(declaration)

    def run(self) -> Declarations:
        for key in self.defs:
            self.definition(key)
        return Declarations(self.order, self.names)

    # ------------------------------------------------------------------ defs and references
    def _ref(self, schema: dict[str, Any]) -> str | None:
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(_LOCAL) and ref[len(_LOCAL) :] in self.defs:
            return ref[len(_LOCAL) :]
        return None

    def is_class_def(self, key: str) -> bool:
        found = self._class_defs.get(key)
        if found is None:
            self._class_defs[key] = False  # a ref cycle through allOf alone is no class
            found = self._class_defs[key] = key in self.closed_roots or self._objectish(self.defs[key])
        return found

    def _objectish(self, schema: Any) -> bool:
        if not isinstance(schema, dict):
            return False
        if isinstance(schema.get("properties"), dict) and schema["properties"]:
            return True
        parts = schema.get("allOf")
        if not isinstance(parts, list):
            return False
        for part in parts:
            ref = self._ref(part) if isinstance(part, dict) else None
            if (ref is not None and self.is_class_def(ref)) or (ref is None and self._objectish(part)):
                return True
        return False

    def definition(self, key: str) -> Declaration | None:
        name = self.names[key]
        if name in self.done:
            return self.done[name]
        if key in self.building:
            return None  # inheritance through itself: the caller flattens what it can
        self.building.add(key)
        try:
            schema = self.defs[key]
            if self.is_class_def(key):
                self._add(self.klass(name, schema if isinstance(schema, dict) else {}))
            else:
                self._add(Alias(name, self.annotation(schema, name, name)))
        finally:
            self.building.discard(key)
        return self.done[name]

    # ------------------------------------------------------------------ classes
    def klass(self, name: str, schema: dict[str, Any]) -> TypedDictClass:
        required = {r for r in schema.get("required") or () if isinstance(r, str)}
        bases: list[TypedDictClass] = []
        props: list[tuple[str, Any]] = []
        merged: dict[str, Field] = {}  # keys of inline allOf parts and of bases that had to be flattened
        for part in schema.get("allOf") or ():
            if not isinstance(part, dict):
                continue
            required |= {r for r in part.get("required") or () if isinstance(r, str)}
            ref = self._ref(part)
            if ref is not None and self.is_class_def(ref):
                base = self.definition(ref)
                if isinstance(base, TypedDictClass):
                    bases.append(base)
                continue
            if self._objectish(part):
                sub = self.klass(name, part)  # flattened into this class
                bases.extend(b for b in map(self.done.get, sub.bases) if isinstance(b, TypedDictClass))
                merged.update((f.key, f) for f in sub.fields)
        if isinstance(schema.get("properties"), dict):
            props = list(schema["properties"].items())
        own = dict(merged)
        for key, sub in props:
            own[key] = Field(key, self.annotation(sub, key, name), key in required)
        own = {k: Field(k, f.annotation, f.required or k in required) for k, f in own.items()}
        closed = schema.get("additionalProperties") is False
        inherited: dict[str, Field] = {}
        clash = False
        for base in bases:
            for key, f in (_fields(self.done, base) or {}).items():
                clash = clash or key in inherited or key in own or (key in required and not f.required)
                inherited[key] = f
            clash = clash or base.closed or base.functional
        result = TypedDictClass(name, list(own.values()), [b.name for b in bases], closed)
        if clash or (bases and result.functional):
            flat = {k: Field(k, f.annotation, f.required or k in required) for k, f in inherited.items()}
            flat.update(own)
            result = TypedDictClass(name, list(flat.values()), [], closed)
        return result

    def inline_class(self, schema: dict[str, Any], hint: str, parent: str) -> str:
        stem = class_name(hint, "Shape")
        name = stem if stem not in self.taken else self._claim(parent + stem)
        self.taken.add(name)
        declaration = self.klass(name, schema)
        # Equal inline shapes share one class (hoisting shares only plain objects; a nullable
        # object's copies, in each tool that inlines it, arrive here one by one).
        key = (tuple(declaration.fields), tuple(declaration.bases), declaration.closed)
        same = self.inline.get(key)
        if same is not None:
            return same
        self.inline[key] = name
        self._add(declaration)
        return name

    # ------------------------------------------------------------------ annotations
    def annotation(self, schema: Any, hint: str, parent: str) -> str:
        """The Python type of values ``schema`` admits; inline objects become classes named by ``hint``."""
        if not isinstance(schema, dict) or not schema:
            return "Any"
        ref = self._ref(schema)
        if ref is not None:
            return self.names[ref]
        if "$ref" in schema:
            return "Any"  # nothing to follow: hoisting leaves only local refs
        if "const" in schema:
            found = _literal([schema["const"]])
            if found is not None:
                return found
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            found = _literal(schema["enum"])
            if found is not None:
                return found
        for combinator in ("anyOf", "oneOf"):
            members = schema.get(combinator)
            if isinstance(members, list) and members:
                if not any(_is_constraint(m) for m in members):
                    return _union(self.annotation(m, hint, parent) for m in members)
                # A member that says no shape admits any value the rest of the schema admits.
                rest = {k: v for k, v in schema.items() if k != combinator}
                return self.annotation(rest, hint, parent) if set(rest) & _SHAPE_KEYS else "Any"
        types = schema.get("type")
        nullable = schema.get("nullable") is True or (isinstance(types, list) and "null" in types)
        parts = schema.get("allOf")
        if isinstance(parts, list) and not schema.get("properties"):
            shaped = [p for p in parts if not _is_constraint(p)]
            if len(shaped) == 1:  # a ref with siblings, as 3.0 specs write a nullable or described ref
                return _union([self.annotation(shaped[0], hint, parent), *(["None"] if nullable else [])])
        if self._objectish(schema):
            return _union([self.inline_class(schema, hint, parent), *(["None"] if nullable else [])])
        if isinstance(types, str):
            types = [types]
        elif not isinstance(types, list):
            if "properties" in schema or "additionalProperties" in schema:
                types = ["object"]
            elif "items" in schema or "prefixItems" in schema:
                types = ["array"]
            else:
                return "Any"
        out = [self._typed(schema, t, hint, parent) for t in types if isinstance(t, str)]
        if nullable:
            out.append("None")
        return _union(out)

    def _typed(self, schema: dict[str, Any], kind: str, hint: str, parent: str) -> str:
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            items = schema.get("items")
            if isinstance(items, dict) and "prefixItems" not in schema:
                return f"list[{self.annotation(items, hint + 'Item', parent)}]"
            return "list[Any]"
        if kind == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"dict[str, {self.annotation(extra, hint + 'Value', parent)}]"
            return "dict[str, Any]"
        return "Any"


def typed_dicts(defs: Mapping[str, Any], *, reserved: Iterable[str] = (), classes: Iterable[str] = ()) -> Declarations:
    """Declarations of ``defs`` (def name -> schema), deterministic in their order.

    ``reserved`` names are never a declaration's (the module's functions); each def in ``classes``
    is a class even without properties (a tool's arguments: ``class XInput(TypedDict): pass``).
    """
    return _Emitter(defs, reserved, classes).run()
