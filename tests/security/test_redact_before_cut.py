"""Text is redacted before it is cut, on every path to the model (P26, P68).

A secret that straddles a cut must never show with part of its characters: every excerpt of
upstream, spec or program text goes through :func:`bridge.secrets.excerpt.excerpt`, which redacts
first. The surfaces are driven through the official client where the red team found them (a
long-running operation's failure and status word), and through their functions for the rest
(status errors, program output, JSON strings past the cap, any excerpt), with a secret at every
offset around each cut.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.calls.longrunning.follow import FAILURE_EXCERPT_CHARS, STATE_TEXT_CHARS
from bridge.contract.catalogue import EnvVar, HttpBinding, SecurityScheme
from bridge.modes.program_result import MAX_PRINTED_CHARS, Printed, program_result
from bridge.results.status_errors import ERROR_EXCERPT_CHARS, status_error
from bridge.results.tool_result import response_to_result
from bridge.results.trim import TrimSettings
from bridge.secrets.credentials import Credentials
from bridge.secrets.excerpt import SLACK, cut_redacted, excerpt
from bridge.secrets.redact import Redactor
from bridge.secrets.redact_json import Bounds, bounded_copy
from bridge.upstream.client import UpstreamResponse
from bridge.upstream.response_body import read_capped
from tests.bridge.calls.longrunning.harness import QUICK, jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import API_KEY, JobStore, serve_jobs

ROOT = Path(__file__).resolve().parents[2]
WAIT = 10.0
SHORTEST = 4  # no run of this many of a secret's characters may show
SECRET_CHARS = "QXZJKVWqxzjkvw"  # no filler, message or mask uses these
FILLER_CHARS = "abc de.,:/\n*-"


def leaked(text: str, secret: str) -> str | None:
    """The first run of ``SHORTEST`` characters of ``secret`` that ``text`` shows."""
    for at in range(len(secret) - SHORTEST + 1):
        if secret[at : at + SHORTEST] in text:
            return secret[at : at + SHORTEST]
    return None


def texts(result: mcp_types.CallToolResult) -> str:
    shown = "\n".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
    return shown + json.dumps(result.structured_content)


# ------------------------------------------------------------ long-running operations, official client


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


@pytest.mark.anyio
async def test_a_key_straddling_the_failure_excerpts_cut_never_reaches_the_model(store: JobStore) -> None:
    # The failed status answer is {"id":"job-N","status":"failed","error":"eee...KEY and on"}: the
    # key's first `split` characters fall before the excerpt's cut, for every split.
    async with jobs_client(store) as client:
        for split in range(1, len(API_KEY)):
            job = f"job-{len(store.jobs) + 1}"
            before = len(json.dumps({"id": job, "status": "failed", "error": ""}, separators=(",", ":"))) - 2
            pad = FAILURE_EXCERPT_CHARS - before - split
            with anyio.fail_after(WAIT):
                result = await client.call_tool("startJob", {"kind": f"{pad}:failure", "steps": 1})
            assert result.is_error and "the operation failed" in texts(result), texts(result)
            assert leaked(texts(result), API_KEY) is None, (split, texts(result))


@pytest.mark.anyio
async def test_a_key_straddling_the_status_words_cut_reaches_neither_progress_nor_the_pending_result(
    store: JobStore,
) -> None:
    messages: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    short = dataclasses.replace(QUICK, wait=0.3)
    async with jobs_client(store, follow=short) as client:
        for split in range(1, len(API_KEY)):
            with anyio.fail_after(WAIT):
                result = await client.call_tool(
                    "startJob", {"kind": f"{STATE_TEXT_CHARS - split}:state"}, progress_callback=on_progress
                )
            assert not result.is_error, texts(result)
            pending = json.loads(result.content[0].text)  # type: ignore[union-attr]
            assert pending["status"] == "running" and pending["state"].startswith("rrr"), pending
            assert leaked(texts(result), API_KEY) is None, (split, texts(result))
        with anyio.fail_after(WAIT):  # a status word of 200,000 characters: read only as far as needed
            result = await client.call_tool("startJob", {"kind": "200000:state"})
        assert json.loads(result.content[0].text)["state"] == "r" * STATE_TEXT_CHARS + "…"  # type: ignore[union-attr]
    assert messages and all(message.startswith("POST /jobs: rrr") for message in messages), messages
    assert leaked("\n".join(messages), API_KEY) is None


# ------------------------------------------------------------------- every surface, any secret, any offset

secrets = st.text(SECRET_CHARS, min_size=8, max_size=40)
fillers = st.text(FILLER_CHARS, max_size=30)


def redactor(secret: str) -> Redactor:
    scheme = SecurityScheme(type="apiKey", location="header", param_name="X-K", env=(EnvVar(role="value", name="K"),))
    return Credentials({"k": scheme}, {"K": secret}).redact


def around(secret: str, cut: int, split: int, filler: str, copies: int) -> str:
    """A text whose ``cut``-th character falls after ``split`` characters of ``secret`` (at the
    end of ``copies`` whole copies of it, which redaction shortens)."""
    head = (filler or "a") * (cut // max(1, len(filler or "a")) + 1)
    head = head[: max(0, cut - split - copies * len(secret))]
    return head + secret * copies + secret + filler + "z" * 20


def _answer(status: int, content: bytes, media: str) -> UpstreamResponse:
    return UpstreamResponse(
        status=status,
        reason="Internal Server Error" if status >= 400 else "OK",
        headers=httpx.Headers({"content-type": media}),
        content=content,
        url=httpx.URL("http://upstream.test/x"),
        operation="GET /x",
    )


def _status_error(redact: Redactor, text: str) -> str:
    response = _answer(500, text.encode(), "text/plain")
    return str(status_error(response, binding=HttpBinding(method="GET", path="/x"), redact=redact))


STRING_CAP = 1000


def _json_string(redact: Redactor, text: str) -> str:
    response = _answer(200, json.dumps({"v": text}).encode(), "application/json")
    trim = TrimSettings(max_string=STRING_CAP)
    binding = HttpBinding(method="GET", path="/x")
    return texts(response_to_result(response, binding=binding, tool_name="x", redact=redact, trim=trim))


def _printed(redact: Redactor, text: str) -> str:
    printed = Printed()
    printed("stdout", text)
    return texts(program_result(None, printed, redact, None))


def _bounded(redact: Redactor, text: str) -> str:
    copied, _ = bounded_copy({"v": text}, redact, Bounds(max_string=1000))
    return str(copied["v"])[:1001]  # what trimming at the cap keeps, and one character more


SURFACES = {
    "status error": (_status_error, ERROR_EXCERPT_CHARS),
    "answer string past the string cap": (_json_string, STRING_CAP - 1),
    "program output": (_printed, MAX_PRINTED_CHARS),
    "program value past the string cap": (_bounded, 1000 + SLACK),
    "any excerpt": (lambda redact, text: excerpt(text, redact, 64), 64),
    "an excerpt of a long text": (lambda redact, text: excerpt(text, redact, 64), 64 + SLACK),
}


@pytest.mark.parametrize("surface", sorted(SURFACES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=secrets, filler=fillers, split=st.integers(1, 39), copies=st.sampled_from([0, 1, 3]))
def test_no_run_of_a_secret_straddling_any_cut_reaches_the_model(
    surface: str, secret: str, filler: str, split: int, copies: int
) -> None:
    function, cut = SURFACES[surface]
    text = around(secret, cut, min(split, len(secret) - 1), filler, copies)
    shown = function(redactor(secret), text)
    assert leaked(shown, secret) is None, (surface, shown[-200:])


def test_a_text_full_of_long_secrets_never_brings_a_cut_one_into_the_excerpt() -> None:
    # Whole copies shorten to a mask each: a cut copy after them would move towards the start.
    secret = "QXZJKVW" * 300  # a 2,100-character token
    redact = redactor(secret)
    text = "a" * 10 + secret * (SLACK // len(secret) + 2)
    for limit in (64, 500, 2000):
        assert leaked(excerpt(text, redact, limit), secret) is None
    copied, _ = bounded_copy({"v": "a" * 900 + secret * 20}, redact, Bounds(max_string=1000))
    assert leaked(str(copied["v"])[:1001], secret) is None


@pytest.mark.anyio
@pytest.mark.parametrize("split", [10, 100, 190])
async def test_an_error_body_full_of_a_long_secret_leaves_no_run_of_it_past_the_read(split: int) -> None:
    # The error body is read to its cap and 4 KiB more, redacted, then cut: the copies in those
    # 4 KiB shrink to masks, which would move a copy the read cut in two into the kept part.
    secret = ("QXZJKVWqxzjkvw" * 15)[:200]
    redact = redactor(secret)
    limit = 1000
    body = ("e" * (limit - 50) + secret * 30)[: limit + 4096 - split] + secret + "z" * 5000
    response = httpx.Response(500, stream=httpx.ByteStream(body.encode()))
    content, truncated = await read_capped(response, "GET /x", limit=limit, redact=redact)
    assert truncated and len(content) <= limit
    assert leaked(content.decode(), secret) is None, content[-300:]


@given(before=st.text("abc de.,", max_size=40), after=st.text("abc de.,", max_size=40))
def test_a_cut_never_leaves_part_of_a_mask(before: str, after: str) -> None:
    redacted = before + "***" + after
    for limit in range(len(redacted) + 1):
        shown = cut_redacted(redacted, limit, mark="…").removesuffix("…")
        assert len(shown) <= limit and redacted.startswith(shown)
        assert shown.endswith("***") or not shown.endswith("*"), (limit, shown)


def test_a_string_cut_by_trimming_never_ends_in_part_of_a_mask() -> None:
    secret = "QXZJKVWqxzjkvw"
    redact = redactor(secret)
    for at in range(STRING_CAP - 6, STRING_CAP + 2):  # the mask across trimming's cut, at every offset
        response = _answer(200, json.dumps({"v": "a" * at + secret + "b" * 50}).encode(), "application/json")
        trim = TrimSettings(max_string=STRING_CAP)
        result = response_to_result(
            response, binding=HttpBinding(method="GET", path="/x"), tool_name="x", redact=redact, trim=trim
        )
        assert result.structured_content is not None
        value = str(result.structured_content["v"])
        assert not value.removesuffix("…").endswith("*") or value.removesuffix("…").endswith("***"), (at, value[-8:])


# ------------------------------------------------------------------------ no other path cuts before redacting


def _sliced(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice) for n in ast.walk(node))


def _redacting(call: ast.Call) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return ("redact" in name.lower() and name != "cut_redacted") or name == "member"


MODEL_FACING = (
    "bridge/calls/longrunning/follow.py",
    "bridge/results/status_errors.py",
    "bridge/server/tasks.py",
    "bridge/workflows/runner.py",
    "bridge/workflows/tools.py",
    "bridge/workflows/evaluate.py",
    "bridge/modes/sandbox.py",
    "bridge/resources/__init__.py",
    "bridge/results/response_check.py",
    "bridge/upstream/response_body.py",
)
# Slices on those paths that cut no outside text: (file, source of the slice).
NOT_TEXT = {
    ("bridge/calls/longrunning/follow.py", "text[:STATE_TEXT_CHARS + SLACK]"),  # a bounded read, given as partial
    ("bridge/results/status_errors.py", "text.lstrip()[:1]"),  # looks at the first character
    ("bridge/results/status_errors.py", "sorted(set(_rejected_fields(data)))[:5]"),  # a list
    ("bridge/results/status_errors.py", "data[:20]"),  # a list
    ("bridge/server/tasks.py", "params.name[:200]"),  # the model's own tool name
    ("bridge/server/tasks.py", "mine[start:start + PAGE]"),  # a page of a list
    ("bridge/workflows/runner.py", "f'{run.surface}/{step.step_id}'[:128]"),  # a log field of spec names
    ("bridge/workflows/runner.py", "tokens[:-1]"),  # a list
    ("bridge/workflows/tools.py", "combined[:MAX_SCOPE_ALTERNATIVES]"),  # a list
    ("bridge/resources/__init__.py", "uri[:MAX_URI]"),  # the client's own URI
    ("bridge/resources/__init__.py", "items[start:end]"),  # a page of a list
    ("bridge/results/response_check.py", "errors[:MAX_REPORTED_ERRORS]"),  # a list
    ("bridge/results/response_check.py", "details[:3]"),  # a list
    # The read itself, redacted and cut after (response_body's own slack and margin).
    ("bridge/upstream/response_body.py", "chunk[:room]"),
    ("bridge/upstream/response_body.py", "' '.join(str(exc).split())[:160]"),  # zlib's message, to the log
}


def test_no_text_is_cut_and_then_redacted_anywhere_in_the_bridge() -> None:
    found = []
    for path in sorted((ROOT / "bridge").rglob("*.py")):
        if path.name == "excerpt.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _redacting(node) and any(_sliced(a) for a in node.args):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "cut before redacted (use bridge.secrets.excerpt):\n" + "\n".join(found)


def test_the_model_facing_paths_cut_text_only_through_the_excerpt_module() -> None:
    found = []
    for name in MODEL_FACING:
        for node in ast.walk(ast.parse((ROOT / name).read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
                if (name, ast.unparse(node)) not in NOT_TEXT:
                    found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "a cut outside bridge.secrets.excerpt:\n" + "\n".join(found)
