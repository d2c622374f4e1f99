"""Counting the tokens a model pays for, offline.

The count uses OpenAI's ``o200k_base`` encoding through ``tiktoken``. tiktoken downloads its rank
files on first use, which a machine without general network access cannot do, so
:func:`load_counter` never lets it: the ranks come from, in order,

1. tiktoken's own cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or
   ``<tmp>/data-gym-cache``), when a file there has the SHA-256 tiktoken pins;
2. the npm package ``tiktoken`` (``encoders/<name>.json`` ships the same ranks in a compressed
   form), found under one of the folders given (``node_modules/tiktoken`` inside them, or the
   package folder itself), under ``$MCP_BRIDGE_TIKTOKEN_DIR``, or, in a source checkout, where
   the tests and benchmarks install it (``bench/tokenizer``, ``bench/node``, ``tests/node``). The
   official ``.tiktoken`` rank file is rebuilt from it and checked against the same pinned SHA-256;
3. otherwise an estimate, documented as such: ``ceil(characters / 4)``. On GitHub's compacted
   tool list it says 207,520 where the exact count is 178,480 (16% high); it is never reported
   as exact.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge.contract.version import install_hint

__all__ = ["ENCODING", "ESTIMATE_CHARS_PER_TOKEN", "RANK_FILES", "TokenCounter", "load_counter", "rank_file_from_npm"]

ENCODING = "o200k_base"
ESTIMATE_CHARS_PER_TOKEN = 4
TIKTOKEN_DIR_ENV = "MCP_BRIDGE_TIKTOKEN_DIR"
_CHECKOUT = Path(__file__).resolve().parents[2]
# Where `make test` and `make bench` put the npm package in a source checkout (absent when installed).
SOURCE_TREE_DIRS: tuple[Path, ...] = (
    tuple(_CHECKOUT / sub for sub in ("bench/tokenizer", "bench/node", "tests/node"))
    if (_CHECKOUT / "pyproject.toml").is_file()
    else ()
)

# name -> (the URL tiktoken downloads, whose SHA-1 is the cache key; the SHA-256 tiktoken pins)
# Values from tiktoken_ext/openai_public.py (tiktoken 0.14).
RANK_FILES: dict[str, tuple[str, str]] = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}


# Split patterns and special tokens, as in tiktoken_ext/openai_public.py (tiktoken 0.14).
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = "|".join(
    [
        r"""'(?i:[sdmt]|ll|ve|re)""",
        r"""[^\r\n\p{L}\p{N}]?+\p{L}++""",
        r"""\p{N}{1,3}+""",
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+""",
        r"""\s++$""",
        r"""\s*[\r\n]""",
        r"""\s+(?!\S)""",
        r"""\s""",
    ]
)
_PATTERNS = {"o200k_base": _O200K_PATTERN, "cl100k_base": _CL100K_PATTERN}
_SPECIALS = {
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
}


@dataclass(frozen=True, slots=True)
class TokenCounter:
    """Counts tokens of text; ``exact`` is False when the count is the chars/4 estimate."""

    encoding: str
    exact: bool
    source: str
    _count: Callable[[str], int]

    def count(self, text: str) -> int:
        return self._count(text) if text else 0

    def count_json(self, value: Any) -> int:
        """Tokens of ``value`` as compact JSON (what a client typically sends to the model)."""
        return self.count(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _estimate(text: str) -> int:
    return math.ceil(len(text) / ESTIMATE_CHARS_PER_TOKEN)


def estimate_counter(encoding: str = ENCODING, reason: str = "") -> TokenCounter:
    source = f"estimate: characters / {ESTIMATE_CHARS_PER_TOKEN}" + (f" ({reason})" if reason else "")
    return TokenCounter(encoding, False, source, _estimate)


def _cache_dir() -> Path | None:
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            value = os.environ[var]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _from_cache(encoding: str) -> bytes | None:
    url, sha256 = RANK_FILES[encoding]
    folder = _cache_dir()
    if folder is None:
        return None
    path = folder / hashlib.sha1(url.encode()).hexdigest()
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == sha256 else None


def rank_file_from_npm(encoder_json: dict[str, Any]) -> bytes:
    """The official ``.tiktoken`` rank file rebuilt from the npm package's ``encoders/<name>.json``.

    ``bpe_ranks`` holds lines ``<marker> <first rank> <token> <token> ...`` (tokens base64, ranks
    consecutive from the first); the rank file has one ``<token> <rank>`` line per token.
    """
    lines: list[bytes] = []
    for line in str(encoder_json["bpe_ranks"]).split("\n"):
        parts = line.split(" ")
        if len(parts) < 2:
            continue
        first = int(parts[1])
        lines.extend(f"{token} {first + offset}\n".encode("ascii") for offset, token in enumerate(parts[2:]))
    return b"".join(lines)


def _npm_candidates(encoding: str, folders: Iterable[Path]) -> Iterable[Path]:
    for folder in folders:
        yield folder / "node_modules" / "tiktoken" / "encoders" / f"{encoding}.json"
        yield folder / "tiktoken" / "encoders" / f"{encoding}.json"
        yield folder / "encoders" / f"{encoding}.json"


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _pattern_and_specials(encoding: str) -> tuple[str, dict[str, int]]:
    return _PATTERNS[encoding], dict(_SPECIALS[encoding])


def load_counter(encoding: str = ENCODING, *, npm_dirs: Sequence[Path] = ()) -> TokenCounter:
    """The best offline token counter for ``encoding`` (see the module docstring); never downloads."""
    try:
        import tiktoken
    except ImportError:  # tiktoken is the `tokens` extra
        return estimate_counter(encoding, f"tiktoken is not installed: {install_hint('tokens')}")
    if encoding not in RANK_FILES:
        return estimate_counter(encoding, f"no pinned rank file for {encoding}")
    _, sha256 = RANK_FILES[encoding]
    data = _from_cache(encoding)
    source = "tiktoken cache"
    pattern: str | None = None
    specials: dict[str, int] = {}
    if data is None:
        folders = list(npm_dirs)
        extra = os.environ.get(TIKTOKEN_DIR_ENV)
        if extra:
            folders.append(Path(extra))
        folders.extend(SOURCE_TREE_DIRS)
        for candidate in _npm_candidates(encoding, folders):
            try:
                encoder_json = json.loads(candidate.read_bytes())
            except (OSError, ValueError):
                continue
            rebuilt = rank_file_from_npm(encoder_json)
            if hashlib.sha256(rebuilt).hexdigest() != sha256:
                continue
            data, source = rebuilt, f"npm tiktoken ranks at {candidate}"
            pattern = str(encoder_json.get("pat_str") or "") or None
            specials = {str(k): int(v) for k, v in dict(encoder_json.get("special_tokens") or {}).items()}
            break
    if data is None:
        return estimate_counter(encoding, f"no {encoding} ranks found offline")
    if pattern is None or not specials:
        pattern, specials = _pattern_and_specials(encoding)
    enc = tiktoken.Encoding(encoding, pat_str=pattern, mergeable_ranks=_parse_ranks(data), special_tokens=specials)

    def count(text: str) -> int:
        return len(enc.encode_ordinary(text))

    return TokenCounter(encoding, True, f"{source} (SHA-256 verified)", count)
