"""Redaction cost (P26): how long masking every spelling of the secrets takes on big answers.

``python -m bench.redact_bench`` prints a markdown table of medians (of 7 runs, in process, CPU
time of this process: the bench machine is shared, wall time measures the neighbours) for
bodies up to the default response cap (1 MiB): a JSON answer redacted string by string (the way
JSON results are), the same answer as one text, a text full of escapes (URLs, HTML, JSON ``\\/``),
a hostile text of nothing but percent escapes, and a binary body. Secrets: two API keys, an HTTP
basic pair, a bearer token and two short ones (masked only in credential positions).
"""

from __future__ import annotations

import functools
import json
import random
import statistics
import string
import sys
import time
from collections.abc import Callable
from typing import Any

from bridge.contract.catalogue import EnvVar, SecurityScheme
from bridge.secrets.credentials import Credentials
from bridge.secrets.held import call_scope

RUNS = 7
CAP = 1024 * 1024


def _credentials() -> Credentials:
    def key(name: str, where: str = "header") -> SecurityScheme:
        return SecurityScheme(type="apiKey", location=where, param_name=name, env=(EnvVar(role="value", name=name),))  # type: ignore[arg-type]

    schemes = {
        "k1": key("X-API-Key"),
        "k2": key("api_key", "query"),
        "k3": key("X-Short"),
        "bearer": SecurityScheme(type="http", http_scheme="bearer", env=(EnvVar(role="token", name="TOKEN"),)),
        "basic": SecurityScheme(
            type="http",
            http_scheme="basic",
            env=(EnvVar(role="username", name="USER"), EnvVar(role="password", name="PASSWORD")),
        ),
    }
    env = {
        "X-API-Key": "SECRET-canary-7d41e0b2",
        "api_key": "QSECRET/canary+19af",
        "X-Short": "abc",
        "TOKEN": "eyJ" + "x" * 300,
        "USER": "alice",
        "PASSWORD": "pw",
    }
    return Credentials(schemes, env)


def _bodies() -> dict[str, Any]:
    rng = random.Random(20261201)
    words = ["".join(rng.choices(string.ascii_letters, k=rng.randint(2, 12))) for _ in range(2000)]
    items: list[dict[str, Any]] = []
    while len(json.dumps(items)) < CAP:
        items.append({"id": len(items), "name": " ".join(rng.choices(words, k=6)), "tags": rng.choices(words, k=3)})
    escaped = ""
    while len(escaped) < CAP:
        escaped += f"https://x.example/a%2Fb?q={rng.choice(words)}&amp;r=%20 \\/ &#47; {rng.choice(words)}\n"
    return {
        "json": items,
        "text": json.dumps(items),
        "escapes": escaped,
        "percent": "%41" * (CAP // 3),
        "binary": bytes(rng.getrandbits(8) for _ in range(CAP)),
    }


def _median(call: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.process_time()
        call()
        times.append(time.process_time() - started)
    return statistics.median(times)


def _walk(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_walk(v, redact) for v in value]
    if isinstance(value, dict):
        return {redact(k): _walk(v, redact) for k, v in value.items()}
    return value


def main() -> None:
    if sys.argv[1:] == ["held"]:  # only the learnt tokens' lifetimes (bridge/secrets/held.py)
        _held()
        return
    redact = _credentials().redact
    bodies = _bodies()
    rows = [
        ("JSON answer, string by string", lambda: _walk(bodies["json"], redact)),
        ("the same answer as one text", lambda: redact(bodies["text"])),
        ("text full of escapes", lambda: redact(bodies["escapes"])),
        ("only percent escapes", lambda: redact(bodies["percent"])),
        ("binary body (mask_bytes)", lambda: redact.mask_bytes(bodies["binary"])),
    ]
    print(f"| body (~{CAP // 1024} KiB) | median of {RUNS} (ms) |")
    print("|---|---|")
    for name, call in rows:
        print(f"| {name} | {_median(call) * 1000:.0f} |")
    _learnt(bodies["text"])


def _learnt(text: str) -> None:
    """Tokens the bridge learns at run time (fetched, exchanged per user): what one more costs to
    learn, and what they cost every answer."""
    print()
    print(f"| learnt JWT-sized tokens | learn one more (ms) | redact the ~{CAP // 1024} KiB text (ms) |")
    print("|---|---|---|")
    for count in (1, 32, 128, 512):
        redact = _credentials().redact
        tokens = [f"eyJ{n:05d}" + "".join(random.choices(string.ascii_letters, k=800)) for n in range(count + RUNS)]
        redact.learn(tokens[:count])
        learn = _median(functools.partial(redact.learn, tokens[: count + 1]))
        print(f"| {count} | {learn * 1000:.1f} | {_median(functools.partial(redact, text)) * 1000:.0f} |")


def _held() -> None:
    """Learnt tokens held while a cache or a call may send them: what a tool call that sends an
    already-held token adds (scope, hold, release), and what a new token and a release cost with
    ``count`` tokens held at once (concurrent workflow runs, cached per-user tokens)."""
    print()
    print("| tokens held at once | a call sending a held one (µs) | hold a new one (ms) | release one (ms) |")
    print("|---|---|---|---|")
    for count in (1, 32, 128, 512):
        per_call, hold, release = _held_row(count)
        print(f"| {count} | {per_call * 1e6:.1f} | {hold * 1000:.1f} | {release * 1000:.2f} |")


def _held_row(count: int) -> tuple[float, float, float]:
    held = _credentials().held
    tokens = [f"eyJ{n:05d}" + "".join(random.choices(string.ascii_letters, k=800)) for n in range(count + RUNS)]
    for token in tokens[:count]:
        held.hold(token)

    def call() -> None:
        for _ in range(1000):
            with call_scope():
                held.use(tokens[0])

    extra, gone = iter(tokens[count:]), iter(tokens[count:])
    hold = _median(lambda: held.hold(next(extra)))
    release = _median(lambda: held.release(next(gone)))  # a rebuild only once stale outnumber live
    return _median(call) / 1000, hold, release


if __name__ == "__main__":
    main()
