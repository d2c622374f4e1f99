"""``generate --help`` and ``serve --help`` list every option once, under a topic; the options both
commands take are one definition."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from bridge.cli import cli
from bridge.cli.generate import generate
from bridge.cli.help_topics import TopicCommand
from bridge.cli.serve import serve


def _visible(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option) and not p.hidden]


@pytest.mark.parametrize("command", [generate, serve], ids=["generate", "serve"])
def test_every_visible_option_is_under_exactly_one_topic(command: click.Command) -> None:
    assert isinstance(command, TopicCommand)
    named = [name for _, names in command.topics for name in names]
    assert len(named) == len(set(named))  # no option under two topics
    assert {p.name for p in _visible(command)} <= set(named)  # none left out
    assert set(named) <= {p.name for p in command.params}  # none stale (hidden ones may be named)


def _lists(line: str, flag: str) -> bool:
    """Whether ``line`` is the help row of ``flag`` (``-o, --output PATH``, ``--a, --b TEXT``)."""
    return re.match(rf"(-\w, )?{re.escape(flag)}(,| |$)", line.lstrip()) is not None


@pytest.mark.parametrize("name", ["generate", "serve"])
def test_help_prints_each_option_once_under_its_topic_heading(name: str) -> None:
    text = CliRunner().invoke(cli, [name, "--help"], terminal_width=200).output
    command = generate if name == "generate" else serve
    assert isinstance(command, TopicCommand)
    lines = text.splitlines()
    headings = [f"{title}:" for title, _ in command.topics]
    assert [line for line in lines if line in headings] == headings  # each topic once, in order
    for title, names in command.topics:
        section = lines[lines.index(f"{title}:") + 1 :]
        section = section[: next((i for i, line in enumerate(section) if not line.strip()), len(section))]
        for option in (p for p in _visible(command) if p.name in names):
            long = next(o for o in option.opts if o.startswith("--"))
            assert any(_lists(line, long) for line in section), long
            assert sum(_lists(line, long) for line in lines) == 1, long


def test_a_new_option_without_a_topic_is_still_listed() -> None:
    @click.command(cls=TopicCommand, topics=[("First", ["a"])])
    @click.option("--a", help="A.")
    @click.option("--b", help="B.")
    def command(a: str | None, b: str | None) -> None:
        raise AssertionError("not run")

    text = CliRunner().invoke(command, ["--help"]).output
    assert text.index("First:") < text.index("--a") < text.index("Other options:") < text.index("--b")


@pytest.mark.parametrize("flag", ["--overlay", "--workflows", "--mode"])
def test_options_both_commands_take_share_their_definition(flag: str) -> None:
    ours, theirs = (next(p for p in c.params if flag in p.opts) for c in (generate, serve))
    assert isinstance(ours, click.Option) and isinstance(theirs, click.Option)
    assert (ours.name, ours.multiple, repr(ours.type)) == (theirs.name, theirs.multiple, repr(theirs.type))
    if flag != "--mode":  # the mode's default differs: the package's for generate, an override for serve
        assert ours.help == theirs.help
