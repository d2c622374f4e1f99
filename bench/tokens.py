"""Token bench: what GitHub's tool list and results cost the model, before and after "lean by construction".

    .venv/bin/python -m bench.tokens            # writes bench/TOKENS.md (and bench/out/tokens.json)

Counts are exact o200k_base tokens: the ranks come from the npm package ``tiktoken`` (pinned in
bench/tokenizer/package.json, installed with ``npm ci`` on first use), rebuilt into tiktoken's rank
file and checked against the SHA-256 tiktoken pins (bridge/cli/tokens.py). Nothing is downloaded
from anywhere else.

Measured on GitHub's spec (@octokit/openapi, from tests/node):

1. model-visible tool list (bench/visible.py: the compact JSON of name + description + inputSchema
   of every tool, o200k_base) before (the converter's output as generated before compaction) and
   after (compaction, output shaping, shared argument descriptions, the ``fields`` argument), plus
   the server instructions; then the real ``tools/list`` of ``mcp-bridge serve spec.json``, FastMCP
   4.2.3 and openapi-mcp-generator 4.0.1, each spawned here over stdio and counted with the same
   function and counter (no peer figure is typed in: a peer that cannot run shows "not measured");
2. constraint counts (types, enums, required names, bounds, patterns, formats, defaults, closed
   objects) before and after compaction, input and output schemas, which must be equal;
3. the whole ``tools/list`` answer in bytes (compact JSON of the result), with and without output
   schemas, and the same for the served lists;
4. the discovery-mode tool list (three tools) and its instructions;
5. results: a deterministic sample of GET operations, each answered by a fake upstream with a
   response generated from the operation's (full, uncompacted) output schema, run through the
   real tool (request building, redaction, trimming, output validation); tokens of the JSON the
   model reads before (the whole body) and after trimming.
"""

from __future__ import annotations

import asyncio
import json
import platform
import random
import statistics
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import BENCH_DIR, OUT_DIR, ROOT, fake_environ
from bench.figures import BRIDGE_SPEC, FASTMCP, OMG
from bench.targets import GITHUB_LIST_BYTES, GITHUB_TOKENS, judge
from bench.visible import (
    TOKENIZER_DIR,
    how_counted,
    list_bytes,
    model_visible_tokens,
    token_counter,
    visible_json,
    wire_dicts,
)

REPORT = BENCH_DIR / "TOKENS.md"
SERVED = (BRIDGE_SPEC, FASTMCP, OMG)
DISCOVERY_TOKENS = 3_000  # discovery mode's three tools, model-visible
RESULT_REDUCTION = 0.5  # trimmed results against the whole bodies
RESULT_SAMPLE = 60
SEED = 20261130
LIST_ITEMS = 30  # GitHub's default per_page


def ensure_tokenizer() -> Path:
    """bench/tokenizer with the pinned npm ``tiktoken`` installed (``npm ci`` once)."""
    from tests.node_tools import npm_ci

    npm_ci(TOKENIZER_DIR)
    return TOKENIZER_DIR


# ------------------------------------------------------------------------------ tool lists


def _registry_tools(catalogue: Any, *, discovery: bool = False) -> list[Any]:
    from bridge.calls.http_tools import tools_from_catalogue
    from bridge.calls.runtime import HttpRuntime
    from bridge.modes.discovery import discovery_registry
    from bridge.server.handlers import wire_tool
    from bridge.tools.registry import ToolRegistry

    runtime = HttpRuntime.create(catalogue, base_url="http://127.0.0.1:9", environ={})
    registry = ToolRegistry(tools_from_catalogue(catalogue, runtime))
    served = discovery_registry(registry, catalogue) if discovery else registry
    return [(tool, wire_tool(tool)) for tool in served]


def _wire(pairs: list[Any]) -> list[dict[str, Any]]:
    return wire_dicts(w for _, w in pairs)


def served_lists(counter: Any) -> dict[str, dict[str, Any]]:
    """Each server's real GitHub tools/list over stdio, counted like the in-process lists (bench/visible.py)."""
    from bench import serve_bench
    from bench.run_all import prepare_peers, targets_for

    notes = prepare_peers(["github"], install=True)
    found = {t.label: t for t in targets_for("github", "http://127.0.0.1:9", peers=True, package=False)}
    out: dict[str, dict[str, Any]] = {}
    for label in SERVED:
        if label not in found:
            note = notes.get(label) or notes.get(f"{label} github") or "not set up"
            out[label] = {"error": f"not measured: {note}"}
            continue
        run = serve_bench.run(serve_bench.measure(found[label], calls=0, keep_tools=True))
        if run.error or not run.tool_list:
            out[label] = {"error": f"not measured: {run.error or 'empty tools/list'}"}
            continue
        out[label] = {
            "tools": run.tools,
            "tokens": model_visible_tokens(run.tool_list, counter),
            "bytes": run.tools_bytes,
            "error": "",
        }
    return out


def _constraints(before_api: Any, compacted: Any) -> dict[str, dict[str, dict[str, int]]]:
    from generator.shape.compact import count_constraints

    out: dict[str, dict[str, dict[str, int]]] = {}
    for which, part in (("input_schema", "arguments"), ("output_schema", "result")):
        before: Counter[str] = Counter()
        after: Counter[str] = Counter()
        for old, new in zip(before_api.operations, compacted, strict=True):
            if getattr(old, part) is not None:
                before += count_constraints(getattr(old, part))
                after += count_constraints(getattr(new, part))
        out[which] = {"before": dict(sorted(before.items())), "after": dict(sorted(after.items()))}
    return out


# ---------------------------------------------------------------------------------- results

_WORDS = (
    "octocat hello world repository issue pull request merge branch commit release tag label milestone "
    "review comment team member owner public private default main feature fix update docs test build"
).split()
_LONG_TEXT = ("body", "description", "message", "text", "patch", "content", "summary", "notes", "readme")


class _Sampler:
    """Responses shaped by an output schema, with the statistics of real API answers: every
    declared field present, nullable ones null a third of the time, list endpoints full pages."""

    def __init__(self, root: dict[str, Any], rng: random.Random) -> None:
        self.root = root
        self.rng = rng

    def _resolve(self, node: Any) -> Any:
        for _ in range(32):
            if not isinstance(node, dict) or "$ref" not in node:
                return node
            target = self.root.get("$defs", {}).get(str(node["$ref"]).rsplit("/", 1)[-1], {})
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return {}

    def _merge(self, node: dict[str, Any]) -> dict[str, Any]:
        members = node.get("allOf")
        if not isinstance(members, list):
            return node
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for member in members:
            member = self._merge(self._resolve(member))
            if not isinstance(member, dict):
                continue
            for key, value in member.items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required":
                    merged["required"] = [*merged.get("required", []), *value]
                else:
                    merged.setdefault(key, value)
        return merged

    def value(self, node: Any, name: str, depth: int, top_list: bool = False) -> Any:
        node = self._resolve(node)
        if not isinstance(node, dict):
            return None
        node = self._merge(node)
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list) and node[key]:
                options = [o for o in node[key] if self._resolve(o) != {"type": "null"}] or node[key]
                rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
                return self.value(self._merge({"allOf": [rest, self.rng.choice(options)]}), name, depth, top_list)
        if "const" in node:
            return node["const"]
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind else []
        if "null" in kinds and (depth > 6 or self.rng.random() < 0.33):
            return None
        kinds = [k for k in kinds if k != "null"] or (["object"] if "properties" in node else ["string"])
        kind = kinds[0]
        if node.get("enum"):
            choices = [v for v in node["enum"] if v is not None]
            return self.rng.choice(choices) if choices else None
        if kind == "object":
            if depth > 6:
                return {}
            required = set(node.get("required", []))
            return {
                prop: self.value(schema, prop, depth + 1)
                for prop, schema in (node.get("properties") or {}).items()
                if prop in required or self.rng.random() < 0.6
            }
        if kind == "array":
            if depth > 6:
                return []
            count = LIST_ITEMS if top_list else self.rng.choice([0, 0, 1, 2, 3])
            return [self.value(node.get("items", {}), name, depth + 1) for _ in range(count)]
        if kind == "integer":
            return self.rng.randint(1, 10**6)
        if kind == "number":
            return round(self.rng.random() * 1000, 2)
        if kind == "boolean":
            return self.rng.random() < 0.5
        return self._string(node, name)

    def _string(self, node: dict[str, Any], name: str) -> str:
        fmt = node.get("format")
        words = self.rng.choices(_WORDS, k=3)
        if fmt == "date-time":
            return f"2025-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}T10:11:12Z"
        if fmt == "date":
            return f"2025-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}"
        if fmt in ("uri", "url") or name.endswith("url") or name == "href":
            return "https://api.github.com/repos/" + "/".join(words)
        if fmt == "email":
            return f"{words[0]}@example.com"
        if any(part in name.lower() for part in _LONG_TEXT):
            return " ".join(self.rng.choices(_WORDS, k=self.rng.randint(20, 400)))
        return "-".join(words[: self.rng.randint(1, 3)])


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    args: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = properties.get(name, {})
        kind = prop.get("type")
        kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
        if prop.get("enum"):
            args[name] = prop["enum"][0]
        elif kind in ("integer", "number"):
            args[name] = max(int(prop.get("minimum", 1)), 1)
        elif kind == "boolean":
            args[name] = True
        elif kind == "array":
            args[name] = ["a"]
        elif kind == "object":
            args[name] = {}
        else:
            args[name] = "octocat"
    return args


async def _results(raw_api: Any, catalogue: Any, counter: Any, sample: int) -> dict[str, Any]:
    import httpx
    import mcp_types
    from jsonschema import Draft202012Validator

    from bridge.calls.http_tools import make_http_tool
    from bridge.calls.runtime import HttpRuntime
    from bridge.tools.registry import ToolContext

    raw_by_name = {op.tool_name: op for op in raw_api.operations}
    candidates = [
        entry
        for entry in catalogue.tools
        if entry.binding.method == "GET" and entry.output_schema is not None and entry.name in raw_by_name
    ]
    step = max(len(candidates) // sample, 1)
    chosen = candidates[::step][:sample]
    rng = random.Random(SEED)
    bodies: dict[str, bytes] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, stream=httpx.ByteStream(bodies["current"]), headers={"content-type": "application/json"}
        )

    runtime = HttpRuntime.create(
        catalogue,
        base_url="http://upstream.test",
        environ=fake_environ(catalogue),
        transport=httpx.MockTransport(handler),
    )
    rows = []
    async with runtime:
        for entry in chosen:
            raw = raw_by_name[entry.name]
            schema = raw.result
            sampler = _Sampler(schema, rng)
            if raw.wrap_result:  # the body is the "result" member: a list gets a full page
                data = sampler.value(schema.get("properties", {}).get("result", {}), "", 1, top_list=True)
            else:
                data = sampler.value(schema, "", 0)
            body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            bodies["current"] = body.encode()
            tool = make_http_tool(entry, runtime)
            result = await tool.run(_arguments(entry.input_schema), ToolContext(tool_name=entry.name))
            assert isinstance(result, mcp_types.CallToolResult)
            text = "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
            valid = result.structured_content is not None and Draft202012Validator(entry.output_schema).is_valid(
                result.structured_content
            )
            notes = (result.structured_content or {}).get("_truncated", []) if result.structured_content else []
            rows.append(
                {
                    "tool": entry.name,
                    "before_tokens": counter.count(body),
                    "after_tokens": counter.count(text),
                    "before_bytes": len(body.encode()),
                    "after_bytes": len(text.encode()),
                    "is_error": bool(result.is_error),
                    "valid": valid,
                    "cut": bool(notes),
                    "wrapped": entry.binding.wrap_output,
                }
            )
    before = sum(r["before_tokens"] for r in rows)
    after = sum(r["after_tokens"] for r in rows)
    per_op = [1 - r["after_tokens"] / r["before_tokens"] for r in rows if r["before_tokens"]]
    return {
        "operations": len(rows),
        "step": step,
        "before_tokens": before,
        "after_tokens": after,
        "reduction": 1 - after / before if before else 0.0,
        "median_reduction": statistics.median(per_op) if per_op else 0.0,
        "over_stdio_line": sum(1 for r in rows if r["before_bytes"] * 2 > 64 * 1024),
        "largest_after_bytes": max((r["after_bytes"] for r in rows), default=0),
        "cut": sum(1 for r in rows if r["cut"]),
        "valid": sum(1 for r in rows if r["valid"]),
        "errors": sum(1 for r in rows if r["is_error"]),
        "rows": rows,
    }


# ------------------------------------------------------------------------------------- main


def measure() -> dict[str, Any]:
    from bridge.serving.assemble import server_instructions
    from generator.emit.catalogue import build_catalogue
    from generator.generate import finish_catalogue
    from generator.load.spec import load_spec
    from generator.options import DEFAULT_DESCRIPTION_LIMIT, GenerateOptions
    from generator.parse.api import parse_api
    from generator.shape.api import Shaped, ToolShape
    from generator.shape.compact import CompactSettings, compact_api
    from generator.shape.describe import DescriptionRules, tool_description
    from tests.node_tools import github_spec

    counter = token_counter()
    spec = github_spec()
    options = GenerateOptions()
    loaded = load_spec(str(spec), validate=False)
    started = time.perf_counter()
    raw = parse_api(loaded.document, options=options, source_name=str(spec))
    parsed_s = time.perf_counter() - started
    started = time.perf_counter()
    catalogue = finish_catalogue(raw, options)
    lean_s = time.perf_counter() - started
    # "Before": every tool as parsed, nothing compacted or trimmed.
    as_parsed = DescriptionRules(DEFAULT_DESCRIPTION_LIMIT, compact=False)
    unshaped = tuple(
        ToolShape(tool_description(op, as_parsed), op.arguments, op.result, fields_arg=None, page_args=())
        for op in raw.operations
    )
    before_catalogue = build_catalogue(raw, Shaped(tools=unshaped, shared_arguments={}))
    compacted = compact_api(
        raw,
        CompactSettings(
            property_description_limit=options.property_description_limit,
            boilerplate_repeats=options.boilerplate_repeats,
            share_min_chars=options.share_min_chars,
        ),
    )
    no_out_catalogue = finish_catalogue(raw, replace(options, output_schemas=False))

    before_pairs = _registry_tools(before_catalogue)
    after_pairs = _registry_tools(catalogue)
    no_out_pairs = _registry_tools(no_out_catalogue)
    discovery_pairs = _registry_tools(catalogue, discovery=True)
    tools_count = len(catalogue.tools)

    data: dict[str, Any] = {
        "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
        "counter": how_counted(counter),
        "exact": counter.exact,
        "spec": str(spec.relative_to(ROOT)),
        "tools": tools_count,
        "with_output_schema": sum(1 for t in catalogue.tools if t.output_schema is not None),
        "with_fields": sum(1 for t in catalogue.tools if t.binding.fields_arg),
        "parse_s": round(parsed_s, 2),
        "lean_s": round(lean_s, 2),
        "visible_before": model_visible_tokens(_wire(before_pairs), counter),
        "visible_after": model_visible_tokens(_wire(after_pairs), counter),
        "visible_after_no_output": model_visible_tokens(_wire(no_out_pairs), counter),
        "description_before": sum(counter.count(t.description) for t in before_catalogue.tools),
        "description_after": sum(counter.count(t.description) for t in catalogue.tools),
        "input_before": sum(counter.count_json(t.input_schema) for t in before_catalogue.tools),
        "input_after": sum(counter.count_json(t.input_schema) for t in catalogue.tools),
        "instructions_tokens": counter.count(server_instructions(catalogue, "tools", tools_count)),
        "shared_arguments": len(catalogue.shared_arguments),
        "bytes_before": list_bytes(_wire(before_pairs)),
        "bytes_after": list_bytes(_wire(after_pairs)),
        "bytes_after_no_output": list_bytes(_wire(no_out_pairs)),
        "output_bytes_before": sum(
            len(json.dumps(t.output_schema, separators=(",", ":"), ensure_ascii=False).encode())
            for t in before_catalogue.tools
            if t.output_schema is not None
        ),
        "output_bytes_after": sum(
            len(json.dumps(t.output_schema, separators=(",", ":"), ensure_ascii=False).encode())
            for t in catalogue.tools
            if t.output_schema is not None
        ),
        "discovery_visible": model_visible_tokens(_wire(discovery_pairs), counter),
        "discovery_bytes": list_bytes(_wire(discovery_pairs)),
        "discovery_instructions_tokens": counter.count(server_instructions(catalogue, "discovery", tools_count)),
        "constraints": _constraints(raw, compacted),
        "largest_after": sorted(
            ((counter.count(visible_json(t)), t["name"]) for t in _wire(after_pairs)), reverse=True
        )[:5],
    }
    data["served"] = served_lists(counter)
    data["bytes_parts_after"] = _parts([w for _, w in after_pairs])
    data["results"] = asyncio.run(_results(raw, catalogue, counter, RESULT_SAMPLE))
    return data


def _parts(wires: list[Any]) -> dict[str, int]:
    parts: Counter[str] = Counter()
    for wire in wires:
        dumped = wire.model_dump(mode="json", by_alias=True, exclude_none=True)
        for key, value in dumped.items():
            parts[key] += len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()) + len(key) + 4
    return dict(parts.most_common())


def _served_table(data: dict[str, Any]) -> list[str]:
    """The served lists, best cell per column in bold, and the two GitHub targets judged on the bridge's."""
    from bench.headline import mark_best

    served = data["served"]
    nan = float("nan")
    tokens = [float(served[label].get("tokens", nan)) for label in SERVED]
    sizes = [float(served[label].get("bytes", nan)) for label in SERVED]
    rows = zip(SERVED, mark_best(tokens, 0), mark_best(sizes, 0), strict=True)
    lines = ["| served tools/list | tools | tokens | bytes | |", "|---|---:|---:|---:|---|"]
    lines += [
        f"| {label} | {served[label].get('tools', 'n/a')} | {t} | {b} | {served[label].get('error', '')} |"
        for label, t, b in rows
    ]
    own = served[BRIDGE_SPEC]
    lines += [
        "",
        f"Targets on the bridge's served list: tokens <= {GITHUB_TOKENS:,}: "
        f"{judge(float(own.get('tokens', nan)), GITHUB_TOKENS)}; bytes <= {GITHUB_LIST_BYTES:,}: "
        f"{judge(float(own.get('bytes', nan)), GITHUB_LIST_BYTES)}. In process the same list counts "
        f"{data['visible_after']:,} tokens and {data['bytes_after']:,} bytes"
        + (
            " (the same)."
            if (own.get("tokens"), own.get("bytes")) == (data["visible_after"], data["bytes_after"])
            else " (not what was served: the targets are judged on the served list)."
        ),
    ]
    return lines


def _pct(before: float, after: float) -> str:
    return f"{(1 - after / before) * 100:.1f}%" if before else "n/a"


def report(data: dict[str, Any]) -> str:
    c = data["constraints"]
    r = data["results"]
    lines = [
        "# Token bench: lean by construction",
        "",
        f"Generated by `python -m bench.tokens` on {data['machine']}. Spec: `{data['spec']}` "
        f"({data['tools']} tools, {data['with_output_schema']} with an output schema, {data['with_fields']} with a "
        "`fields` argument).",
        "",
        "## Tool list: what the model pays before the first call",
        "",
        f"Every figure here is counted one way (bench/visible.py): tokens = {data['counter']}; bytes = the "
        "compact JSON of the `tools/list` result. The served lists were measured in this run, each server "
        "spawned over stdio on the same spec file; the best cell of each column is in bold, whoever holds it.",
        "",
        *_served_table(data),
        "",
        "mcp-bridge in process, before and after compaction (the same counting, on the tools as the wire carries "
        "them):",
        "",
        "| | tokens | vs before | bytes | vs before |",
        "|---|---:|---:|---:|---:|",
        f"| before compaction | {data['visible_before']:,} | | {data['bytes_before']:,} | |",
        f"| after (what `serve` sends) | {data['visible_after']:,} | "
        f"−{_pct(data['visible_before'], data['visible_after'])} | {data['bytes_after']:,} | "
        f"−{_pct(data['bytes_before'], data['bytes_after'])} |",
        f"| after, `--no-output-schemas` (no `fields` argument) | {data['visible_after_no_output']:,} | "
        f"−{_pct(data['visible_before'], data['visible_after_no_output'])} | {data['bytes_after_no_output']:,} | "
        f"−{_pct(data['bytes_before'], data['bytes_after_no_output'])} |",
        "",
        "Counted on their own (so not adding up to the JSON count above): descriptions "
        f"{data['description_before']:,} → {data['description_after']:,} tokens and input "
        f"schemas {data['input_before']:,} → {data['input_after']:,}. The server instructions add "
        f"{data['instructions_tokens']:,} tokens once: the trimming conventions and the "
        f"{data['shared_arguments']} argument descriptions shared by many tools (said once there instead of in "
        "every tool).",
        f"Generation: parse {data['parse_s']} s, compaction + output shaping {data['lean_s']} s.",
        "",
        "Largest tools after (tokens of name + description + inputSchema): "
        + ", ".join(f"`{name}` {tokens:,}" for tokens, name in data["largest_after"])
        + ".",
        "",
        "## Constraints kept by compaction",
        "",
        "Counted on each schema's expansion (every `$defs` reference followed, a cycle stops at its "
        "second visit), summed over all tools; `enum` counts values, `required` names, `closed` "
        "`additionalProperties: false`. Before = the converter's schemas, after = compacted.",
        "",
        "| keyword | input before | input after | output before | output after |",
        "|---|---:|---:|---:|---:|",
    ]
    keys = sorted(set(c["input_schema"]["before"]) | set(c["output_schema"]["before"]))
    for key in keys:
        lines.append(
            f"| {key} | {c['input_schema']['before'].get(key, 0):,} | {c['input_schema']['after'].get(key, 0):,} | "
            f"{c['output_schema']['before'].get(key, 0):,} | {c['output_schema']['after'].get(key, 0):,} |"
        )
    same = all(c[w]["before"] == c[w]["after"] for w in c)
    lines += [
        "",
        f"All counts equal: **{'yes' if same else 'NO'}**. (The advertised output schema then widens "
        "further for trimming, on purpose: see bridge/results/trim.py.)",
        "",
        "## Whole tools/list bytes",
        "",
        f"Output schemas alone: {data['output_bytes_before']:,} → {data['output_bytes_after']:,} bytes. "
        "Parts of the list after: "
        + ", ".join(f"{key} {value:,}" for key, value in data["bytes_parts_after"].items())
        + ".",
        "",
        "## Discovery mode",
        "",
        f"Three tools: {data['discovery_visible']:,} tokens model-visible (target ≤ {DISCOVERY_TOKENS:,}: "
        f"{judge(data['discovery_visible'], DISCOVERY_TOKENS)}), "
        f"{data['discovery_bytes']:,} bytes of tools/list; instructions {data['discovery_instructions_tokens']:,} "
        "tokens.",
        "",
        "## Results",
        "",
        f"{r['operations']} GET operations (every {r['step']}th of the GET operations with an output schema, in "
        "catalogue order), each answered with a response generated from its full output schema: required "
        "fields always, optional ones 60% of the time, nullable ones null a third of the time, list endpoints "
        f"a full page of {LIST_ITEMS} items, long-text fields 20-400 words. Run through the real tool with the default "
        "trimming (24 KB budget, 100 items, 4,000 characters).",
        "",
        "| | tokens |",
        "|---|---:|",
        f"| untrimmed JSON (the whole body) | {r['before_tokens']:,} |",
        f"| trimmed (the text the model reads) | {r['after_tokens']:,} |",
        f"| reduction, all results (target ≥ {RESULT_REDUCTION:.0%}: "
        f"{judge(r['reduction'], RESULT_REDUCTION, at_least=True)}) | {r['reduction'] * 100:.1f}% |",
        f"| median reduction per operation | {r['median_reduction'] * 100:.1f}% |",
        "",
        f"{r['cut']} of {r['operations']} results were cut (with a `_truncated` note); "
        f"{r['over_stdio_line']} untrimmed results would not fit a 64 KB stdio line (sent twice: text and "
        f"structuredContent); the largest trimmed result is {r['largest_after_bytes']:,} bytes. "
        f"{r['valid']} of {r['operations']} trimmed results validate against the advertised output schema; "
        f"{r['errors']} were errors.",
        "",
        "Caveat: the responses are synthetic. Real GitHub answers carry more URL fields and fewer long texts; "
        "the byte budget dominates the reduction on list endpoints and null/empty dropping on single objects.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    data = measure()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "tokens.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    REPORT.write_text(report(data), encoding="utf-8")
    print(REPORT.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
