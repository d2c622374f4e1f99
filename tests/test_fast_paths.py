"""bench/FAST_PATHS.md registers every fast path: each row names real tests, and no module,
function or class that talks speed in its docstring is missing from it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGISTER = ROOT / "bench" / "FAST_PATHS.md"
SOURCES = ("bridge", "generator")

# Words of a docstring that claims speed ("instead of" alone says nothing about speed, and
# "microseconds" or "milliseconds" as a unit do).
SPEED_WORDS = re.compile(
    r"\b(fast|faster|fastest|quick|quicker|quickly|shortcut|slow|slower|speed|speed-up|speedup)\b"
    r"|µs|\bmicroseconds?\b|\bmilliseconds?\b|\d\s?ms\b",
    re.IGNORECASE,
)
_MODULE = re.compile(r"`((?:bridge|generator)/[\w/]+\.py(?:::\w+)?)`")
_TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


@dataclass(frozen=True)
class Row:
    cells: tuple[str, ...]
    modules: tuple[str, ...]
    tests: tuple[tuple[str, str], ...]


def tables(text: str) -> dict[str, list[tuple[str, ...]]]:
    """Each ``## section``'s table rows (header and rule left out), as cell tuples."""
    found: dict[str, list[tuple[str, ...]]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("|") and not re.fullmatch(r"\|[\s\-:|]+\|", line):
            cells = tuple(c.strip() for c in line.strip().strip("|").split("|"))
            found.setdefault(section, []).append(cells)
    return {name: rows[1:] for name, rows in found.items()}  # the first row of each is its header


def register_rows(text: str) -> list[Row]:
    return [
        Row(cells, tuple(m.split("::")[0] for m in _MODULE.findall(cells[1])), tuple(_TEST.findall(cells[4])))
        for cells in tables(text).get("Register", [])
    ]


def exempt_modules(text: str) -> list[str]:
    rows = tables(text).get("Speed words that are not fast paths", [])
    return [m for cells in rows for m in _MODULE.findall(cells[0])]


def speed_claims() -> list[str]:
    """Modules (``path``), functions and classes (``path::name``) of bridge/ and generator/ whose
    own docstring talks speed."""
    found = []
    for root in SOURCES:
        for path in sorted((ROOT / root).rglob("*.py")):
            module = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            named: list[tuple[str, ast.AST]] = [(module, tree)]
            named += [
                (f"{module}::{node.name}", node)
                for node in ast.walk(tree)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            ]
            for name, node in named:
                doc = ast.get_docstring(node)  # type: ignore[arg-type]
                if doc and SPEED_WORDS.search(doc):
                    found.append(name)
    return found


def unlisted(claims: list[str], text: str) -> list[str]:
    """The claims neither table covers: a listed module covers its functions and classes."""
    listed = {m for row in register_rows(text) for m in row.modules} | set(exempt_modules(text))
    return [c for c in claims if c not in listed and c.split("::")[0] not in listed]


def _has_test(path: str, name: str) -> bool:
    file = ROOT / path
    definition = re.compile(rf"^(async )?def {re.escape(name)}\(", re.MULTILINE)
    return file.is_file() and definition.search(file.read_text(encoding="utf-8")) is not None


def test_every_fast_path_names_modules_that_exist_tests_that_exist_and_a_removal_condition() -> None:
    rows = register_rows(REGISTER.read_text(encoding="utf-8"))
    assert len(rows) >= 8  # the table was read
    problems = []
    for row in rows:
        if not row.modules or any(not (ROOT / m).is_file() for m in row.modules):
            problems.append(f"{row.cells[0]}: modules {row.modules}")
        if not row.tests:
            problems.append(f"{row.cells[0]}: no equivalence test")
        problems += [f"{row.cells[0]}: {p}::{n} does not exist" for p, n in row.tests if not _has_test(p, n)]
        if not row.cells[3] or not row.cells[5]:
            problems.append(f"{row.cells[0]}: what it saves and when it goes must be said")
    assert problems == []


def test_every_docstring_that_claims_speed_is_on_the_register() -> None:
    text = REGISTER.read_text(encoding="utf-8")
    claims = speed_claims()
    assert len(claims) > 10  # the docstrings were read
    assert unlisted(claims, text) == []
    assert [m for m in exempt_modules(text) if m not in claims] == []  # no stale exemption


def test_a_new_fast_path_without_a_row_or_a_test_is_caught() -> None:
    text = (
        "## Register\n\n| a | b | c | d | e | f |\n| --- | --- | --- | --- | --- | --- |\n"
        "| Quick thing | `bridge/x/quick.py` (`f`) | slow thing | 1 ms "
        "| `tests/x.py::test_same`, `tests/x.py::test_other` | never |\n"
        "| No test | `bridge/x/other.py` | slow | 2 ms | none | never |\n\n"
        "## Speed words that are not fast paths\n\n| Module | Why |\n| --- | --- |\n| `bridge/y.py` | a bound |\n"
    )
    rows = register_rows(text)
    assert [r.modules for r in rows] == [("bridge/x/quick.py",), ("bridge/x/other.py",)]
    assert rows[0].tests == (("tests/x.py", "test_same"), ("tests/x.py", "test_other"))
    assert rows[1].tests == ()
    assert exempt_modules(text) == ["bridge/y.py"]
    claims = ["bridge/x/quick.py::f", "bridge/y.py", "bridge/z.py::g", "bridge/y.py::h"]
    assert unlisted(claims, text) == ["bridge/z.py::g"]
    assert SPEED_WORDS.search("A shortcut for the common answer") is not None
    assert SPEED_WORDS.search("about 0.2 ms for a 23 KB answer") is not None
    assert SPEED_WORDS.search("Argument descriptions said once instead of in every tool") is None
