"""A package's catalogue reads back as the data the standard library's parser gives, whatever its text holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.contract.catalogue import CATALOGUE_FILE
from bridge.serving.package import load_catalogue
from tests.golden import GENERATED_DIR

# Texts a spec may carry into a schema: a lone surrogate (pydantic-core's parser refuses it), big
# and tiny numbers, an infinity, a control character.
ODD_VALUES = ['"\\ud800 lone"', "123456789012345678901234567890", "1e400", "1.5e-7", "-0.0", '"\\u0000"', '"\\u00e9"']


@pytest.mark.parametrize("value", ODD_VALUES)
def test_a_catalogue_reads_back_as_the_standard_parser_reads_it(value: str, tmp_path: Path) -> None:
    source = (GENERATED_DIR / "petstore" / CATALOGUE_FILE).read_text(encoding="utf-8")
    data = json.loads(source)
    data["tools"][0]["input_schema"]["x-odd"] = "@@ODD@@"
    text = json.dumps(data).replace('"@@ODD@@"', value)
    (tmp_path / CATALOGUE_FILE).write_text(text, encoding="utf-8")
    loaded = load_catalogue(tmp_path)
    expected: Any = json.loads(text)["tools"][0]["input_schema"]
    assert json.dumps(loaded.tools[0].input_schema) == json.dumps(expected)
