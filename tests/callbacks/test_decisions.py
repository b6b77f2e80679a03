"""Decisions are data on the events they shaped: typed, stored, and round-tripped through JSON."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import tenacity
from pydantic import ValidationError

from adk import (
    AgentContext,
    Cont,
    Event,
    Halt,
    LlmAgent,
    LlmResponse,
    Message,
    ModelContext,
    ObjectType,
    RetryPolicy,
    Runner,
    ToolContext,
)
from adk.callbacks.decisions import Decision, FellBack, Halted, Replaced, Retried
from adk.errors import AuthenticationError, ServerError
from adk.events import ToolCall
from adk.recovery import RetryThenFallback, Testing
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, echo

pytestmark = pytest.mark.usefixtures("testing")

EVERY_KIND: tuple[Decision, ...] = (
    Halted("callback:Guard.before_model", "model:a"),
    Replaced("callback:Shout.after_model", "model:b"),
    Retried("callback:RetryPolicy.on_model_error", "model:a", 2, 0.5, "ServerError", "503"),
    FellBack("callback:FallbackModels.on_model_error", "model:a", "model:b", "AuthenticationError", "no"),
    FellBack("callback:FixedFallback.on_model_error", "model:a", None, "BadRequestError"),
)


def test_every_kind_round_trips_through_event_json() -> None:
    event = Event.new("inv", "agent", decisions=EVERY_KIND)
    text = event.model_dump_json()
    assert '"kind":"fell_back"' in text
    assert Event.model_validate_json(text) == event
    assert Event.model_validate_json(text).decisions == EVERY_KIND


def test_an_event_stored_before_decisions_existed_loads_with_none() -> None:
    old = Event.new("inv", "agent").model_dump(mode="json")
    del old["decisions"]
    assert Event.model_validate(old).decisions == ()


def test_an_unknown_kind_of_decision_is_refused() -> None:
    with pytest.raises(ValidationError, match="decisions"):
        Event.model_validate({"decisions": [{"kind": "vetoed", "by": "x", "target": "model:a"}]})


def test_decisions_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        EVERY_KIND[0].by = "someone else"  # type: ignore[misc]


# One run that every kind of decision shapes, stored in SQLite and read back by a new instance.


class Guard:
    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
        if "password" in ctx.request.messages[-1].content:
            return Halt(LlmResponse.text("I can't help with passwords."))
        return Cont(ctx)


class Closed:
    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext] | Halt[str]:
        if ctx.invocation.message.content == "closed?":
            return Halt("We are closed.")
        return Cont(ctx)


class Refuse:
    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
        return Halt("refused") if ctx.tool.name == "delete" else Cont(ctx)


class Redact:
    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        return "[redacted]" if ctx.tool.name == "lookup" else result


class Shout:
    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        return LlmResponse.text(response.content.upper()) if response.content == "done" else response


class Sign:
    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        return None if output is None else Message.assistant(output.content + " (bot)")


async def test_each_event_a_decision_shaped_carries_it_through_sqlite(
    tmp_path: Path, testing: Testing
) -> None:
    calls = LlmResponse.calls(ToolCall.of("delete", id="c1"), ToolCall.of("lookup", id="c2"))
    a = ScriptedModel([ServerError("503"), calls, AuthenticationError("revoked")], name="a")
    b = ScriptedModel(["done"], name="b")
    agent = LlmAgent(
        "root",
        model=a,
        tools=[Tool("delete", echo), Tool("lookup", echo)],
        callbacks=[
            Closed(),
            Guard(),
            Refuse(),
            Redact(),
            Shout(),
            Sign(),
            RetryThenFallback([b], RetryPolicy(wait=tenacity.wait_fixed(0.5))),
        ],
    )
    path = tmp_path / "sessions.sqlite3"
    store = SqliteSessionService(path)
    runner = Runner(agent, session_service=store)
    yielded: list[Event] = []
    for message in ["weather?", "closed?", "the password?"]:
        yielded += [e async for e in runner.run("u", "s", message)]
    store.close()

    reopened = SqliteSessionService(path)
    session = await reopened.get("u", "s")
    reopened.close()
    assert session is not None
    by = "callback:RetryThenFallback.on_model_error"
    retried = Retried(by, "model:a", 2, 0.5, "ServerError", "503")
    fell_back = FellBack(by, "model:a", "model:b", "AuthenticationError", "revoked")
    signed = Replaced("callback:Sign.after_agent", "agent:root")
    stored = [e for e in session.events if e.object != ObjectType.RUNNER_COMPLETION]
    assert [(e.object, e.content, e.decisions) for e in stored] == [
        ("chat.completion", "weather?", ()),
        ("chat.completion", "", (retried,)),
        ("tool.response", "refused", (Halted("callback:Refuse.before_tool", "tool:delete"),)),
        ("tool.response", "[redacted]", (Replaced("callback:Redact.after_tool", "tool:lookup"),)),
        ("chat.completion", "DONE", (fell_back, Replaced("callback:Shout.after_model", "model:b"))),
        ("chat.completion", "DONE (bot)", (signed,)),
        ("chat.completion", "closed?", ()),
        ("chat.completion", "We are closed.", (Halted("callback:Closed.before_agent", "agent:root"),)),
        ("chat.completion", "the password?", ()),
        (
            "chat.completion",
            "I can't help with passwords.",
            (Halted("callback:Guard.before_model", "model:a"),),
        ),
        ("chat.completion", "I can't help with passwords. (bot)", (signed,)),
    ]
    assert session.events == [e for e in yielded if not e.is_partial]
    # each recovery was also told at once, by a partial event that is never stored
    assert [(e.object, e.decisions) for e in yielded if e.is_partial] == [
        (ObjectType.ATTEMPT_FAILED, (retried,)),
        (ObjectType.ATTEMPT_FAILED, (fell_back,)),
    ]
    assert testing.waits == [0.5, 0.0]


async def test_an_error_event_carries_the_retries_before_it(testing: Testing) -> None:
    model = ScriptedModel([ServerError("503")] * 2, name="a")
    policy = RetryPolicy(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_fixed(1))
    events = [e async for e in Runner(LlmAgent("root", model=model), retry_policy=policy).run("u", "s", "hi")]
    error = events[-1]
    assert (error.object, error.error and error.error.type) == ("error", "RetriesExhausted")
    assert error.decisions == (
        Retried("callback:RetryPolicy.on_model_error", "model:a", 2, 1.0, "ServerError", "503"),
    )
    assert error.fresh_decisions() == ()  # told already, by the attempt.failed event


async def test_only_the_events_a_decision_shaped_carry_one() -> None:
    model = ScriptedModel([LlmResponse.calls(ToolCall.of("lookup", id="c1")), "ok"])
    agent = LlmAgent("root", model=model, tools=[Tool("lookup", echo)], callbacks=[Sign()])
    events = [e async for e in Runner(agent).run("u", "s", "hi")]
    assert [e.decisions for e in events[:-2]] == [()] * 4
    assert events[-2].decisions == (Replaced("callback:Sign.after_agent", "agent:root"),)


async def test_an_after_hook_that_returns_its_input_replaced_nothing() -> None:
    class Same:
        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            return response

        def after_tool(self, result: Any, ctx: ToolContext) -> Any:
            return result

    model = ScriptedModel([LlmResponse.calls(ToolCall.of("lookup", id="c1")), "ok"])
    agent = LlmAgent("root", model=model, tools=[Tool("lookup", echo)], callbacks=[Same()])
    events = [e async for e in Runner(agent).run("u", "s", "hi")]
    assert all(e.decisions == () for e in events)
