"""Contexts: session state with a delta, invocation state, and the context variables."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
from pathlib import Path
from typing import Any

import pytest

from adk.agents import LlmAgent, ParallelAgent
from adk.callbacks.results import Cont
from adk.context import (
    AgentContext,
    ModelContext,
    State,
    ToolContext,
    current_invocation,
    current_tool_call_id,
)
from adk.events import Message
from adk.runner import Runner
from adk.sessions import SqliteSessionService
from adk.testing import ScriptedModel
from tests._runtime import Recorder, Tool, call, calls, run, summary


def test_contexts_are_frozen_dataclasses_made_as_their_fields_say() -> None:
    invocation: Any = object()
    agent: Any = object()
    tool: Any = object()
    ctx = ToolContext(invocation, agent, "b", tool, {"x": 1}, "c1")
    assert (ctx.attempt, ctx.approved) == (1, False)  # the defaults
    assert ToolContext(invocation, agent, "b", tool, {"x": 1}, "c1", attempt=1, approved=False) == ctx
    assert dataclasses.replace(ctx, attempt=2) == ToolContext(
        invocation=invocation, agent=agent, branch="b", tool=tool, args={"x": 1}, tool_call_id="c1", attempt=2
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.attempt = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="tool_call_id"):
        ToolContext(invocation, agent, "b", tool, {})  # type: ignore[call-arg]
    assert repr(AgentContext(invocation, agent, "")).startswith("AgentContext(invocation=")
    model = ModelContext(invocation, agent, "", tool, agent)
    assert (model.request, model.model, model.attempt) == (tool, agent, 1)


def test_state_reads_through_its_delta_and_records_changes() -> None:
    base = {"a": 1, "b": 2}
    state = State(base)
    state["c"] = 3
    state["a"] = 10
    del state["b"]
    assert (state["a"], state["c"], state.get("b")) == (10, 3, None)
    assert "b" not in state
    assert dict(state) == {"a": 10, "c": 3}
    assert len(state) == 2
    assert base == {"a": 1, "b": 2}  # the stored state changes only when an event carries the delta
    assert (state.has_delta, state.take_delta(), state.has_delta) == (
        True,
        {"c": 3, "a": 10, "b": None},
        False,
    )
    assert state.take_delta() == {}


def test_state_setting_none_deletes_and_deleting_a_missing_key_is_a_key_error() -> None:
    state = State({"a": 1})
    state["a"] = None
    with pytest.raises(KeyError):
        state["a"]
    with pytest.raises(KeyError):
        del state["missing"]
    assert state.take_delta() == {"a": None}


def test_state_refuses_a_value_json_cannot_hold_where_it_is_set() -> None:
    state = State({"a": 1})
    with pytest.raises(TypeError, match=r"^state\['when'\]: JSON cannot hold a value of type object \("):
        state["when"] = object()
    with pytest.raises(TypeError, match=r"^state\['deep'\]: JSON cannot hold a value of type dict \("):
        state.update(deep={"fine": [1, 2], "bad": {1, object()}})
    state["day"] = datetime.date(2026, 1, 2)  # stored as JSON stores it: an ISO string
    state["pair"] = (1, 2)
    assert state.take_delta() == {"day": datetime.date(2026, 1, 2), "pair": (1, 2)}


async def test_a_tool_that_sets_a_value_json_cannot_hold_gets_an_error_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    def keep(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.state["handle"] = open  # a function: nothing JSON can hold
        return "kept"

    model = ScriptedModel([calls(call("keep", "c1")), "could not keep it"])
    async with SqliteSessionService(tmp_path / "s.sqlite3") as store:
        runner = Runner(LlmAgent("root", model=model, tools=[Tool("keep", keep)]), session_service=store)
        events = await run(runner)
        stored = await store.get("u", "s")

    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "", [("keep", "{}")]),
        (
            "tool",
            "root",
            "keep",
            "c1",
            TOOL_ERROR.format("handle", FUNCTION),
        ),
        ("model", "root", "could not keep it"),
        ("done", "root"),
    ]
    assert stored is not None and stored.events == events
    assert stored.state == {}


class Remember:
    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        ctx.state["model"] = ctx.model
        return Cont(ctx)


async def test_a_callback_that_sets_a_value_json_cannot_hold_fails_naming_itself_and_the_key() -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel(["unused"]), callbacks=[Remember()]))
    events = await run(runner)

    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("error", "root", "CallbackError", "callback:Remember.before_model"),
    ]
    assert events[-1].error is not None
    assert "state['model']: JSON cannot hold a value of type ScriptedModel" in events[-1].error.message


FUNCTION = "builtin_function_or_method"
TOOL_ERROR = (
    "Error: TypeError: state[{0!r}]: JSON cannot hold a value of type {1} "
    "(Unable to serialize unknown type: <class '{1}'>)"
)


class Timing:
    """A timing-like callback: keeps a per-call value in invocation state from before_tool to after_tool."""

    def __init__(self) -> None:
        self.measured: dict[str, tuple[Any, Any]] = {}
        self.clock = 0

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        call_id = current_tool_call_id()
        assert call_id == ctx.tool_call_id
        assert current_invocation() is ctx.invocation
        self.clock += 1
        ctx.invocation.set_state(f"start:{call_id}", self.clock)
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        call_id = current_tool_call_id()
        assert call_id == ctx.tool_call_id
        inv = current_invocation()
        self.measured[ctx.tool_call_id] = (
            inv.get_state(f"start:{call_id}"),
            inv.get_state(f"tool:{call_id}"),
        )
        inv.delete_state(f"start:{call_id}")
        inv.delete_state(f"tool:{call_id}")
        return result


async def test_invocation_state_under_20_concurrent_tool_calls_keyed_by_tool_call_id() -> None:
    n = 20
    arrived = 0
    everyone = asyncio.Event()

    async def work(args: dict[str, Any], ctx: ToolContext) -> str:
        nonlocal arrived
        call_id = current_tool_call_id()
        assert call_id == ctx.tool_call_id
        inv = current_invocation()
        assert inv is ctx.invocation
        arrived += 1
        if arrived == n:
            everyone.set()
        await everyone.wait()  # all 20 calls are in flight at once before any finishes
        inv.set_state(f"tool:{call_id}", args["i"])
        await asyncio.sleep(0)
        return f"{call_id}:{inv.get_state(f'tool:{call_id}')}"

    timing = Timing()
    model = ScriptedModel([calls(*(call("work", f"c{i}", i=i) for i in range(n))), "done"])
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("work", work)], callbacks=[timing]))
    invocations = []

    class Keep:
        def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
            invocations.append(ctx.invocation)
            return output

    events = await run(runner, callbacks=[Keep()])
    assert [e.content for e in events if e.object == "tool.response"] == [f"c{i}:{i}" for i in range(n)]
    assert timing.measured == {f"c{i}": (i + 1, i) for i in range(n)}
    (invocation,) = invocations
    # every key was deleted by the callback that read it
    assert [invocation.get_state(f"{k}:c{i}") for k in ("start", "tool") for i in range(n)] == [None] * 2 * n


async def test_invocation_state_is_shared_within_a_run_and_gone_in_the_next() -> None:
    seen: list[Any] = []

    def remember(args: dict[str, Any], ctx: ToolContext) -> str:
        seen.append(ctx.invocation.get_state("k", "unset"))
        ctx.invocation.set_state("k", args["v"])
        return "ok"

    model = ScriptedModel(
        [
            calls(call("remember", "c1", v=1)),
            calls(call("remember", "c2", v=2)),
            "end of run 1",
            calls(call("remember", "c3", v=3)),
            "end of run 2",
        ]
    )
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("remember", remember)]))
    await run(runner, "first")
    await run(runner, "second")
    assert seen == ["unset", 1, "unset"]


async def test_context_variables_in_every_hook_and_in_parallel_branches() -> None:
    seen: list[tuple[str, str, str | None, bool]] = []

    class See(Recorder):
        def record(self, hook: str, ctx: AgentContext | ModelContext | ToolContext) -> None:
            self.trace.append(
                (ctx.agent.name, hook, current_tool_call_id(), current_invocation() is ctx.invocation)
            )

    def tool(args: dict[str, Any], ctx: ToolContext) -> str:
        seen.append((ctx.agent.name, "tool", current_tool_call_id(), current_invocation() is ctx.invocation))
        return "ok"

    par = ParallelAgent(
        "par",
        sub_agents=[
            LlmAgent("a", model=ScriptedModel([calls(call("t", "ca")), "a done"]), tools=[Tool("t", tool)]),
            LlmAgent(
                "b",
                model=ScriptedModel([calls(call("t", "cb1"), call("t", "cb2")), "b done"]),
                tools=[Tool("t", tool)],
            ),
        ],
    )
    await run(Runner(par, callbacks=[See("see", seen)]))
    assert all(same for *_, same in seen)
    by_agent: dict[str, list[tuple[str, str | None]]] = {}
    for agent, hook, call_id, _ in seen:
        by_agent.setdefault(agent, []).append((hook, call_id))
    assert by_agent["par"] == [("before_agent", None), ("after_agent", None)]
    assert by_agent["a"] == [
        ("before_agent", None),
        ("before_model", None),
        ("after_model", None),
        ("before_tool", "ca"),
        ("tool", "ca"),
        ("after_tool", "ca"),
        ("before_model", None),
        ("after_model", None),
        ("after_agent", None),
    ]
    b_tools = [(h, c) for h, c in by_agent["b"] if c is not None]
    assert sorted(b_tools) == sorted(
        [(h, c) for c in ("cb1", "cb2") for h in ("before_tool", "tool", "after_tool")]
    )
    assert current_tool_call_id() is None


def test_current_invocation_outside_a_run_is_a_clear_error() -> None:
    with pytest.raises(LookupError, match=r"current_invocation\(\) called outside of a Runner run"):
        current_invocation()


async def test_the_call_s_attempts_reach_the_before_and_after_hooks_of_callbacks_that_add_decisions() -> None:
    """`judging` names a model or tool call's `Attempts` in its before and after chains when a
    callback says it adds decisions there (`adds_decisions`, as `RateLimit` and `Budget` do), and
    then for every callback of the run; without one it is not set (a context variable's set and
    reset saved a chain)."""
    from adk.recovery.attempts import judging

    seen: list[tuple[str, bool]] = []

    class Look(Recorder):
        def record(self, hook: str, ctx: Any) -> None:
            seen.append((hook, judging.get() is not None))

    class Decides(Look):
        adds_decisions = True

    for callback, set_ in ((Look("look", []), False), (Decides("decides", []), True)):
        seen.clear()
        model = ScriptedModel([calls(call("keep", "c1")), "done"])
        agent = LlmAgent("root", model=model, tools=[Tool("keep")], callbacks=[callback])
        await run(Runner(agent))
        assert [h for h, _ in seen] == [
            "before_agent",
            "before_model",
            "after_model",
            "before_tool",
            "after_tool",
            "before_model",
            "after_model",
            "after_agent",
        ]
        judged = {h for h, is_set in seen if is_set}
        assert judged == ({"before_model", "after_model", "before_tool"} if set_ else set())
