"""`LlmRequest.estimated_tokens`: the model's own count where a past response reported one, the
character rule for the rest."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from adk.agents import LlmAgent
from adk.callbacks.results import Cont
from adk.context import ModelContext
from adk.events import Message, ToolDeclaration
from adk.models import base
from adk.models.base import CHARS_PER_TOKEN, MESSAGE_TOKENS, LlmRequest, estimate_tokens
from adk.runner import Runner
from adk.testing import ScriptedModel
from adk.testing import call_tool as tool_call
from tests.context.support import answer, turn


def test_the_character_rule_counts_text_calls_instruction_and_tools() -> None:
    tool = ToolDeclaration(name="f", description="abc", parameters={})  # 1 + 3 + len("{}") = 6
    request = LlmRequest(
        instruction="x" * 10,
        messages=[Message.user("y" * 7), Message.assistant("z" * 3)],
        tools=[tool],
    )

    assert CHARS_PER_TOKEN == 4 and MESSAGE_TOKENS == 4
    assert request.estimated_tokens == -(-(10 + 7 + 3 + 6) // 4) + 4 * 3 == 19
    assert estimate_tokens([]) == 0


def test_the_models_reported_count_stands_for_what_it_covers() -> None:
    first, reply = Message.user("a" * 400), Message.assistant("b" * 400)
    request = LlmRequest(messages=[first, reply, Message.user("c" * 8)], usage_anchor=(31, reply))

    assert request.estimated_tokens == 31 + 2 + 4
    gone = LlmRequest(messages=[Message.user("c" * 8)], usage_anchor=(31, reply))
    assert gone.estimated_tokens == 2 + 4  # its message is not in the request: the rule for all


async def test_a_hook_reads_the_models_own_count_of_the_last_turn_plus_the_new_message() -> None:
    seen: list[int] = []

    class Look:
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            seen.append(ctx.request.estimated_tokens)
            return Cont(ctx)

    model = ScriptedModel([answer("ok", prompt=120, completion=3), answer("fine")])
    runner = Runner(LlmAgent("a", model=model, instruction="Be brief.", callbacks=[Look()]))
    await turn(runner, "x" * 40)
    await turn(runner, "y" * 40)

    assert seen == [-(-(9 + 40) // 4) + 4 * 2, 123 + 10 + 4]


async def test_an_agents_tool_schemas_are_read_once_not_on_every_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each call's estimate (a Budget's reservation, a Compact's threshold) counts the tools'
    # declarations; an agent's are counted when it is made, a hook's own list afresh.
    read: list[object] = []
    dumps = json.dumps

    def counted(value: object) -> str:
        read.append(value)
        return dumps(value)

    def lookup(city: str) -> str:
        """The weather in a city."""
        return city

    seen: list[int] = []

    class Watch:
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            seen.append(ctx.request.estimated_tokens)
            return Cont(ctx)

    monkeypatch.setattr(base, "json", SimpleNamespace(dumps=counted))
    agent = LlmAgent("a", model=ScriptedModel([tool_call("lookup", city="Paris"), "sunny"]), tools=[lookup])
    schema = agent.tools["lookup"].declaration.parameters
    assert read == [schema]  # counted as the agent was made
    events = [e async for e in Runner(agent, callbacks=[Watch()]).run("u", "s", "weather?")]
    assert events[-1].object == "runner.completion"
    assert read == [schema]  # and never again, on either call
    plain = LlmRequest(messages=[Message.user("weather?")], tools=list(agent._declarations))
    assert seen[0] == plain.estimated_tokens  # the same count as a plain list's
    assert read == [schema, schema]  # which is read
