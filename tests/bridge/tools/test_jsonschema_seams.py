"""jsonschema's private resolver, as bridge.tools.jsonschema_seams uses it, still follows a $ref to its schema."""

from __future__ import annotations

from jsonschema import Draft202012Validator

from bridge.tools.jsonschema_seams import follow_ref


def test_a_validator_still_has_a_resolver_and_evolve_still_takes_it() -> None:
    validator = Draft202012Validator({"type": "object"})
    assert callable(validator._resolver.lookup)
    assert validator.evolve(schema={}, _resolver=validator._resolver)._resolver is validator._resolver


def test_a_ref_is_followed_to_the_schema_it_names_with_that_resources_base() -> None:
    schema = {
        "$id": "https://example.test/root",
        "$defs": {
            "pet": {
                "$id": "pets/pet",
                "properties": {"name": {"$ref": "#/$defs/n"}},
                "$defs": {"n": {"type": "string"}},
            }
        },
        "$ref": "pets/pet",
    }
    validator = Draft202012Validator(schema)
    child, contents = follow_ref(validator, "pets/pet")
    assert contents == schema["$defs"]["pet"]
    # The child resolves relative to pets/pet, where #/$defs/n is the string schema.
    grandchild, inner = follow_ref(child, "#/$defs/n")
    assert inner == {"type": "string"}
    assert grandchild.is_valid("rex") and not grandchild.is_valid(3)
