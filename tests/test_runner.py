"""The Runner: callback order, state on events and in the session, breaking out early, busy sessions."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
from collections.abc import AsyncGenerator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adk.agents import BaseAgent, LlmAgent, ParallelAgent
from adk.callbacks.results import Cont
from adk.context import AgentContext, ModelContext, ToolContext, current_invocation
from adk.errors import CallbackRegistrationError, SessionBusyError
from adk.events import Choice, Event, EventActions, LlmResponse, Message, Usage
from adk.models.base import LlmRequest
from adk.runner import Runner
from adk.sessions import InMemorySessionService, SessionService, SqliteSessionService
from adk.testing import ScriptedModel, transfer_to
from tests._runtime import Recorder, Tool, call, calls, reply, run, shapes, summary


async def test_callbacks_run_runner_then_agent_then_run_for_every_hook() -> None:
    trace: list[tuple[str, ...]] = []
    model = ScriptedModel([calls(call("echo", "c1")), "done"])
    agent = LlmAgent("root", model=model, tools=[Tool("echo")], callbacks=[Recorder("agent", trace)])
    runner = Runner(agent, callbacks=[Recorder("runner", trace)])
    await run(runner, callbacks=[Recorder("run", trace)])
    order = ("runner", "agent", "run")
    expected = [
        *[(who, "before_agent", "root") for who in order],
        *[(who, "before_model", "root") for who in order],
        *[(who, "after_model", "root") for who in order],
        *[(who, "before_tool", "echo") for who in order],
        *[(who, "after_tool", "echo") for who in order],
        *[(who, "before_model", "root") for who in order],
        *[(who, "after_model", "root") for who in order],
        *[(who, "after_agent", "root") for who in order],
    ]
    assert trace == expected


async def test_run_callbacks_apply_to_that_run_only() -> None:
    trace: list[tuple[str, ...]] = []
    runner = Runner(LlmAgent("root", model=ScriptedModel(["1", "2"])))
    await run(runner, callbacks=[Recorder("run", trace)])
    await run(runner)
    assert [t[1] for t in trace] == ["before_agent", "before_model", "after_model", "after_agent"]


def test_a_bad_run_callback_is_refused_before_the_run_starts() -> None:
    class Misspelt:
        def before_mdoel(self, ctx: ModelContext) -> Any: ...

    runner = Runner(LlmAgent("root", model=ScriptedModel([])))
    with pytest.raises(
        CallbackRegistrationError, match="'before_mdoel' that looks like the hook 'before_model'"
    ):
        runner.run("u", "s", "hi", callbacks=[Misspelt()])  # type: ignore[list-item]  # no real hook
    assert runner.run_sync("u", "s", "not busy") != []  # the refused run did not hold the session


async def test_events_carry_the_invocation_id_and_end_with_the_runner_completion() -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel(["ok"])))
    events = await run(runner, invocation_id="inv-1")
    assert {e.invocation_id for e in events} == {"inv-1"}
    assert [(e.object, e.done) for e in events] == [
        ("chat.completion", True),
        ("chat.completion", True),
        ("runner.completion", True),
    ]


def test_run_sync_returns_every_event() -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel(["ok"])))
    assert [summary(e) for e in runner.run_sync("u", "s", Message.user("hello"))] == [
        ("model", "user", "hello"),
        ("model", "root", "ok"),
        ("done", "root"),
    ]


# state


class Counter(Tool):
    def __init__(self) -> None:
        super().__init__("count", self._count)

    @staticmethod
    def _count(args: dict[str, Any], ctx: ToolContext) -> int:
        ctx.state["count"] = ctx.state.get("count", 0) + 1
        if "temp" in ctx.state:
            del ctx.state["temp"]
        return int(ctx.state["count"])


class Stamp:
    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        ctx.state["turns"] = ctx.state.get("turns", 0) + 1
        return Cont(ctx)


async def test_state_deltas_ride_on_the_events_that_made_them_and_reach_the_stored_session(
    store: SessionService,
) -> None:
    service = store
    session = await service.get_or_create("u", "s")
    setup = Event.new("setup", "user", actions=EventActions(state_delta={"temp": "x", "count": 10}))
    await service.append_event(session, setup)
    model = ScriptedModel([calls(call("count", "c1")), "done"])
    runner = Runner(
        LlmAgent("root", model=model, tools=[Counter()], callbacks=[Stamp()]), session_service=service
    )
    events = await run(runner)
    assert [(summary(e)[0], e.actions.state_delta) for e in events[1:]] == [
        ("model", {"turns": 1}),  # set in before_model: carried by that model call's response
        ("tool", {"count": 11, "temp": None}),  # set in the tool: carried by its result
        ("model", {"turns": 2}),
        ("done", {}),
    ]
    stored = await service.get("u", "s")
    assert stored is not None
    assert stored.state == {"count": 11, "turns": 2}
    # the next run starts from the stored state
    model2 = ScriptedModel([calls(call("count", "c2")), "done"])
    runner.agent.model = model2  # type: ignore[attr-defined]
    await run(runner)
    stored = await service.get("u", "s")
    assert stored is not None
    assert stored.state == {"count": 12, "turns": 4}


async def test_state_set_after_the_last_event_goes_out_as_a_final_state_update() -> None:
    class Writer(BaseAgent):
        async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
            yield Event.new(ctx.invocation_id, "", choices=[Choice(message=Message.assistant("written"))])
            ctx.state["written"] = True

    service = InMemorySessionService()
    events = await shapes(Runner(Writer("writer"), session_service=service))
    assert events == [
        ("model", "user", "hi"),
        ("model", "writer", "written"),  # the author is filled in with the agent's name
        ("state", "writer", {"written": True}),
        ("done", "writer"),
    ]
    stored = await service.get("u", "s")
    assert stored is not None
    assert stored.state == {"written": True}


async def test_state_changed_before_an_error_is_kept_on_the_error_event() -> None:
    class Failing(BaseAgent):
        async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
            ctx.state["progress"] = "half"
            if ctx.state["progress"] == "half":
                raise RuntimeError("crashed")
            yield Event.new(ctx.invocation_id, "")

    service = InMemorySessionService()
    events = await run(Runner(Failing("failing"), session_service=service))
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("error", "failing", "RuntimeError", "agent:failing"),
    ]
    assert events[-1].actions.state_delta == {"progress": "half"}
    stored = await service.get("u", "s")
    assert stored is not None
    assert stored.state == {"progress": "half"}
    assert [e.id for e in stored.events] == [e.id for e in events]


# breaking out early


class Slow(Tool):
    """A tool that waits for an event nobody sets, and records that it was cancelled."""

    def __init__(self, name: str = "slow") -> None:
        super().__init__(name, self._wait)
        self.started = asyncio.Event()
        self.cancelled: list[str] = []
        self.was_cancelled = asyncio.Event()

    async def _wait(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(ctx.tool_call_id)
            self.was_cancelled.set()
            raise
        raise AssertionError("unreachable")


def stop_at(kind: str) -> Callable[[Event], bool]:
    return {
        "user event": lambda e: e.author == "user",
        "mid-stream": lambda e: e.is_partial,
        "after a tool call": lambda e: e.object == "tool.response",
    }[kind]


async def consume(runner: Runner, stop: Callable[[Event], bool], mode: str, **kw: Any) -> list[Event]:
    """Iterate a run until `stop`, then leave it by `aclose()` or by a plain `break` (and gc)."""
    seen: list[Event] = []
    if mode == "aclose":
        events = runner.run("u", "s", "hi", **kw)
        async for event in events:
            seen.append(event)
            if stop(event):
                break
        await events.aclose()
    else:
        async for event in runner.run("u", "s", "hi", **kw):
            seen.append(event)
            if stop(event):
                break
        gc.collect()
    return seen


def tool_then_answer(request: LlmRequest) -> LlmResponse | str:
    last = request.messages[-1]
    if last.content == "hi":
        return calls(call("echo", "c1"))
    if last.role == "tool":
        return "the final answer"
    return reply(request)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    sqlite = SqliteSessionService(tmp_path / "sessions.sqlite3")
    yield sqlite
    sqlite.close()


async def stored_ids(store: SessionService) -> list[str]:
    """The ids of the events of session ("u", "s") as the store has them (a fresh read)."""
    session = await store.get("u", "s")
    assert session is not None
    return [e.id for e in session.events]


@pytest.mark.parametrize("mode", ["aclose", "break"])
@pytest.mark.parametrize("point", ["user event", "mid-stream", "after a tool call"])
async def test_breaking_out_keeps_what_was_stored_and_the_session_runs_again(
    point: str, mode: str, store: SessionService
) -> None:
    model = ScriptedModel([tool_then_answer] * 3)
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("echo")]), session_service=store)
    seen = await consume(runner, stop_at(point), mode, stream=True)
    assert await stored_ids(store) == [e.id for e in seen if not e.is_partial]
    assert seen[-1].object != "runner.completion"
    # at once, without waiting for asyncio to finalise the abandoned run
    assert (await shapes(runner, "again"))[-2:] == [("model", "root", "re: again"), ("done", "root")]


class Closing:
    """A streaming model that records whether its stream was closed."""

    name = "closing"

    def __init__(self) -> None:
        self.closed = False

    async def generate(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        try:
            yield LlmResponse(choices=[Choice(delta=Message.assistant("part"))], is_partial=True)
            yield LlmResponse.text("part of it")
        finally:
            self.closed = True


async def test_aclose_mid_stream_closes_the_model_stream_at_once() -> None:
    model = Closing()
    runner = Runner(LlmAgent("root", model=model))
    seen = await consume(runner, stop_at("mid-stream"), "aclose", stream=True)
    assert seen[-1].is_partial
    assert model.closed


async def test_a_tool_call_cut_short_is_answered_with_an_error_in_the_next_runs_history() -> None:
    slow = Slow()
    model = ScriptedModel([calls(call("slow", "c1"), call("echo", "c2")), reply])
    runner = Runner(LlmAgent("root", model=model, tools=[slow, Tool("echo")]))
    events = runner.run("u", "s", "hi")
    async for event in events:
        if event.tool_calls:
            break
    await events.aclose()
    assert (await shapes(runner, "again"))[1] == ("model", "root", "re: again")
    stopped = "Error: the run was stopped before this call returned"
    assert model.requests[1].messages == [
        Message.user("hi"),
        Message.assistant("", [call("slow", "c1"), call("echo", "c2")]),
        Message.tool(stopped, tool_call_id="c1", name="slow"),
        Message.tool(stopped, tool_call_id="c2", name="echo"),
        Message.user("again"),
    ]


@pytest.mark.parametrize("mode", ["aclose", "break"])
async def test_breaking_out_cancels_a_pending_tool_of_a_parallel_branch(mode: str) -> None:
    slow = Slow()

    async def after_slow_started(request: LlmRequest) -> str:
        await slow.started.wait()
        return "b answered"

    par = ParallelAgent(
        "par",
        sub_agents=[
            LlmAgent("a", model=ScriptedModel([calls(call("slow", "c1"))]), tools=[slow]),
            LlmAgent("b", model=ScriptedModel([after_slow_started])),
        ],
    )
    runner = Runner(par)
    async with asyncio.timeout(5):  # a hang fails the test instead of blocking it
        seen = await consume(runner, lambda e: e.author == "b", mode)
        if mode == "break":
            await slow.was_cancelled.wait()  # asyncio closes a dropped iterator on a later loop turn
    assert slow.cancelled == ["c1"]
    assert [summary(e) for e in seen] == [
        ("model", "user", "hi"),
        ("model", "a", "", [("slow", "{}")]),
        ("model", "b", "b answered"),
    ]
    session = await runner.session_service.get("u", "s")
    assert session is not None
    assert [e.id for e in session.events] == [e.id for e in seen]


@pytest.mark.parametrize("n_calls", [1, 3])
async def test_cancelling_the_consumer_cancels_pending_tool_calls(n_calls: int) -> None:
    tools = [Slow(f"slow{i}") for i in range(n_calls)]
    model = ScriptedModel([calls(*(call(t.name, f"c{i}") for i, t in enumerate(tools))), "next run"])
    runner = Runner(LlmAgent("root", model=model, tools=tools))
    seen: list[Event] = []

    async def consumer() -> None:
        async for event in runner.run("u", "s", "hi"):
            seen.append(event)

    task = asyncio.create_task(consumer())
    async with asyncio.timeout(5):
        for t in tools:
            await t.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert [t.cancelled for t in tools] == [[f"c{i}"] for i in range(n_calls)]
    session = await runner.session_service.get("u", "s")
    assert session is not None
    assert [e.id for e in session.events] == [e.id for e in seen]
    assert [summary(e)[0] for e in seen] == ["model", "model"]
    assert (await shapes(runner, "again"))[-1] == ("done", "root")


async def test_a_second_run_on_a_running_session_is_refused() -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel([reply] * 3)))
    first = runner.run("u", "s", "hi")
    assert (await anext(first)).author == "user"
    with pytest.raises(SessionBusyError, match="session 's' of user 'u' is already running"):
        await anext(runner.run("u", "s", "again"))
    assert (await shapes(runner, "elsewhere", session="other"))[1] == ("model", "root", "re: elsewhere")
    assert [summary(e) async for e in first] == [("model", "root", "re: hi"), ("done", "root")]
    assert (await shapes(runner, "again"))[1] == ("model", "root", "re: again")


async def test_a_run_kept_but_not_finished_holds_its_session_until_closed() -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel([reply])))
    first = runner.run("u", "s", "hi")
    async for _ in first:
        break
    with pytest.raises(SessionBusyError):
        await anext(runner.run("u", "s", "again"))
    await first.aclose()
    assert (await shapes(runner, "again"))[1] == ("model", "root", "re: again")


async def test_runs_on_different_sessions_proceed_concurrently() -> None:
    arrived: dict[str, asyncio.Event] = {"s1": asyncio.Event(), "s2": asyncio.Event()}

    def meet(me: str, other: str) -> Callable[[LlmRequest], Any]:
        async def answer(request: LlmRequest) -> str:
            arrived[me].set()
            await arrived[other].wait()  # both model calls are in flight at once
            return f"answer in {me}"

        return answer

    # one agent, one model object shared by both runs: each step is picked by call order
    model = ScriptedModel([meet("s1", "s2"), meet("s2", "s1")])
    runner = Runner(LlmAgent("root", model=model))
    async with asyncio.timeout(5):
        first, second = await asyncio.gather(shapes(runner, session="s1"), shapes(runner, session="s2"))
    assert first[1] == ("model", "root", "answer in s1")
    assert second[1] == ("model", "root", "answer in s2")
    for sid in ("s1", "s2"):
        session = await runner.session_service.get("u", sid)
        assert session is not None
        assert [e.content for e in session.events] == ["hi", f"answer in {sid}", ""]  # "": the completion


async def test_runs_interleaved_in_one_task_each_see_their_own_invocation() -> None:
    def whoami(args: dict[str, Any], ctx: ToolContext) -> str:
        assert current_invocation() is ctx.invocation
        return current_invocation().session.id

    model = ScriptedModel([calls(call("whoami", "c1")), calls(call("whoami", "c2")), "a", "b"])
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("whoami", whoami)]))
    one, two = runner.run("u", "s1", "hi"), runner.run("u", "s2", "hi")
    results: dict[str, str] = {}
    for _ in range(3):  # user event, model event, tool event: alternating between the two runs
        for events in (one, two):
            event = await anext(events)
            if event.object == "tool.response":
                results[event.invocation_id] = event.content
    with pytest.raises(LookupError, match=r"current_invocation\(\) called outside of a Runner run"):
        current_invocation()
    await one.aclose()
    await two.aclose()
    assert sorted(results.values()) == ["s1", "s2"]


async def test_a_model_answering_with_a_response_object() -> None:
    # a complete LlmResponse step keeps its usage on the stored event
    response = LlmResponse.text("counted", usage=Usage(prompt_tokens=3, completion_tokens=1, total_tokens=4))
    events = await run(Runner(LlmAgent("root", model=ScriptedModel([response]))))
    assert events[1].usage is not None
    assert events[1].usage.total_tokens == 4
    assert events[1].id == response.id


async def test_async_hooks_and_async_tools_run_in_the_same_places() -> None:
    trace: list[str] = []

    class AsyncHooks:
        async def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
            await asyncio.sleep(0)
            trace.append("before_agent")
            return Cont(ctx)

        async def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            await asyncio.sleep(0)
            trace.append("before_model")
            request = ctx.request.model_copy(update={"instruction": "async"})
            return Cont(dataclasses.replace(ctx, request=request))

        async def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
            await asyncio.sleep(0)
            trace.append("before_tool")
            return Cont(dataclasses.replace(ctx, args={"x": 1}))

        async def after_tool(self, result: Any, ctx: ToolContext) -> Any:
            await asyncio.sleep(0)
            trace.append("after_tool")
            return {"wrapped": result}

    async def echo(args: dict[str, Any], ctx: ToolContext) -> Any:
        await asyncio.sleep(0)
        return args

    model = ScriptedModel([calls(call("echo", "c1")), "done"])
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("echo", echo)]), callbacks=[AsyncHooks()])
    events = await shapes(runner)
    assert events[2] == ("tool", "root", "echo", "c1", '{"wrapped":{"x":1}}')
    assert trace == ["before_agent", "before_model", "before_tool", "after_tool", "before_model"]
    assert [r.instruction for r in model.requests] == ["async", "async"]


# the root agent's body, run by the runner itself or through its run()


def escalating(args: dict[str, Any], ctx: ToolContext) -> str:
    ctx.escalate()
    return "escalated"


@pytest.mark.parametrize("agent_hooks", [False, True])
async def test_the_root_agent_gives_the_same_events_with_or_without_agent_hooks(agent_hooks: bool) -> None:
    # Without agent hooks the runner runs the body itself; with them it goes through run(): the
    # events, their authors, the escalation carried onto the next complete event, are the same.
    model = ScriptedModel([calls(call("escalate", "c1")), calls(call("boom", "c2"))])
    boom = Tool("boom", lambda args, ctx: 1 / 0)
    trace: list[tuple[Any, ...]] = []
    agent = LlmAgent(
        "root",
        model=model,
        tools=[Tool("escalate", escalating), boom],
        callbacks=[Recorder("agent", trace)] if agent_hooks else [],
        max_iterations=2,
    )
    events = await run(Runner(agent))
    assert [(summary(e)[:3], e.actions.escalate) for e in events] == [
        (("model", "user", "hi"), False),
        (("model", "root", ""), False),
        (("tool", "root", "escalate"), True),
        (("model", "root", ""), False),
        (("tool", "root", "boom"), False),
        (("error", "root", "MaxIterationsExceeded"), False),
    ]
    assert events[-1].error is not None and events[-1].error.where == "agent:root"
    assert bool(trace) == agent_hooks


async def test_an_error_in_the_agent_that_last_answered_is_located_at_that_agent() -> None:
    # The next message goes to the sub-agent that answered (docs/agents.md); run without agent
    # hooks, its failure is still located at it, not at the root.
    helper = LlmAgent(
        "helper", model=ScriptedModel(["I can help.", calls(call("boom", "c1"))]), max_iterations=1
    )
    root = LlmAgent("root", model=ScriptedModel([transfer_to("helper")]), sub_agents=[helper])
    runner = Runner(root)
    assert (await shapes(runner))[-2] == ("model", "helper", "I can help.")
    failed = await run(runner, "again")
    assert [summary(e)[:2] for e in failed] == [
        ("model", "user"),
        ("model", "helper"),
        ("tool", "helper"),
        ("error", "root"),
    ]
    assert failed[-1].error is not None
    assert (failed[-1].error.type, failed[-1].error.where) == ("MaxIterationsExceeded", "agent:helper")


class Wrapped(LlmAgent):
    """An LlmAgent whose run() stamps its events: the runner must not run its body alone."""

    async def run(self, invocation: Any, branch: str = "") -> AsyncGenerator[Event, None]:
        async for event in super().run(invocation, branch):
            event.branch = event.branch or "stamped"
            yield event


class OwnBody(LlmAgent):
    """An LlmAgent with a body of its own whose events name no author: run() names them."""

    async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
        async for event in super()._run_body(ctx):
            event.author = ""
            yield event


async def test_a_subclass_with_its_own_run_or_body_is_run_as_it_says() -> None:
    stamped = await run(Runner(Wrapped("root", model=ScriptedModel(["hello"]))))
    assert [e.branch for e in stamped] == ["", "stamped", ""]
    named = await run(Runner(OwnBody("root", model=ScriptedModel(["hello"]))))
    assert [e.author for e in named] == ["user", "root", "root"]


async def test_a_subclass_body_built_on_the_agents_passes_on_each_of_its_steps() -> None:
    # super()._run_body drives the agent's steps: a streamed call's chunks as they come (a step
    # that is a generator), then its response, the tool's result and the answer (steps that are lists).
    model = ScriptedModel([calls(call("echo", "c1", x=1)), "all done"])
    agent = OwnBody("root", model=model, tools=[Tool("echo")])
    got = await shapes(Runner(agent), stream=True)
    assert got == [
        ("model", "user", "hi"),
        ("chunk", "root", "", [("c1", "echo", '{"x":')]),
        ("chunk", "root", "", [("c1", "echo", " 1}")]),
        ("model", "root", "", [("echo", '{"x": 1}')]),
        ("tool", "root", "echo", "c1", '{"echo":{"x":1}}'),
        ("chunk", "root", "all"),
        ("chunk", "root", " done"),
        ("model", "root", "all done"),
        ("done", "root"),
    ]


async def test_a_runner_given_another_store_after_it_was_made_keeps_sessions_there() -> None:
    first, second = InMemorySessionService(), InMemorySessionService()
    runner = Runner(LlmAgent("root", model=ScriptedModel(["one", "two"])), session_service=first)
    await run(runner, session="a")
    runner.session_service = second
    await run(runner, session="b")
    assert [await first.get("u", s) is not None for s in ("a", "b")] == [True, False]
    assert [await second.get("u", s) is not None for s in ("a", "b")] == [False, True]


@pytest.mark.parametrize("hooked", [False, True], ids=["bare", "agent hooks"])
async def test_a_run_leaves_nothing_for_the_collector(hooked: bool) -> None:
    # Every object of a run is freed by reference counting: a cycle (a step kept as a bound
    # method on the steps object, say) would leave each run to the collector.
    trace: list[tuple[str, ...]] = []
    model = ScriptedModel([calls(call("echo", "c1")), "done"] * 3)
    callbacks = [Recorder("agent", trace)] if hooked else []
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("echo")], callbacks=callbacks))
    await run(runner, session="warm")
    gc.collect()
    gc.disable()
    try:
        for session in ("a", "b"):
            await run(runner, session=session)
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert bool(trace) == hooked


async def test_an_in_memory_append_that_fails_mid_run_ends_it_with_a_store_error() -> None:
    # The tool deletes the session under the run: its result cannot be stored.
    store = InMemorySessionService()

    async def forget(args: dict[str, Any], ctx: ToolContext) -> str:
        await store.delete("u", "s")
        return "forgotten"

    model = ScriptedModel([calls(call("forget", "c1")), "never asked"])
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("forget", forget)]), session_service=store)
    got = await shapes(runner)
    assert got[:2] == [("model", "user", "hi"), ("model", "root", "", [("forget", "{}")])]
    assert got[2:] == [("error", "root", "LookupError", "store")]
    assert model.remaining == 1


def test_run_sync_with_a_message_alone_runs_as_the_default_user_in_the_default_session() -> None:
    store = InMemorySessionService()
    runner = Runner(LlmAgent("a", model=ScriptedModel(["first", "second"])), session_service=store)
    assert runner.run_sync("hi")[-2].content == "first"
    assert runner.run_sync("user", "default", "again")[-2].content == "second"  # the same session
    session = asyncio.run(store.get("user", "default"))
    assert session is not None
    assert [e.content for e in session.events if e.author == "user"] == ["hi", "again"]
    with pytest.raises(
        TypeError, match=r"^run_sync takes a message, or user_id, session_id and message; got 2"
    ):
        runner.run_sync("user", "hi")  # type: ignore[call-overload]
