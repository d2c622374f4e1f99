"""What the confirmation form shows: the filled request first, then what selects it and what is written.

End to end through the official client where the red team looked (a ``PUT /users/{id}`` behind
twelve harmless arguments, a credential across a cut, a target too long to show), and a property
test of :func:`bridge.confirm.form.message` over any arguments in any order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.confirm.form import MAX_MESSAGE, MAX_TARGET, MAX_VALUE, TargetNotShown, message
from bridge.contract.catalogue import ToolEntry
from tests.bridge.confirm.harness import (
    API_KEY,
    HARMLESS,
    OWNER,
    User,
    accounts_catalogue,
    accounts_client,
    accounts_upstream,
    sent,
    text,
)

pytestmark = pytest.mark.anyio


async def test_the_form_shows_the_filled_target_and_every_written_field_whatever_the_order(tmp_path: Path) -> None:
    arguments: dict[str, Any] = {name: "fine " * 40 for name in HARMLESS}
    arguments |= {"id": "owner-account", "role": "admin", "notify": True}
    fake, user = accounts_upstream(), User("decline")
    async with accounts_client(tmp_path, fake, level="writes", user=user) as client:
        result = await client.call_tool("updateUser", arguments)
    assert result.is_error and sent(fake) == []
    (form,) = user.forms
    lines = form.split("\n")
    assert lines[0] == "The assistant wants to send PUT /v2/users/owner-account?notify=true"
    assert '- id: "owner-account"' in lines and '- role: "admin"' in lines
    assert lines.index("Selects the target:") < lines.index("Written (the request body):")
    assert all(any(line.startswith(f"- {name}: ") for line in lines) for name in HARMLESS)
    assert "value(s) above are shown in part; the request sends them whole" in form
    assert len(form) <= MAX_MESSAGE


async def test_a_credential_across_a_cut_is_redacted_before_the_cut(tmp_path: Path) -> None:
    # The model cannot know the key; if it ever spells it, no part of it reaches the form.
    fake, user = accounts_upstream(), User("decline")
    async with accounts_client(tmp_path, fake, level="writes", user=user) as client:
        for pad in (MAX_VALUE - 12, 150, 120, 100):
            await client.call_tool("createOrder", {"item": "x" * pad + API_KEY})
    assert len(user.forms) == 4
    for form in user.forms:
        assert not any(API_KEY[i : i + 6] in form for i in range(len(API_KEY) - 5))
    assert sent(fake) == []


async def test_bound_values_and_credentials_never_show_in_the_target(tmp_path: Path) -> None:
    fake, user = accounts_upstream(), User("decline")
    async with accounts_client(tmp_path, fake, user=user) as client:
        await client.call_tool("removeMember", {"id": "m1"})
    (form,) = user.forms
    assert form.startswith("The assistant wants to send DELETE /v2/teams/{bound}/members/m1\n")
    assert OWNER not in form and API_KEY not in form and "api_key" not in form


async def test_a_target_too_long_to_show_is_refused_and_not_sent(tmp_path: Path) -> None:
    fake, user = accounts_upstream(), User("accept")
    async with accounts_client(tmp_path, fake, user=user) as client:
        result = await client.call_tool("cancelOrder", {"id": "o" * (MAX_TARGET + 1)})
    assert result.is_error and "is too long (1,019 characters, at most 1,000) to show the user in full" in text(result)
    assert user.forms == [] and sent(fake) == []


def _entry(name: str) -> ToolEntry:
    return next(e for e in accounts_catalogue(None).tools if e.name == name)


UPDATE = _entry("updateUser")
_VALUES = st.one_of(st.text(max_size=400), st.integers(), st.booleans(), st.lists(st.text(max_size=50), max_size=5))


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(st.sampled_from([*HARMLESS, "role", "id", "notify"]), _VALUES, min_size=1),
    st.randoms(use_true_random=False),
    st.text(min_size=1, max_size=MAX_TARGET + 50),
)
def test_any_arguments_in_any_order_show_the_target_first_and_account_for_every_argument(
    arguments: dict[str, Any], order: Any, target: str
) -> None:
    names = list(arguments)
    order.shuffle(names)
    shuffled = {name: arguments[name] for name in names}
    redact = lambda s: s.replace(API_KEY, "[REDACTED]")  # noqa: E731
    line = "".join(c if c.isprintable() else " " for c in target)
    if len(line) > MAX_TARGET or not line.strip():
        if len(line) > MAX_TARGET:
            with pytest.raises(TargetNotShown):
                message(UPDATE, shuffled, target, api="Accounts", redact=redact)
        return
    form = message(UPDATE, shuffled, target, api="Accounts", redact=redact)
    assert form.split("\n")[0] == f"The assistant wants to send {line}"
    assert len(form) <= MAX_MESSAGE
    for name in shuffled:
        shown = any(row.startswith(f"- {name}: ") for row in form.split("\n"))
        assert shown or name in form.split("NOTE: ")[-1], (name, form)
    cut = [row for row in form.split("\n") if row.startswith("- ") and " characters not shown]..." in row]
    assert bool(cut) == ("value(s) above are shown in part" in form)


async def test_a_long_value_shows_its_head_and_tail_and_says_how_much_is_hidden(tmp_path: Path) -> None:
    fake, user = accounts_upstream(), User("decline")
    async with accounts_client(tmp_path, fake, level="writes", user=user) as client:
        await client.call_tool("createOrder", {"item": "HEAD-" + "x" * 5000 + "-TAIL"})
    (form,) = user.forms
    (row,) = [line for line in form.split("\n") if line.startswith("- item: ")]
    assert row.startswith('- item: "HEAD-') and row.endswith('-TAIL"') and "characters not shown]" in row
    assert "shown in part; the request sends them whole" in form
