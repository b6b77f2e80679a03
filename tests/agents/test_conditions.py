"""LoopAgent(until=...): conditions on the state, the answer, the last event; composed; refused."""

from __future__ import annotations

from typing import Any

import pytest

from adk import Event, LlmAgent, LoopAgent, ObjectType, Runner, ToolContext
from adk.agents.conditions import Condition, last_event, mentioned, state_set
from adk.testing import ScriptedModel, call_tool
from tests._runtime import run


def approve(ctx: ToolContext) -> str:
    """Approve the draft."""
    ctx.state["approved"] = True
    return "approved"


def loop(
    until: Condition, writer: list[Any], critic: list[Any], **kw: Any
) -> tuple[LoopAgent, ScriptedModel]:
    critic_model = ScriptedModel(critic)
    agents = [
        LlmAgent("writer", model=ScriptedModel(writer)),
        LlmAgent("critic", model=critic_model, tools=[approve]),
    ]
    return LoopAgent("drafting", sub_agents=agents, until=until, max_iterations=5, **kw), critic_model


def said(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.author, e.content) for e in events if e.object == ObjectType.CHAT_COMPLETION and e.content]


async def test_a_state_key_set_ends_the_loop_after_the_agent_that_set_it() -> None:
    agent, critic = loop(
        state_set("approved"),
        ["Draft 1.", "Draft 2."],
        ["Too vague.", call_tool("approve", call_id="c1"), "Approved."],
    )

    events = await run(Runner(agent))

    assert said(events)[1:] == [
        ("writer", "Draft 1."),
        ("critic", "Too vague."),
        ("writer", "Draft 2."),
        ("critic", "Approved."),
    ]
    assert critic.remaining == 0


async def test_a_text_mentioned_ends_the_loop_whatever_its_case() -> None:
    agent, _ = loop(mentioned("LGTM"), ["Draft 1.", "Draft 2."], ["No.", "lgtm, ship it"])

    events = await run(Runner(agent))

    assert said(events)[-1] == ("critic", "lgtm, ship it")
    assert [a for a, _ in said(events)[1:]] == ["writer", "critic", "writer", "critic"]


async def test_case_sensitive_mentions_and_a_predicate_over_the_last_event() -> None:
    strict = mentioned("LGTM", case_sensitive=True)
    by_critic = last_event(lambda e: e.author == "critic" and e.content.endswith("!"))
    agent, _ = loop(strict | by_critic, ["D1", "D2", "D3"], ["lgtm", "fine!", "unused"])

    events = await run(Runner(agent))

    assert said(events)[-1] == ("critic", "fine!")
    assert repr(strict | by_critic) == "(mentioned('LGTM') | last_event(<lambda>))"


async def test_conditions_compose_with_and_and_not() -> None:
    both = state_set("approved") & mentioned("approved") & ~mentioned("but")
    agent, _ = loop(
        both,
        ["D1", "D2"],
        [call_tool("approve", call_id="c1"), "Approved, but fix the title.", "Approved."],
    )

    events = await run(Runner(agent))

    assert said(events)[1:] == [
        ("writer", "D1"),
        ("critic", "Approved, but fix the title."),
        ("writer", "D2"),
        ("critic", "Approved."),
    ]
    assert repr(both) == "((state_set('approved') & mentioned('approved')) & ~mentioned('but'))"


async def test_state_set_with_a_value_and_max_iterations_still_bounds() -> None:
    agent, critic = loop(state_set("approved", False), ["D"] * 5, [call_tool("approve")] + ["again"] * 5)
    agent.max_iterations = 2

    events = await run(Runner(agent))

    assert [a for a, _ in said(events)[1:]] == ["writer", "critic", "writer", "critic"]
    assert critic.remaining == 3


def test_until_that_is_not_a_condition_is_refused_naming_the_loop() -> None:
    with pytest.raises(TypeError, match=r"loop agent 'drafting': until=<function .*<lambda> at .*> is not a"):
        LoopAgent("drafting", sub_agents=[], until=lambda: True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="until='approved' is not a Condition; use state_set, mentioned"):
        LoopAgent("drafting", sub_agents=[], until="approved")  # type: ignore[arg-type]
