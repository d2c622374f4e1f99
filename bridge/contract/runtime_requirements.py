"""What serving a generated package needs, and nothing more: the slim install's requirements.

A deployment that only serves packages installs ``mcp-bridge`` without its dependencies plus these
(each package's ``requirements.txt`` lists them), leaving out the generator's libraries
(openapi-spec-validator, jinja2, rich, pyyaml) and the optional ones
(tiktoken, openapi-core, pydantic-monty). Every entry is also one of ``pyproject.toml``'s
dependencies, spelled the same (a test checks it).
"""

from __future__ import annotations

from bridge.contract.version import DISTRIBUTION

RUNTIME_REQUIREMENTS: tuple[str, ...] = (
    "mcp>=2.3,<2.4",
    "httpx>=0.28,<0.29",
    "sniffio>=1.3",
    "anyio>=4.5",
    "jsonschema>=4.23",
    "pydantic>=2.9,<3",
    "click>=8.1",
    "uvicorn>=0.30",
    "jsonschema-rs==0.61.2",
    "pyjwt[crypto]>=2.10",
    "pyahocorasick==2.3.1",
)


# What a serve mode needs beyond that (discovery's BM25 search brings numpy).
MODE_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "tools": (),
    "discovery": ("rank-bm25==0.2.2",),
}


# What Arazzo workflows need beyond that: RFC 9535 JSONPath for their criteria
# (bridge/contract/expressions/json_path.py).
WORKFLOW_REQUIREMENTS: tuple[str, ...] = ("python-jsonpath==2.2.2",)


def requirements(mode: str = "tools", *, workflows: bool = False) -> tuple[str, ...]:
    return (*RUNTIME_REQUIREMENTS, *MODE_REQUIREMENTS.get(mode, ()), *(WORKFLOW_REQUIREMENTS if workflows else ()))


def requirements_txt(mode: str = "tools", *, workflows: bool = False) -> str:
    """The ``requirements.txt`` written beside a generated package (for its default mode)."""
    header = (
        "# What `mcp-bridge serve` needs for this package, without the generator's libraries:\n"
        f"#   pip install --no-deps {DISTRIBUTION} && pip install -r requirements.txt\n"
    )
    return header + "".join(f"{line}\n" for line in requirements(mode, workflows=workflows))
