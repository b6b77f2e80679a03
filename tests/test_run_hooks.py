"""Run-level hooks (on_user_message, before_run, on_event, after_run) and on_agent_error, through the Runner."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk.agents import LlmAgent, SequentialAgent
from adk.callbacks.decisions import FellBack, Halted, Replaced
from adk.callbacks.results import Cont, Fallback, Halt, Raise, Retry
from adk.context import AgentContext, RunContext
from adk.errors import CallbackRegistrationError
from adk.events import Event, Message, ObjectType
from adk.runner import Runner
from adk.sessions import InMemorySessionService, SessionService, SqliteSessionService
from adk.testing import ScriptedModel, Stream
from tests._runtime import Recorder, Tool, call, calls, reply, run, summary


class RunRecorder(Recorder):
    """A Recorder that also records the run-level hooks and on_agent_error, passing everything on."""

    def on_user_message(self, message: Message, ctx: RunContext) -> Message:
        self.trace.append((self.label, "on_user_message", message.content))
        return message

    def before_run(self, ctx: RunContext) -> Cont[RunContext]:
        self.trace.append((self.label, "before_run", ctx.agent.name))
        return Cont(ctx)

    def on_event(self, event: Event, ctx: RunContext) -> Event:
        self.trace.append((self.label, "on_event", event.author, str(event.object)))
        return event

    def after_run(self, ctx: RunContext) -> None:
        self.trace.append((self.label, "after_run", type(ctx.error).__name__ if ctx.error else None))

    def on_agent_error(self, error: Exception, ctx: AgentContext) -> Raise:
        self.trace.append((self.label, "on_agent_error", ctx.agent.name))
        return Raise(error)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    sqlite = SqliteSessionService(tmp_path / "sessions.sqlite3")
    yield sqlite
    sqlite.close()


async def stored(store: SessionService) -> list[Event]:
    session = await store.get("u", "s")
    assert session is not None
    return session.events


async def test_every_hook_in_order_with_the_run_level_ones_around_them() -> None:
    trace: list[tuple[Any, ...]] = []
    model = ScriptedModel([calls(call("echo", "c1")), "done"])
    agent = LlmAgent("root", model=model, tools=[Tool("echo")], callbacks=[Recorder("agent", trace)])
    runner = Runner(agent, callbacks=[RunRecorder("runner", trace)])
    events = await run(runner, callbacks=[RunRecorder("run", trace)])
    both = ("runner", "run")
    order = ("runner", "agent", "run")

    def on_event(author: str, kind: str = "chat.completion") -> list[tuple[str, ...]]:
        return [(who, "on_event", author, kind) for who in both]

    assert trace == [
        *[(who, "on_user_message", "hi") for who in both],
        *on_event("user"),
        *[(who, "before_run", "root") for who in both],
        *[(who, "before_agent", "root") for who in order],
        *[(who, "before_model", "root") for who in order],
        *[(who, "after_model", "root") for who in order],
        *on_event("root"),
        *[(who, "before_tool", "echo") for who in order],
        *[(who, "after_tool", "echo") for who in order],
        *on_event("root", "tool.response"),
        *[(who, "before_model", "root") for who in order],
        *[(who, "after_model", "root") for who in order],
        *on_event("root"),
        *[(who, "after_agent", "root") for who in order],
        *[(who, "after_run", None) for who in both],
        *on_event("root", "runner.completion"),
    ]
    assert [e.decisions for e in events] == [()] * len(events)  # nobody replaced anything


class Redact:
    """Replaces every secret in tool results with a mark, streamed text included."""

    def on_event(self, event: Event, ctx: RunContext) -> Event:
        text = event.model_dump_json()
        if "s3cret" not in text:
            return event
        return Event.model_validate_json(text.replace("s3cret", "[redacted]"))


async def test_on_event_redacts_a_tool_result_before_it_is_stored(store: SessionService) -> None:
    model = ScriptedModel([calls(call("vault", "c1")), Stream(["the key is ", "s3cret"]), reply])
    vault = Tool("vault", lambda args, ctx: {"key": "s3cret"})
    runner = Runner(LlmAgent("root", model=model, tools=[vault]), session_service=store, callbacks=[Redact])
    events = await run(runner, stream=True)
    assert vault.calls == [{}]  # the tool ran and answered the secret
    assert all("s3cret" not in e.model_dump_json() for e in events)  # partial chunks too
    assert [summary(e) for e in events if e.object == ObjectType.TOOL_RESPONSE] == [
        ("tool", "root", "vault", "c1", '{"key":"[redacted]"}')
    ]
    # What leaves the run is redacted; the run's own conversation is not (after_tool changes that).
    assert model.requests[1].messages[-1].content == '{"key":"s3cret"}'
    kept = await stored(store)
    assert [e.id for e in kept] == [e.id for e in events if not e.is_partial]
    assert all("s3cret" not in e.model_dump_json() for e in kept)
    redacted = [e for e in kept if e.object == ObjectType.TOOL_RESPONSE][0]
    assert redacted.decisions == (Replaced("callback:Redact.on_event", "run:root"),)
    await run(runner, "again")  # the next run's history is read from the store
    assert "s3cret" not in model.requests[2].model_dump_json()
    assert [m.content for m in model.requests[2].messages][-3:] == [
        '{"key":"[redacted]"}',
        "the key is [redacted]",
        "again",
    ]
