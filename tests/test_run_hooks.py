"""The run-level hooks (on_user_message, before_run, on_event, after_run) and on_agent_error."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk.agents import LlmAgent, SequentialAgent
from adk.callbacks.decisions import FellBack, Halted, Replaced
from adk.callbacks.results import Cont, Fallback, Halt, Raise, Retry
from adk.context import AgentContext, RunContext, ToolContext
from adk.errors import CallbackRegistrationError
from adk.events import Choice, Event, Message, ObjectType
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
    redacted = next(e for e in kept if e.object == ObjectType.TOOL_RESPONSE)
    assert redacted.decisions == (Replaced("callback:Redact.on_event", "run:root"),)
    await run(runner, "again")  # the next run's history is read from the store
    assert "s3cret" not in model.requests[2].model_dump_json()
    assert [m.content for m in model.requests[2].messages][-3:] == [
        '{"key":"[redacted]"}',
        "the key is [redacted]",
        "again",
    ]


class Scrub:
    """Replaces a card number in the user's message; answers by itself when asked for a password."""

    def on_user_message(self, message: Message, ctx: RunContext) -> Message | Halt[str]:
        if "password" in message.content:
            return Halt("I can't help with passwords.")
        ctx.state["scrubbed"] = True
        return message.model_copy(update={"content": message.content.replace("4111", "****")})


async def test_on_user_message_replaces_the_message_before_it_is_stored_and_sent(
    store: SessionService,
) -> None:
    model = ScriptedModel([reply])
    runner = Runner(LlmAgent("root", model=model), session_service=store, callbacks=[Scrub])
    events = await run(runner, "card 4111")
    assert [summary(e) for e in events] == [
        ("model", "user", "card ****"),
        ("model", "root", "re: card ****"),
        ("done", "root"),
    ]
    assert events[0].decisions == (Replaced("callback:Scrub.on_user_message", "run:root"),)
    assert events[0].actions.state_delta == {"scrubbed": True}  # its state change rides on the user event
    kept = await stored(store)
    assert [e.message.content for e in kept if e.message] == ["card ****", "re: card ****"]
    assert kept[0].decisions == events[0].decisions


async def test_on_user_message_halts_with_an_answer_and_nothing_runs() -> None:
    trace: list[tuple[Any, ...]] = []
    model = ScriptedModel([])
    agent = LlmAgent("root", model=model, callbacks=[Recorder("agent", trace)])
    runner = Runner(agent, callbacks=[Scrub, RunRecorder("runner", trace)])
    events = await run(runner, "my password?")
    assert [summary(e) for e in events] == [
        ("model", "user", "my password?"),  # the user's message is stored as it was given
        ("model", "root", "I can't help with passwords."),
        ("done", "root"),
    ]
    assert events[1].decisions == (Halted("callback:Scrub.on_user_message", "run:root"),)
    assert [t[1] for t in trace] == ["on_event", "on_event", "after_run", "on_event"]  # no before_run
    model.assert_done()


class Closed:
    def before_run(self, ctx: RunContext) -> Cont[RunContext] | Halt[str]:
        if ctx.user_id == "banned":
            return Halt(f"Sorry, {ctx.user_id}.")
        return Cont(ctx)


async def test_before_run_halts_the_run_before_any_agent() -> None:
    trace: list[tuple[Any, ...]] = []
    model = ScriptedModel(["hello"])
    runner = Runner(LlmAgent("root", model=model, callbacks=[Recorder("agent", trace)]), callbacks=[Closed])
    events = [e async for e in runner.run("banned", "s", "hi")]
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "Sorry, banned."),
        ("done", "root"),
    ]
    assert events[1].decisions == (Halted("callback:Closed.before_run", "run:root"),)
    assert trace == []
    assert model.remaining == 1
    assert [summary(e) for e in await run(runner)] == [
        ("model", "user", "hi"),
        ("model", "root", "hello"),
        ("done", "root"),
    ]


class Watch:
    """Sees how each run ended; sets state, which goes out before the completion."""

    def __init__(self) -> None:
        self.ends: list[tuple[str, Exception | None]] = []

    def after_run(self, ctx: RunContext) -> None:
        self.ends.append((ctx.session_id, ctx.error))
        ctx.state["runs"] = ctx.state.get("runs", 0) + 1


async def test_after_run_sees_the_end_ok_or_with_the_error() -> None:
    boom = ValueError("boom")
    watch = Watch()
    runner = Runner(LlmAgent("root", model=ScriptedModel(["fine", boom])), callbacks=[watch])
    ok = await run(runner, session="a")
    assert [summary(e) for e in ok] == [
        ("model", "user", "hi"),
        ("model", "root", "fine"),
        ("state", "root", {"runs": 1}),
        ("done", "root"),
    ]
    failed = await run(runner, session="b")
    assert [summary(e) for e in failed] == [
        ("model", "user", "hi"),
        ("error", "root", "ValueError", "model:scripted"),
    ]
    assert failed[-1].actions.state_delta == {"runs": 1}  # after_run ran before the error event
    assert watch.ends == [("a", None), ("b", boom)]


class Apologise:
    """Stands in for a failed agent with an apology; passes other agents' errors on, renamed."""

    def __init__(self, only: str) -> None:
        self.only = only

    def on_agent_error(self, error: Exception, ctx: AgentContext) -> Fallback[str] | Raise:
        if ctx.agent.name == self.only:
            return Fallback(f"{ctx.agent.name} is unavailable")
        return Raise(RuntimeError(f"{ctx.agent.name}: {error}"))


def pipeline(trace: list[tuple[Any, ...]], first: list[Any]) -> SequentialAgent:
    return SequentialAgent(
        "flow",
        sub_agents=[
            LlmAgent("lookup", model=ScriptedModel(first)),
            LlmAgent("answer", model=ScriptedModel([reply])),
        ],
        callbacks=[Recorder("agent", trace)],
    )


async def test_on_agent_error_falls_back_and_the_workflow_goes_on() -> None:
    trace: list[tuple[Any, ...]] = []
    runner = Runner(pipeline(trace, [ValueError("down")]), callbacks=[RunRecorder("runner", trace)])
    events = await run(runner, callbacks=[Apologise("lookup")])
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "lookup", "lookup is unavailable"),
        ("model", "answer", "re: lookup is unavailable"),  # the next agent sees the fallback
        ("done", "flow"),
    ]
    assert events[1].decisions == (
        FellBack("callback:Apologise.on_agent_error", "agent:lookup", None, "ValueError", "down"),
    )
    agent_hooks = [t for t in trace if t[1] in ("before_agent", "after_agent", "on_agent_error")]
    assert agent_hooks == [
        ("runner", "before_agent", "flow"),
        ("agent", "before_agent", "flow"),
        ("runner", "before_agent", "lookup"),
        ("runner", "on_agent_error", "lookup"),  # the runner's first: it passes the error on
        ("runner", "after_agent", "lookup"),  # after_agent runs on the fallback output
        ("runner", "before_agent", "answer"),
        ("runner", "after_agent", "answer"),
        ("runner", "after_agent", "flow"),
        ("agent", "after_agent", "flow"),
    ]


async def test_on_agent_error_passes_the_error_on_through_every_enclosing_agent() -> None:
    trace: list[tuple[Any, ...]] = []
    runner = Runner(pipeline(trace, [ValueError("down")]), callbacks=[RunRecorder("runner", trace)])
    events = await run(runner, callbacks=[Apologise("nobody")])
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("error", "flow", "RuntimeError", "agent:flow"),
    ]
    assert events[-1].error is not None
    assert events[-1].error.message == "flow: lookup: down"  # each level replaced the error
    assert [t[1:] for t in trace if t[1] in ("on_agent_error", "after_agent", "after_run")] == [
        ("on_agent_error", "lookup"),
        ("on_agent_error", "flow"),
        ("after_run", "RuntimeError"),
    ]


def bad(hook: str, answer: Any) -> Any:
    """A callback named Bad whose `hook` answers `answer` (called with any arguments)."""
    one = hook in ("before_run", "after_run")
    fn = (lambda self, ctx: answer) if one else (lambda self, value, ctx: answer)
    return type("Bad", (), {hook: fn})()


@pytest.mark.parametrize(
    ("hook", "answer", "problem"),
    [
        (
            "on_user_message",
            "text",
            "returned 'text'; on_user_message must return a Message (or a Halt), not str",
        ),
        (
            "on_user_message",
            Halt(42),
            "the value of a Halt from on_user_message must be a Message or str, not int",
        ),
        ("before_run", None, "returned None; before_run may return only Cont or Halt"),
        ("before_run", Halt(42), "the value of a Halt from before_run must be a Message or str, not int"),
        ("after_run", "text", "returned 'text'; after_run must return None, not str"),
    ],
)
async def test_a_bad_answer_from_a_run_hook_ends_the_run_with_an_error_naming_it(
    hook: str, answer: Any, problem: str
) -> None:
    model = ScriptedModel(["fine"])
    runner = Runner(LlmAgent("root", model=model), callbacks=[bad(hook, answer)])
    events = await run(runner)
    error = events[-1].error
    assert error is not None
    assert (error.type, error.where) == ("CallbackError", f"callback:Bad.{hook}")
    assert error.message.startswith(f"callback Bad failed in {hook}: ") and error.message.endswith(problem)
    # A failing on_user_message stores nothing (it may be the redactor); before_run follows the user event.
    assert events[0].author == ("root" if hook == "on_user_message" else "user")
    assert not any(e.object == ObjectType.RUNNER_COMPLETION for e in events)


async def test_an_on_event_that_fails_leaves_only_its_own_error_event(store: SessionService) -> None:
    runner = Runner(
        LlmAgent("root", model=ScriptedModel([])), session_service=store, callbacks=[bad("on_event", None)]
    )
    events = await run(runner)
    assert [summary(e) for e in events] == [("error", "root", "CallbackError", "callback:Bad.on_event")]
    assert events[0].error is not None
    assert (
        events[0].error.message
        == "callback Bad failed in on_event: returned None; on_event must return an Event, not None"
    )
    assert [e.id for e in await stored(store)] == [events[0].id]  # the unchecked user event was not stored


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (
            Retry("ctx"),
            "returned Retry(ctx='ctx', delay=None); on_agent_error may return only Fallback or Raise",
        ),
        (Fallback(42), "the value of a Fallback from on_agent_error must be a Message or str, not int"),
    ],
)
async def test_a_bad_answer_from_on_agent_error_names_it(answer: Any, problem: str) -> None:
    runner = Runner(
        LlmAgent("root", model=ScriptedModel([ValueError("down")])), callbacks=[bad("on_agent_error", answer)]
    )
    events = await run(runner)
    error = events[-1].error
    assert error is not None
    assert (error.type, error.where) == ("CallbackError", "callback:Bad.on_agent_error")
    assert error.message.endswith(problem)


def test_an_agent_callback_with_a_run_level_hook_is_refused() -> None:
    with pytest.raises(
        CallbackRegistrationError,
        match=r"^callback Redact of agent 'root' implements on_event, a run-level hook: register it",
    ):
        LlmAgent("root", model=ScriptedModel([]), callbacks=[Redact()])


@pytest.mark.parametrize(
    ("hook", "message"),
    [
        ("after_run", r"hook after_run\(self, ctx, extra\) cannot be called as after_run\(ctx\)"),
        ("on_event", r"hook on_event\(self, event\) cannot be called as on_event\(value, ctx\)"),
    ],
)
def test_a_run_hook_that_cannot_take_its_arguments_is_refused_at_registration(
    hook: str, message: str
) -> None:
    fn = (lambda self, ctx, extra: None) if hook == "after_run" else (lambda self, event: event)
    callback: Any = type("Wrong", (), {hook: fn})()
    with pytest.raises(CallbackRegistrationError, match=message):
        Runner(LlmAgent("root", model=ScriptedModel([])), callbacks=[callback])


async def test_a_resumed_run_passes_before_run_and_on_event_but_not_on_user_message() -> None:
    trace: list[tuple[Any, ...]] = []
    store = InMemorySessionService()
    model = ScriptedModel(["late answer"])
    runner = Runner(LlmAgent("root", model=model), session_service=store, callbacks=[RunRecorder("r", trace)])
    session = await store.get_or_create("u", "s")
    await store.append_event(
        session, Event.new("inv1", "user", choices=[Choice(message=Message.user("hi"))], done=True)
    )
    events = [e async for e in runner.resume("u", "s")]
    assert [summary(e) for e in events] == [("model", "root", "late answer"), ("done", "root")]
    run_level = ("on_user_message", "before_run", "on_event", "after_run")
    assert [t[1] for t in trace if t[1] in run_level] == ["before_run", "on_event", "after_run", "on_event"]


class RefuseTheEnd:
    def on_event(self, event: Event, ctx: RunContext) -> Event:
        if event.object == ObjectType.RUNNER_COMPLETION:
            raise ValueError("not yet")
        return event


async def test_an_on_event_failing_on_the_completion_ends_the_run_with_its_error(
    store: SessionService,
) -> None:
    runner = Runner(
        LlmAgent("root", model=ScriptedModel(["fine"])), session_service=store, callbacks=[RefuseTheEnd]
    )
    events = await run(runner)
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "fine"),
        ("error", "root", "CallbackError", "callback:RefuseTheEnd.on_event"),
    ]
    assert [e.id for e in await stored(store)] == [e.id for e in events]
    assert [summary(e)[0] for e in await run(runner, "again")][-1] == "error"  # the session is free again


class Ends:
    """Records how each run ended, as after_run sees it: the error's type, message and cause."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str] | None] = []

    def after_run(self, ctx: RunContext) -> None:
        error = ctx.error
        cause = None if error is None else type(error.__cause__).__name__
        self.seen.append(None if error is None else (type(error).__name__, str(error), cause))


async def test_after_run_sees_a_consumer_that_stops_iterating() -> None:
    trace: list[tuple[Any, ...]] = []
    ends = Ends()
    agent = LlmAgent("root", model=ScriptedModel([calls(call("echo", "c1")), "done"]), tools=[Tool("echo")])
    runner = Runner(agent, callbacks=[RunRecorder("runner", trace), ends])
    events = runner.run("u", "s", "hi")
    async for event in events:
        if event.tool_calls:
            break
    await events.aclose()
    assert trace == [
        ("runner", "on_user_message", "hi"),
        ("runner", "on_event", "user", "chat.completion"),
        ("runner", "before_run", "root"),
        ("runner", "before_agent", "root"),
        ("runner", "before_model", "root"),
        ("runner", "after_model", "root"),
        ("runner", "on_event", "root", "chat.completion"),
        # once, when the run is closed; no tool runs, no completion follows
        ("runner", "after_run", "RunStopped"),
    ]
    stopped = ("RunStopped", "the run was stopped: its consumer stopped iterating", "GeneratorExit")
    assert ends.seen == [stopped]
    trace.clear()
    assert [summary(e)[0] for e in await run(runner, "again")][-1] == "done"  # the session is free
    assert [t[1] for t in trace].count("after_run") == 1
    assert ends.seen[-1] is None


async def test_after_run_sees_a_cancelled_run_and_runs_once_when_stopped_at_the_end() -> None:
    started = asyncio.Event()

    async def wait(args: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    ends = Ends()
    model = ScriptedModel([calls(call("wait", "c1")), "fine"])
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("wait", wait)]), callbacks=[ends])
    task = asyncio.create_task(run(runner))
    async with asyncio.timeout(5):
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert ends.seen == [("RunStopped", "the run was stopped: its task was cancelled", "CancelledError")]
    ends.seen.clear()
    events = runner.run("u", "s2", "hi")
    async for event in events:  # stopped at the completion, after after_run ran
        if event.object == ObjectType.RUNNER_COMPLETION:
            break
    await events.aclose()
    assert ends.seen == [None]


class BrokenEnd:
    def after_run(self, ctx: RunContext) -> None:
        raise ValueError("cannot see the end")


async def test_an_after_run_failing_on_a_stopped_run_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    ends = Ends()
    runner = Runner(LlmAgent("root", model=ScriptedModel(["fine"])), callbacks=[BrokenEnd, ends])
    events = runner.run("u", "s", "hi")
    await anext(events)
    with caplog.at_level(logging.WARNING, logger="adk.runner"):
        await events.aclose()
    assert [r.getMessage() for r in caplog.records] == ["after_run failed after the run was stopped"]
    assert ends.seen == []  # the chain stopped at the failing callback


async def test_after_run_sees_a_run_dropped_with_a_plain_break_when_asyncio_closes_it() -> None:
    seen = asyncio.Event()
    ends = Ends()

    class Signal:
        def after_run(self, ctx: RunContext) -> None:
            seen.set()

    runner = Runner(LlmAgent("root", model=ScriptedModel(["fine"])), callbacks=[ends, Signal()])
    async for _ in runner.run("u", "s", "hi"):
        break  # the iterator is dropped, not closed: asyncio closes it on a later loop turn
    async with asyncio.timeout(5):
        await seen.wait()
    assert ends.seen == [
        ("RunStopped", "the run was stopped: its consumer stopped iterating", "GeneratorExit")
    ]
