"""Workflow agents: SequentialAgent, ParallelAgent (own branches), LoopAgent (bound, escalation)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from adk.context import AgentContext, ModelContext, ToolContext
from adk.events import LlmResponse, Message
from adk.models.base import LlmRequest
from adk.runner import Runner
from adk.testing import ScriptedModel, transfer_to
from tests._runtime import Recorder, Tool, call, calls, run, shapes


def seen(request: LlmRequest) -> str:
    """A text answer listing the contents the model was shown."""
    return " | ".join(m.content for m in request.messages)


async def test_sequential_agent_runs_children_in_order_sharing_the_conversation() -> None:
    a = ScriptedModel(["from a"])
    b = ScriptedModel([seen])
    seq = SequentialAgent("seq", sub_agents=[LlmAgent("a", model=a), LlmAgent("b", model=b)])
    events = await run(Runner(seq))
    assert [(e.author, e.content, e.branch) for e in events] == [
        ("user", "hi", ""),
        ("a", "from a", ""),
        ("b", "hi | from a", ""),
        ("seq", "", ""),
    ]


async def test_parallel_agent_children_run_on_their_own_branches_and_do_not_see_each_other() -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    def step(name: str) -> Any:
        async def answer(request: LlmRequest) -> str:
            started.append(name)
            if len(started) == 2:
                both_started.set()
            await both_started.wait()  # both children are in flight at once
            return f"{name} saw: {seen(request)}"

        return answer

    def again(request: LlmRequest) -> str:
        return f"again saw: {seen(request)}"

    par = ParallelAgent(
        "par",
        sub_agents=[
            LlmAgent("a", model=ScriptedModel([step("a"), again]), tools=[Tool("echo")]),
            LlmAgent("b", model=ScriptedModel([step("b")])),
        ],
    )
    a_model = par.sub_agents[0].model  # type: ignore[attr-defined]
    a_model._steps[0] = _then_call(a_model._steps[0])
    events = await run(Runner(par))
    by_branch: dict[str, list[tuple[str, str]]] = {}
    for e in events[1:-1]:
        by_branch.setdefault(e.branch, []).append((e.author, e.content))
    assert by_branch == {
        "par.a": [
            ("a", "a saw: hi"),
            ("a", '{"echo":{}}'),
            ("a", 'again saw: hi | a saw: hi | {"echo":{}}'),
        ],
        "par.b": [("b", "b saw: hi")],
    }
    assert (events[0].branch, events[-1].branch) == ("", "")


async def test_in_a_parallel_branch_each_agent_sees_what_the_ones_before_it_there_said() -> None:
    # A sequence on one branch beside another child: the second agent of the sequence sees the
    # first's answer, although the consumer stores events after the children produce them.
    def said(name: str) -> Any:
        return lambda request: f"{name} saw: {seen(request)}"

    sequence = SequentialAgent(
        "seq",
        sub_agents=[
            LlmAgent("a", model=ScriptedModel([said("a")])),
            LlmAgent("b", model=ScriptedModel([said("b")])),
        ],
    )
    par = ParallelAgent("par", sub_agents=[sequence, LlmAgent("c", model=ScriptedModel([said("c")]))])
    events = await run(Runner(par))
    assert sorted((e.branch, e.content) for e in events[1:-1]) == [
        ("par.c", "c saw: hi"),
        ("par.seq", "a saw: hi"),
        ("par.seq", "b saw: hi | a saw: hi"),
    ]


@pytest.mark.parametrize("wrap", ["sequence", "loop", "transfer"])
async def test_a_run_closed_early_cancels_the_agents_still_running_under_a_workflow_at_once(
    wrap: str,
) -> None:
    # A ParallelAgent's child is in a model call that never ends when the consumer closes the
    # run: the call is cancelled before aclose() returns, not whenever the collector gets to it.
    cancelled: list[str] = []

    async def stuck(request: LlmRequest) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("a")
            raise
        return "never"

    par = ParallelAgent(
        "p",
        sub_agents=[LlmAgent("a", model=ScriptedModel([stuck])), LlmAgent("b", model=ScriptedModel(["b1"]))],
    )
    root: LlmAgent | SequentialAgent | LoopAgent
    if wrap == "sequence":
        root = SequentialAgent("s", sub_agents=[par])
    elif wrap == "loop":
        root = LoopAgent("l", sub_agents=[par], max_iterations=1)
    else:
        root = LlmAgent("r", model=ScriptedModel([transfer_to("p")]), sub_agents=[par])
    events = Runner(root).run("u", "s", "hi")
    async for event in events:
        if event.author == "b":
            break
    await events.aclose()
    assert cancelled == ["a"]


def _then_call(step: Any) -> Any:
    """Wrap a text step so that its answer also asks for the echo tool."""

    async def answer(request: LlmRequest) -> LlmResponse:
        text = await step(request)
        return LlmResponse.calls(call("echo", "c1"), content=text)

    return answer


async def test_later_agents_do_not_see_parallel_children_whose_branches_name_their_parallel_agent() -> None:
    first = ParallelAgent("p1", sub_agents=[LlmAgent("x", model=ScriptedModel([seen]))])
    second = ParallelAgent("p2", sub_agents=[LlmAgent("x", model=ScriptedModel([seen]))])
    last = LlmAgent("last", model=ScriptedModel([seen]))
    events = await run(Runner(SequentialAgent("seq", sub_agents=[first, second, last])))
    assert [(e.branch, e.author, e.content) for e in events] == [
        ("", "user", "hi"),
        ("p1.x", "x", "hi"),
        ("p2.x", "x", "hi"),
        ("", "last", "hi"),
        ("", "seq", ""),
    ]


async def test_a_nested_parallel_branch_extends_the_parent_branch() -> None:
    inner = ParallelAgent("inner", sub_agents=[LlmAgent("leaf", model=ScriptedModel(["leaf"]))])
    outer = ParallelAgent("outer", sub_agents=[SequentialAgent("seq", sub_agents=[inner])])
    events = await run(Runner(outer))
    assert [(e.branch, e.author) for e in events[1:-1]] == [("outer.seq.inner.leaf", "leaf")]


async def test_parallel_child_failure_cancels_its_siblings_and_ends_the_invocation() -> None:
    never = asyncio.Event()
    cancelled: list[str] = []

    async def slow(args: dict[str, Any], ctx: ToolContext) -> str:
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.append(ctx.tool_call_id)
            raise
        return "unreachable"

    async def fail(request: LlmRequest) -> str:
        await asyncio.sleep(0)  # let the sibling reach its tool first
        raise ValueError("model b is broken")

    par = ParallelAgent(
        "par",
        sub_agents=[
            LlmAgent("a", model=ScriptedModel([calls(call("slow", "c1"))]), tools=[Tool("slow", slow)]),
            LlmAgent("b", model=ScriptedModel([fail])),
        ],
    )
    events = await shapes(Runner(par))
    assert events == [
        ("model", "user", "hi"),
        ("model", "a", "", [("slow", "{}")]),
        ("error", "par", "ValueError", "model:scripted"),
    ]
    assert cancelled == ["c1"]


async def test_callbacks_fire_for_children_of_workflow_agents() -> None:
    trace: list[tuple[str, ...]] = []
    par = ParallelAgent(
        "par",
        sub_agents=[LlmAgent("a", model=ScriptedModel(["1"])), LlmAgent("b", model=ScriptedModel(["2"]))],
    )
    await run(Runner(par, callbacks=[Recorder("r", trace)]))
    assert sorted(trace) == sorted(
        [
            ("r", "before_agent", "par"),
            ("r", "before_agent", "a"),
            ("r", "before_model", "a"),
            ("r", "after_model", "a"),
            ("r", "after_agent", "a"),
            ("r", "before_agent", "b"),
            ("r", "before_model", "b"),
            ("r", "after_model", "b"),
            ("r", "after_agent", "b"),
            ("r", "after_agent", "par"),
        ]
    )
    assert trace[0] == ("r", "before_agent", "par")
    assert trace[-1] == ("r", "after_agent", "par")


# LoopAgent


async def test_loop_agent_runs_its_children_max_iterations_times() -> None:
    a = ScriptedModel(["a1", "a2", "a3"])
    b = ScriptedModel(["b1", "b2", "b3"])
    loop = LoopAgent("loop", sub_agents=[LlmAgent("a", model=a), LlmAgent("b", model=b)], max_iterations=3)
    assert [s[1:] for s in await shapes(Runner(loop))] == [
        ("user", "hi"),
        ("a", "a1"),
        ("b", "b1"),
        ("a", "a2"),
        ("b", "b2"),
        ("a", "a3"),
        ("b", "b3"),
        ("loop",),
    ]
    a.assert_done()
    b.assert_done()


def test_loop_agent_max_iterations_must_be_positive() -> None:
    with pytest.raises(ValueError, match="loop agent 'loop': max_iterations must be at least 1, got 0"):
        LoopAgent("loop", sub_agents=[], max_iterations=0)


class EscalateFromTool(Tool):
    def __init__(self) -> None:
        super().__init__("finish", self._finish)

    @staticmethod
    def _finish(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.escalate()
        return "finished"


async def test_a_child_escalating_from_a_tool_exits_the_loop_after_that_child() -> None:
    worker = ScriptedModel(["draft 1", "draft 2"])
    critic = ScriptedModel(["not yet", calls(call("finish", "c1")), "approved"])
    loop = LoopAgent(
        "loop",
        sub_agents=[
            LlmAgent("worker", model=worker),
            LlmAgent("critic", model=critic, tools=[EscalateFromTool()]),
        ],
        max_iterations=5,
    )
    events = await run(Runner(loop))
    assert [(e.author, e.content, e.actions.escalate) for e in events] == [
        ("user", "hi", False),
        ("worker", "draft 1", False),
        ("critic", "not yet", False),
        ("worker", "draft 2", False),
        ("critic", "", False),
        ("critic", "finished", True),
        ("critic", "approved", False),
        ("loop", "", False),
    ]
    worker.assert_done()
    critic.assert_done()


class EscalateIn:
    def __init__(self, hook: str, when: str) -> None:
        self.hook = hook
        self.when = when

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        if self.hook == "after_model" and response.content == self.when:
            ctx.escalate()
        return response

    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        if self.hook == "after_agent" and output is not None and output.content == self.when:
            ctx.escalate()
        return output


@pytest.mark.parametrize("hook", ["after_model", "after_agent"])
async def test_a_child_escalating_from_a_callback_exits_the_loop(hook: str) -> None:
    checker = ScriptedModel(["again", "stop"])
    other = ScriptedModel(["o1", "o2"])
    loop = LoopAgent(
        "loop",
        sub_agents=[
            LlmAgent("checker", model=checker, callbacks=[EscalateIn(hook, "stop")]),
            LlmAgent("other", model=other),
        ],
        max_iterations=5,
    )
    events = await run(Runner(loop))
    assert [(e.author, e.content) for e in events if e.content] == [
        ("user", "hi"),
        ("checker", "again"),
        ("other", "o1"),
        ("checker", "stop"),
    ]
    assert [e.author for e in events if e.actions.escalate] == ["checker"]
    checker.assert_done()
    assert other.remaining == 1


async def test_an_escalation_inside_a_sequence_exits_the_enclosing_loop_after_the_sequence() -> None:
    inner = SequentialAgent(
        "inner",
        sub_agents=[
            LlmAgent("checker", model=ScriptedModel(["stop"]), callbacks=[EscalateIn("after_model", "stop")]),
            LlmAgent("after", model=ScriptedModel(["still runs"])),
        ],
    )
    loop = LoopAgent("loop", sub_agents=[inner, LlmAgent("next", model=ScriptedModel([]))], max_iterations=3)
    assert [s[1:] for s in await shapes(Runner(loop))] == [
        ("user", "hi"),
        ("checker", "stop"),
        ("after", "still runs"),
        ("loop",),
    ]


async def test_end_invocation_from_a_callback_stops_later_agents() -> None:
    class EndAfterModel:
        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            ctx.end_invocation()
            return response

    later = ScriptedModel([])
    seq = SequentialAgent(
        "seq",
        sub_agents=[
            LlmAgent("a", model=ScriptedModel(["only me"]), callbacks=[EndAfterModel()]),
            LoopAgent("loop", sub_agents=[LlmAgent("b", model=later)]),
        ],
    )
    trace: list[tuple[str, ...]] = []
    assert [s[1:] for s in await shapes(Runner(seq, callbacks=[Recorder("r", trace)]))] == [
        ("user", "hi"),
        ("a", "only me"),
        ("seq",),
    ]
    assert trace == [
        ("r", "before_agent", "seq"),
        ("r", "before_agent", "a"),
        ("r", "before_model", "a"),
        ("r", "after_model", "a"),
    ]


async def test_end_invocation_in_a_parallel_child_stops_its_sibling_before_its_next_model_call() -> None:
    b_waiting = asyncio.Event()
    gate = asyncio.Event()

    async def stop_when_b_waits(request: LlmRequest) -> LlmResponse:
        await b_waiting.wait()
        return calls(call("stop", "c1"))

    def stop(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.end_invocation()
        gate.set()
        return "stopped"

    async def wait_then_call(request: LlmRequest) -> LlmResponse:
        b_waiting.set()
        await gate.wait()
        return calls(call("echo", "c2"))

    b_model = ScriptedModel([wait_then_call, "never"])
    par = ParallelAgent(
        "par",
        sub_agents=[
            LlmAgent("a", model=ScriptedModel([stop_when_b_waits]), tools=[Tool("stop", stop)]),
            LlmAgent("b", model=b_model, tools=[Tool("echo")]),
        ],
    )
    events = await shapes(Runner(par))
    assert [s for s in events if s[0] == "model"] == [
        ("model", "user", "hi"),
        ("model", "a", "", [("stop", "{}")]),
        ("model", "b", "", [("echo", "{}")]),
    ]
    assert b_model.remaining == 1


async def test_an_error_names_the_innermost_agent_it_came_from() -> None:
    inner = LlmAgent(
        "inner", model=ScriptedModel([calls(call("echo", "c1"))]), tools=[Tool("echo")], max_iterations=1
    )
    seq = SequentialAgent("seq", sub_agents=[LoopAgent("loop", sub_agents=[inner])])
    events = await shapes(Runner(seq))
    assert events[-1] == ("error", "seq", "MaxIterationsExceeded", "agent:inner")
