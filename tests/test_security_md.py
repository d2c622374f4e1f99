"""SECURITY.md names real tests: every ``tests/...::name`` (and each following ``::name``) exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def named_tests(text: str) -> list[tuple[str, str]]:
    found = []
    for row in text.splitlines():
        current = None
        for match in re.finditer(r"`([^`]+)`", row):
            ref = match.group(1)
            if ref.startswith("tests/") and "::" in ref:
                current, name = ref.split("::", 1)
            elif ref.startswith("::") and current is not None:
                name = ref[2:]
            elif ref.startswith("tests/") and ref.endswith(".py"):
                current = ref
                continue
            else:
                continue
            found.append((current, name.split("[")[0].split(" ")[0]))
    return found


def test_every_test_security_md_names_exists() -> None:
    refs = named_tests((ROOT / "SECURITY.md").read_text(encoding="utf-8"))
    assert len(refs) > 50  # the table was read
    missing = [
        f"{path}::{name}"
        for path, name in refs
        if not (ROOT / path).exists() or re.search(rf"def {re.escape(name)}\b", (ROOT / path).read_text()) is None
    ]
    assert missing == []


def test_a_reference_to_a_missing_test_is_caught() -> None:
    assert named_tests("| P0 | x | kept | `tests/a.py::test_b`, `::test_c` |") == [
        ("tests/a.py", "test_b"),
        ("tests/a.py", "test_c"),
    ]
