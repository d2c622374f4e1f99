"""`mcp-bridge inspect` and the offline token counter."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.tokens import ensure_tokenizer
from bridge.cli import cli, tokens
from bridge.cli.costs import inspect_target
from bridge.cli.tokens import ESTIMATE_CHARS_PER_TOKEN, RANK_FILES, load_counter, rank_file_from_npm
from tests.golden import GENERATED_DIR, ROOT, spec_path

PETSTORE = str(GENERATED_DIR / "petstore")
CHECKOUT_DIRS = tokens.SOURCE_TREE_DIRS  # before the fixture below hides them
BENCH_TOKENIZER = ROOT / "bench" / "tokenizer"


@pytest.fixture(autouse=True)
def _no_tiktoken_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts in these tests do not depend on what the machine has cached."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    monkeypatch.delenv("MCP_BRIDGE_TIKTOKEN_DIR", raising=False)
    monkeypatch.setattr("bridge.cli.tokens.SOURCE_TREE_DIRS", ())


def test_inspect_lists_every_tool_with_annotations_and_costs() -> None:
    report = inspect_target(PETSTORE)
    assert [t.name for t in report.tools] == [
        "listPets",
        "createPet",
        "getPet",
        "deletePet",
        "waitForAdoption",
        "getInventory",
    ]
    by_name = {t.name: t for t in report.tools}
    assert by_name["getPet"].annotations["readOnlyHint"] is True
    assert by_name["deletePet"].annotations["destructiveHint"] is True
    assert by_name["deletePet"].output_tokens == 0 and by_name["getPet"].output_tokens > 0
    assert all(t.tokens > 0 and t.bytes > 0 for t in report.tools)
    assert report.total_tokens == sum(t.tokens for t in report.tools)
    assert report.largest(1)[0].name == max(report.tools, key=lambda t: t.tokens).name
    assert report.exact is False and "estimate" in report.counter


def test_inspect_in_discovery_mode_measures_the_three_tools() -> None:
    report = inspect_target(PETSTORE, mode="discovery")
    assert [t.name for t in report.tools] == ["search_operations", "describe_operation", "call_operation"]
    assert report.operations == 6
    assert report.instructions_tokens > 0


def test_inspect_json_is_machine_readable_and_a_spec_works_too() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["inspect", str(spec_path("petstore")), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["mode"] == "tools" and len(data["tools"]) == 6
    assert data["total_tokens"] == sum(t["tokens"] for t in data["tools"])
    table = runner.invoke(cli, ["inspect", PETSTORE, "--largest", "2"])
    assert table.exit_code == 0 and "listPets" in table.output and "Largest 2 tools" in table.output


def test_inspect_reports_a_missing_target_as_an_error() -> None:
    result = CliRunner().invoke(cli, ["inspect", "no/such/spec.yaml"])
    assert result.exit_code == 1


def test_npm_ranks_are_rebuilt_into_the_official_rank_file_format() -> None:
    encoder = {"bpe_ranks": "! 0 YQ== Yg==\n! 5 Yw==", "pat_str": "x", "special_tokens": {}}
    assert rank_file_from_npm(encoder) == b"YQ== 0\nYg== 1\nYw== 5\n"


def test_ranks_that_do_not_match_the_pinned_hash_are_not_used(tmp_path: Path) -> None:
    folder = tmp_path / "node_modules" / "tiktoken" / "encoders"
    folder.mkdir(parents=True)
    (folder / "o200k_base.json").write_text(json.dumps({"bpe_ranks": "! 0 YQ==", "pat_str": "x"}), encoding="utf-8")
    counter = load_counter(npm_dirs=[tmp_path])
    assert counter.exact is False
    assert counter.count("abcdefgh") == 8 // ESTIMATE_CHARS_PER_TOKEN


def test_a_verified_cache_file_gives_exact_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _real_ranks()
    url, _ = RANK_FILES["o200k_base"]
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(source)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    counter = load_counter()
    assert counter.exact and "cache" in counter.source
    assert counter.count("Hello world") == 2


def test_the_npm_package_gives_exact_counts() -> None:
    ensure_tokenizer()
    counter = load_counter(npm_dirs=[BENCH_TOKENIZER])
    assert counter.exact and "npm" in counter.source
    assert counter.count("Hello world, this is a test of tokenization!") == 11


def _real_ranks() -> bytes:
    folder = ensure_tokenizer() / "node_modules" / "tiktoken" / "encoders" / "o200k_base.json"
    data = rank_file_from_npm(json.loads(folder.read_bytes()))
    assert hashlib.sha256(data).hexdigest() == RANK_FILES["o200k_base"][1]
    return data


def test_generate_suggests_discovery_mode_above_the_token_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bridge.contract.clients import start_mode

    monkeypatch.setattr(start_mode, "DISCOVERY_HINT_TOKENS", 10)
    result = CliRunner().invoke(cli, ["generate", str(spec_path("petstore")), "-o", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    assert "--mode discovery" in result.output
    assert "cost about " in result.output and "`mcp-bridge inspect` counts the tokens exactly" in result.output
    quiet = CliRunner().invoke(
        cli, ["generate", str(spec_path("petstore")), "-o", str(tmp_path / "q"), "--mode", "discovery"]
    )
    assert quiet.exit_code == 0 and "Hint" not in quiet.output
    assert json.loads((tmp_path / "q" / "catalogue.json").read_text(encoding="utf-8"))["mode"] == "discovery"


def test_just_over_the_budget_the_hint_the_readme_and_inspect_give_one_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    from bridge.cli.costs import print_report
    from bridge.contract.clients import start_mode

    estimated = _petstore_estimate(tmp_path)
    monkeypatch.setattr(start_mode, "DISCOVERY_HINT_TOKENS", estimated - 1)  # just over: no exact recount
    monkeypatch.setattr(tokens, "_from_cache", lambda encoding: _real_ranks())  # inspect counts exactly
    result = CliRunner().invoke(cli, ["generate", str(spec_path("petstore")), "-o", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    (hinted,) = re.findall(r"cost about ([\d,]+) tokens", result.output)
    readme = (tmp_path / "p" / "README.md").read_text(encoding="utf-8")
    assert f"cost about {hinted} tokens" in readme
    import io

    from rich.console import Console

    report = inspect_target(str(tmp_path / "p"))
    out = io.StringIO()
    print_report(report, console=Console(file=out, width=300))
    assert f"about {hinted} tokens" in out.getvalue() and hinted == f"{estimated:,}"


def _petstore_estimate(tmp_path: Path) -> int:
    from bridge.contract.catalogue import Catalogue
    from bridge.contract.clients.start_mode import estimated_tool_list_tokens

    done = CliRunner().invoke(cli, ["generate", str(spec_path("petstore")), "-o", str(tmp_path / "e")])
    assert done.exit_code == 0, done.output
    catalogue = Catalogue.model_validate_json((tmp_path / "e" / "catalogue.json").read_text(encoding="utf-8"))
    return estimated_tool_list_tokens(catalogue)


def test_generate_without_output_schemas_gives_no_output_schema_and_no_fields(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["generate", str(spec_path("petstore")), "-o", str(tmp_path / "p"), "--no-output-schemas"]
    )
    assert result.exit_code == 0, result.output
    catalogue = json.loads((tmp_path / "p" / "catalogue.json").read_text(encoding="utf-8"))
    assert all("output_schema" not in tool for tool in catalogue["tools"])
    assert all("fields" not in tool["input_schema"]["properties"] for tool in catalogue["tools"])


def test_inspect_counts_exactly_with_the_checkouts_tokenizer_and_no_option(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ensure_tokenizer() in CHECKOUT_DIRS  # where the tests and benchmarks install it
    monkeypatch.setattr("bridge.cli.tokens.SOURCE_TREE_DIRS", CHECKOUT_DIRS)
    data = json.loads(CliRunner().invoke(cli, ["inspect", PETSTORE, "--json"]).output)
    assert data["exact"] is True and "npm" in data["counter"]


def test_inspect_in_code_mode_measures_code_modes_tools() -> None:
    report = inspect_target(PETSTORE, mode="code")
    assert report.mode == "code"
    assert [t.name for t in report.tools] == ["search_operations", "run_query", "run_code"]
    assert report.operations == 6 and report.instructions_tokens > 0
    result = CliRunner().invoke(cli, ["inspect", PETSTORE, "--mode", "code", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["mode"] == "code"


def test_the_printed_estimate_note_names_the_extra_to_install_in_full() -> None:
    import io

    from rich.console import Console

    from bridge.cli.costs import print_report

    report = inspect_target(PETSTORE)
    out = io.StringIO()
    print_report(report, console=Console(file=out, width=200))
    assert report.counter in out.getvalue()  # rich markup would have swallowed "[tokens]"
