"""runner.resume(): an invocation cut short is finished from its stored events, in its own id."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from adk import Approve
from adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from adk.agents.conditions import mentioned
from adk.context import ToolContext
from adk.events import Event, LlmResponse, Message, ObjectType, ToolCall
from adk.runner import Runner
from adk.sessions import InMemorySessionService, SessionService, SqliteSessionService
from adk.testing import ScriptedModel, transfer_to
from tests._runtime import Recorder, Tool, call, calls, summary


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    sqlite = SqliteSessionService(tmp_path / "s.sqlite3")
    yield sqlite
    sqlite.close()


async def cut_short(runner: Runner, stop: Callable[[Event], bool]) -> list[Event]:
    """Run until `stop` says so, then drop the run: what a worker that died leaves stored."""
    seen: list[Event] = []
    events = runner.run("u", "s", "hi")
    async for event in events:
        seen.append(event)
        if stop(event):
            break
    await events.aclose()
    return seen


async def resumed(runner: Runner, **kw: Any) -> list[Event]:
    return [e async for e in runner.resume("u", "s", **kw)]


async def test_tool_calls_without_a_result_rerun_if_idempotent_else_the_model_is_told(
    store: SessionService,
) -> None:
    lookup, pay = Tool("lookup", idempotent=True), Tool("pay")
    two_calls = calls(call("lookup", "c1", q="x"), call("pay", "c2", amount=5))
    model = ScriptedModel([two_calls, "paid, maybe"])
    runner = Runner(LlmAgent("root", model=model, tools=[lookup, pay]), session_service=store)
    first = await cut_short(runner, lambda e: bool(e.tool_calls))
    lookup.calls.clear()
    pay.calls.clear()

    trace: list[tuple[Any, ...]] = []
    events = await resumed(runner, callbacks=[Recorder("cb", trace)])

    interrupted = (
        "Error: the call to tool 'pay' was interrupted (its worker stopped) before its result was stored;"
        " its effect is unknown: it may or may not have happened"
    )
    assert [summary(e) for e in events] == [
        ("tool", "root", "lookup", "c1", '{"echo":{"q":"x"}}'),
        ("tool", "root", "pay", "c2", interrupted),
        ("model", "root", "paid, maybe"),
        ("done", "root"),
    ]
    assert {e.invocation_id for e in events} == {first[0].invocation_id}
    assert (lookup.calls, pay.calls) == ([{"q": "x"}], [])
    assert events[1].error is not None and events[1].error.type == "ToolInterrupted"
    assert trace == [
        ("cb", "before_agent", "root"),
        ("cb", "before_tool", "lookup"),
        ("cb", "after_tool", "lookup"),
        ("cb", "before_model", "root"),
        ("cb", "after_model", "root"),
        ("cb", "after_agent", "root"),
    ]
    assert model.requests[1].messages[-2:] == [e.message for e in events[:2]]
    session = await store.get("u", "s")
    assert session is not None
    assert [e.id for e in session.events] == [e.id for e in first + events]
    assert await resumed(runner) == []  # finished now


async def test_stored_tool_results_are_reused_and_never_rerun(store: SessionService) -> None:
    a, b = Tool("a", idempotent=True), Tool("b", idempotent=True)
    model = ScriptedModel([calls(call("a", "c1"), call("b", "c2")), "both done"])
    runner = Runner(LlmAgent("root", model=model, tools=[a, b]), session_service=store)
    first = await cut_short(runner, lambda e: e.object == "tool.response")  # only c1's result stored
    assert [summary(e)[0] for e in first] == ["model", "model", "tool"]

    events = await resumed(runner)

    assert [summary(e) for e in events] == [
        ("tool", "root", "b", "c2", '{"echo":{}}'),
        ("model", "root", "both done"),
        ("done", "root"),
    ]
    assert (len(a.calls), len(b.calls)) == (1, 2)  # b ran once before the cut, once on resume


async def test_an_interrupted_model_call_is_made_again(store: SessionService) -> None:
    model = ScriptedModel(["never seen", "answer"])
    runner = Runner(LlmAgent("root", model=model), session_service=store)
    first = await cut_short(runner, lambda e: e.author == "user")
    trace: list[tuple[Any, ...]] = []

    events = await resumed(runner, callbacks=[Recorder("cb", trace)])

    assert [summary(e) for e in events] == [("model", "root", "never seen"), ("done", "root")]
    assert [t[1] for t in trace] == ["before_agent", "before_model", "after_model", "after_agent"]
    assert model.requests[0].messages == [Message.user("hi")]
    assert events[0].invocation_id == first[0].invocation_id


async def test_a_finished_or_empty_session_has_nothing_to_resume(store: SessionService) -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel(["ok"])), session_service=store)
    assert await resumed(runner) == []
    await cut_short(runner, lambda e: False)
    assert await resumed(runner) == []


async def test_a_run_that_ended_in_an_error_is_not_resumed(store: SessionService) -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel([ValueError("down")])), session_service=store)
    events = await cut_short(runner, lambda e: False)
    assert summary(events[-1]) == ("error", "root", "ValueError", "model:scripted")
    assert await resumed(runner) == []


async def test_in_a_sequence_the_agents_that_finished_are_skipped(store: SessionService) -> None:
    first_model, second_model = ScriptedModel(["one"]), ScriptedModel([calls(call("t", "c1")), "two"])
    seq = SequentialAgent(
        "seq",
        sub_agents=[
            LlmAgent("first", model=first_model),
            LlmAgent("second", model=second_model, tools=[Tool("t", idempotent=True)]),
        ],
    )
    runner = Runner(seq, session_service=store)
    await cut_short(runner, lambda e: bool(e.tool_calls))

    events = await resumed(runner)

    assert [summary(e) for e in events] == [
        ("tool", "second", "t", "c1", '{"echo":{}}'),
        ("model", "second", "two"),
        ("done", "seq"),
    ]
    assert (len(first_model.requests), len(second_model.requests)) == (1, 2)


def loop_of(writer: ScriptedModel, critic: ScriptedModel, **kw: Any) -> LoopAgent:
    critic_agent = LlmAgent("critic", model=critic, tools=[Tool("t", idempotent=True)])
    return LoopAgent("loop", sub_agents=[LlmAgent("writer", model=writer), critic_agent], **kw)


def iterations(first: int, last: int) -> list[tuple[Any, ...]]:
    return [
        step
        for i in range(first, last + 1)
        for step in [("model", "writer", f"w{i}"), ("model", "critic", f"c{i}")]
    ]


@pytest.mark.parametrize("done", [0, 1, 2])
async def test_a_loop_cut_short_mid_iteration_goes_on_in_that_iteration_and_keeps_its_bound(
    store: SessionService, done: int
) -> None:
    # `done` iterations of four, then the critic's tool call in the next one is cut short.
    writer = ScriptedModel([f"w{i}" for i in range(1, 5)])
    critic = ScriptedModel(
        [
            *(f"c{i}" for i in range(1, done + 1)),
            calls(call("t", "k")),
            *(f"c{i}" for i in range(done + 1, 5)),
        ]
    )
    runner = Runner(loop_of(writer, critic, max_iterations=4), session_service=store)
    await cut_short(runner, lambda e: bool(e.tool_calls))

    events = await resumed(runner)

    assert [summary(e) for e in events] == [
        ("tool", "critic", "t", "k", '{"echo":{}}'),
        ("model", "critic", f"c{done + 1}"),
        *iterations(done + 2, 4),
        ("done", "loop"),
    ]
    writer.assert_done()
    critic.assert_done()
    assert {e.invocation_id for e in events} == {events[-1].invocation_id}


@pytest.mark.parametrize("done", [1, 2])
async def test_a_loop_cut_short_between_iterations_runs_only_those_left(
    store: SessionService, done: int
) -> None:
    writer = ScriptedModel([f"w{i}" for i in range(1, 5)])
    critic = ScriptedModel([f"c{i}" for i in range(1, 5)])
    runner = Runner(loop_of(writer, critic, max_iterations=4), session_service=store)
    await cut_short(runner, lambda e: e.content == f"c{done}")

    events = await resumed(runner)

    assert [summary(e) for e in events] == [*iterations(done + 1, 4), ("done", "loop")]
    writer.assert_done()
    critic.assert_done()


def then_summary(loop: LoopAgent, store: SessionService) -> Runner:
    """A runner of `loop`, then an agent `summary` that calls a tool (`t`, call `k`) and sums up."""
    after = ScriptedModel([calls(call("t", "k")), "summed up"])
    summary_agent = LlmAgent("summary", model=after, tools=[Tool("t", idempotent=True)])
    return Runner(SequentialAgent("flow", sub_agents=[loop, summary_agent]), session_service=store)


SUMMED_UP = [
    ("tool", "summary", "t", "k", '{"echo":{}}'),
    ("model", "summary", "summed up"),
    ("done", "flow"),
]
"""What resuming `then_summary` gives once the summary's tool call was cut short."""


@pytest.mark.parametrize("cut", ["after the loop", "at its end"])
async def test_a_loop_that_escalated_before_the_cut_does_not_run_again(
    store: SessionService, cut: str
) -> None:
    def finish(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.escalate()
        return "finished"

    writer = ScriptedModel(["w1", "w2"])
    critic = ScriptedModel(["c1", calls(call("finish", "f")), "c2"])
    loop = LoopAgent(
        "loop",
        sub_agents=[
            LlmAgent("writer", model=writer),
            LlmAgent("critic", model=critic, tools=[Tool("finish", finish)]),
        ],
        max_iterations=4,
    )
    runner = then_summary(loop, store)
    if cut == "at its end":  # the escalating critic's answer is the last event stored
        await cut_short(runner, lambda e: e.content == "c2")
    else:
        await cut_short(runner, lambda e: e.author == "summary" and bool(e.tool_calls))

    events = await resumed(runner)

    assert [summary(e) for e in events] == [
        *([("model", "summary", "", [("t", "{}")])] if cut == "at its end" else []),
        *SUMMED_UP,
    ]
    writer.assert_done()
    critic.assert_done()


async def test_in_a_parallel_agent_each_branch_goes_on_where_it_stopped(store: SessionService) -> None:
    quick = ScriptedModel(["quick done"])
    # The dropped run's branch task may get one model call further before it is cancelled.
    slow = ScriptedModel([calls(call("t", "k")), "slow done", "slow done"])
    both = ParallelAgent(
        "both",
        sub_agents=[
            LlmAgent("quick", model=quick),
            LlmAgent("slow", model=slow, tools=[Tool("t", idempotent=True)]),
        ],
    )
    runner = Runner(both, session_service=store)
    seen: list[str] = []

    def stop(event: Event) -> bool:
        seen.extend([event.author] if event.content == "quick done" or event.tool_calls else [])
        return len(seen) == 2

    await cut_short(runner, stop)

    events = await resumed(runner)

    assert [(summary(e), e.branch) for e in events] == [
        (("tool", "slow", "t", "k", '{"echo":{}}'), "both.slow"),
        (("model", "slow", "slow done"), "both.slow"),
        (("done", "both"), ""),
    ]
    quick.assert_done()  # its branch had finished: not run again


async def test_a_loop_whose_until_held_where_it_was_cut_does_not_run_again(store: SessionService) -> None:
    writer = ScriptedModel(["w1", "w2"])
    critic = ScriptedModel(["c1", "c2: good enough"])
    runner = Runner(
        loop_of(writer, critic, max_iterations=4, until=mentioned("good enough")), session_service=store
    )
    await cut_short(runner, lambda e: e.content == "c2: good enough")

    events = await resumed(runner)

    assert [summary(e) for e in events] == [("done", "loop")]
    writer.assert_done()
    critic.assert_done()


def loop_over_a_pair(writer: ScriptedModel, a: ScriptedModel, b: ScriptedModel, **kw: Any) -> LoopAgent:
    """A loop whose last sub-agent is a `ParallelAgent`: its children answer on branches of their own."""
    pair = ParallelAgent(
        "pair",
        sub_agents=[LlmAgent("a", model=a), LlmAgent("b", model=b, tools=[Tool("t", idempotent=True)])],
    )
    return LoopAgent("loop", sub_agents=[LlmAgent("writer", model=writer), pair], **kw)


def rounds(first: int, last: int) -> list[tuple[Any, ...]]:
    return [
        step
        for i in range(first, last + 1)
        for step in [
            (("model", "writer", f"w{i}"), ""),
            (("model", "a", f"a{i}"), "pair.a"),
            (("model", "b", f"b{i}"), "pair.b"),
        ]
    ]


@pytest.mark.parametrize("cut", ["b's tool call", "the writer's answer", "the iteration's end"])
async def test_a_loop_over_a_parallel_agent_goes_on_in_its_iteration_and_keeps_its_bound(
    store: SessionService, cut: str
) -> None:
    # Three iterations; the second is cut short where `cut` says. (The pair's children answer in
    # order, each at once: a before b.)
    writer = ScriptedModel(["w1", "w2", "w3"])
    a = ScriptedModel(["a1", "a2", "a3"])
    # b asks for a tool in the second iteration (its task waits there: the run was dropped).
    b = ScriptedModel(
        ["b1", calls(call("t", "k")), "b2", "b3"] if cut == "b's tool call" else ["b1", "b2", "b3"]
    )
    runner = Runner(loop_over_a_pair(writer, a, b, max_iterations=3), session_service=store)
    stop = {
        "b's tool call": lambda e: bool(e.tool_calls),
        "the writer's answer": lambda e: e.content == "w2",
        "the iteration's end": lambda e: e.content == "b2",
    }[cut]
    await cut_short(runner, stop)

    events = await resumed(runner)

    left = {
        "b's tool call": [
            (("tool", "b", "t", "k", '{"echo":{}}'), "pair.b"),
            (("model", "b", "b2"), "pair.b"),
        ],
        "the writer's answer": [(("model", "a", "a2"), "pair.a"), (("model", "b", "b2"), "pair.b")],
        "the iteration's end": [],
    }[cut]
    assert [(summary(e), e.branch) for e in events] == [*left, *rounds(3, 3), (("done", "loop"), "")]
    writer.assert_done()
    a.assert_done()
    b.assert_done()


async def test_a_loop_over_a_parallel_agent_that_had_ended_does_not_run_again(store: SessionService) -> None:
    # The loop ends after one of its two iterations (`until` held on b's answer); the agent after
    # it is cut short in a tool call.
    loop = loop_over_a_pair(
        ScriptedModel(["w1"]),
        ScriptedModel(["a1"]),
        ScriptedModel(["b1: enough"]),
        max_iterations=2,
        until=mentioned("enough"),
    )
    runner = then_summary(loop, store)
    await cut_short(runner, lambda e: e.author == "summary" and bool(e.tool_calls))

    events = await resumed(runner)

    assert [summary(e) for e in events] == SUMMED_UP


def loop_over_a_loop(
    planner: ScriptedModel, writer: ScriptedModel, critic: ScriptedModel, **inner: Any
) -> LoopAgent:
    """Three iterations of a planner then an inner loop of two iterations (writer, then critic)."""
    inner_loop = loop_of(writer, critic, max_iterations=2, **inner)
    return LoopAgent("outer", sub_agents=[LlmAgent("planner", model=planner), inner_loop], max_iterations=3)


def planned(first: int, last: int) -> list[tuple[Any, ...]]:
    """Outer iterations `first` to `last`: the plan, then two of the inner loop's."""
    return [
        step
        for i in range(first, last + 1)
        for step in [("model", "planner", f"p{i}"), *iterations(2 * i - 1, 2 * i)]
    ]


@pytest.mark.parametrize("cut", ["the critic's tool call", "the plan", "the inner loop's end"])
async def test_a_loop_over_a_loop_counts_the_outer_iterations_and_goes_on_in_the_inner_one(
    store: SessionService, cut: str
) -> None:
    # The second outer iteration is cut short where `cut` says: the inner loop's iterations must
    # count as its own, not as the outer loop's.
    planner = ScriptedModel(["p1", "p2", "p3"])
    writer = ScriptedModel([f"w{i}" for i in range(1, 7)])
    tool_call = [calls(call("t", "k"))] if cut == "the critic's tool call" else []
    critic = ScriptedModel(["c1", "c2", *tool_call, *(f"c{i}" for i in range(3, 7))])
    runner = Runner(loop_over_a_loop(planner, writer, critic), session_service=store)
    stop = {
        "the critic's tool call": lambda e: bool(e.tool_calls),
        "the plan": lambda e: e.content == "p2",
        "the inner loop's end": lambda e: e.content == "c4",
    }[cut]
    await cut_short(runner, stop)

    events = await resumed(runner)

    left = {
        "the critic's tool call": [
            ("tool", "critic", "t", "k", '{"echo":{}}'),
            ("model", "critic", "c3"),
            *iterations(4, 4),
        ],
        "the plan": iterations(3, 4),
        "the inner loop's end": [],
    }[cut]
    assert [summary(e) for e in events] == [*left, *planned(3, 3), ("done", "outer")]
    planner.assert_done()
    writer.assert_done()
    critic.assert_done()


async def test_a_loop_over_a_loop_that_until_ended_early_counts_that_run_as_one_iteration(
    store: SessionService,
) -> None:
    # The inner loop's first run ends after one of its two iterations ("ok"); the second outer
    # iteration is cut short in the critic's tool call.
    planner = ScriptedModel(["p1", "p2", "p3"])
    writer = ScriptedModel([f"w{i}" for i in range(1, 6)])
    critic = ScriptedModel(["c1 ok", calls(call("t", "k")), *(f"c{i}" for i in range(2, 6))])
    runner = Runner(loop_over_a_loop(planner, writer, critic, until=mentioned("ok")), session_service=store)
    await cut_short(runner, lambda e: bool(e.tool_calls))

    events = await resumed(runner)

    assert [summary(e) for e in events] == [
        ("tool", "critic", "t", "k", '{"echo":{}}'),
        ("model", "critic", "c2"),
        *iterations(3, 3),
        ("model", "planner", "p3"),
        *iterations(4, 5),
        ("done", "outer"),
    ]
    planner.assert_done()
    writer.assert_done()
    critic.assert_done()


async def test_a_loop_in_a_parallel_branch_of_a_loop_counts_only_its_own_current_run(
    store: SessionService,
) -> None:
    # outer (2 iterations): writer, then side by side an inner loop (2 iterations: a, then b with
    # a tool) and x. The second outer iteration is cut short in b's tool call, in the inner
    # loop's first iteration: the inner loop's events are on a branch of their own, and the
    # writer's (on the outer branch) tell where its first run ended.
    writer, x = ScriptedModel(["w1", "w2"]), ScriptedModel(["x1", "x2"])
    a = ScriptedModel([f"a{i}" for i in range(1, 5)])
    b = ScriptedModel(["b1", "b2", calls(call("t", "k")), "b3", "b4"])
    inner = LoopAgent(
        "inner",
        sub_agents=[LlmAgent("a", model=a), LlmAgent("b", model=b, tools=[Tool("t", idempotent=True)])],
        max_iterations=2,
    )
    side = ParallelAgent("side", sub_agents=[inner, LlmAgent("x", model=x)])
    outer = LoopAgent("outer", sub_agents=[LlmAgent("writer", model=writer), side], max_iterations=2)
    runner = Runner(outer, session_service=store)
    await cut_short(runner, lambda e: bool(e.tool_calls))

    events = await resumed(runner)

    assert [(summary(e), e.branch) for e in events] == [
        (("tool", "b", "t", "k", '{"echo":{}}'), "side.inner"),
        (("model", "b", "b3"), "side.inner"),
        (("model", "a", "a4"), "side.inner"),
        (("model", "b", "b4"), "side.inner"),
        (("done", "outer"), ""),
    ]
    for model in (writer, a, b, x):
        model.assert_done()


async def test_a_pause_for_approval_in_a_loop_in_a_parallel_branch_of_a_loop_goes_on_where_it_stopped(
    store: SessionService,
) -> None:
    # The inner loop's second iteration asks for an approval (outer iteration 1); x had answered
    # beside it. The runner's pause event, on the outer branch, is no agent running after the loop.
    paid = Tool("t")
    paid.requires_approval = True
    a = ScriptedModel(["a1", calls(call("t", "c1")), "a2", "a3", "a4"])
    b, x, writer = (
        ScriptedModel(["b1", "b2", "b3", "b4"]),
        ScriptedModel(["x1", "x2"]),
        ScriptedModel(["w1", "w2"]),
    )
    inner = LoopAgent(
        "inner", sub_agents=[LlmAgent("a", model=a, tools=[paid]), LlmAgent("b", model=b)], max_iterations=2
    )
    side = ParallelAgent("side", sub_agents=[inner, LlmAgent("x", model=x)])
    outer = LoopAgent("outer", sub_agents=[LlmAgent("writer", model=writer), side], max_iterations=2)
    runner = Runner(outer, session_service=store)
    first = [e async for e in runner.run("u", "s", "hi")]
    assert [(summary(e)[:3], e.branch) for e in first if e.branch == "side.x"] == [
        (("model", "x", "x1"), "side.x")
    ]

    events = [e async for e in runner.run("u", "s", approvals={"c1": Approve()})]

    by_branch: dict[str, list[tuple[Any, ...]]] = {}
    for e in events:
        by_branch.setdefault(e.branch, []).append(summary(e))
    assert by_branch == {
        "side.inner": [
            ("tool", "a", "t", "c1", '{"echo":{}}'),
            ("model", "a", "a2"),
            ("model", "b", "b2"),  # the inner loop's first run ends: the outer iteration with it
            ("model", "a", "a3"),
            ("model", "b", "b3"),
            ("model", "a", "a4"),
            ("model", "b", "b4"),
        ],
        "": [("model", "writer", "w2"), ("done", "outer")],
        "side.x": [("model", "x", "x2")],
    }
    for model in (writer, a, b, x):
        model.assert_done()


async def test_an_approval_asked_in_a_loop_in_a_loop_is_carried_out_when_given(store: SessionService) -> None:
    # The inner loop asks for an approval in the outer loop's second iteration; the approval
    # carries the call out and both loops finish their iterations (the call used to be dropped:
    # the inner iterations counted as the outer loop's, which took itself for finished).
    paid = Tool("t")
    paid.requires_approval = True
    planner, a = ScriptedModel(["p1", "p2"]), ScriptedModel(["a1", "a2", "a3", "a4"])
    b = ScriptedModel(["b1", "b2", calls(call("t", "k")), "b3", "b4"])
    inner = LoopAgent(
        "inner", sub_agents=[LlmAgent("a", model=a), LlmAgent("b", model=b, tools=[paid])], max_iterations=2
    )
    outer = LoopAgent("outer", sub_agents=[LlmAgent("planner", model=planner), inner], max_iterations=2)
    runner = Runner(outer, session_service=store)
    assert [e.object for e in [e async for e in runner.run("u", "s", "hi")]][-2:] == [
        "tool.approval_request",
        "runner.paused",
    ]

    events = [e async for e in runner.run("u", "s", approvals={"k": Approve()})]

    assert [summary(e) for e in events] == [
        ("tool", "b", "t", "k", '{"echo":{}}'),
        ("model", "b", "b3"),
        ("model", "a", "a4"),
        ("model", "b", "b4"),
        ("done", "outer"),
    ]
    assert paid.calls == [{}]
    for model in (planner, a, b):
        model.assert_done()


# --- cut anywhere: resuming gives the conversation an uninterrupted run gives ---------------------


class Echo:
    """Answers `<label><n>`, n the number of messages it is shown, and at the `call_at` counts
    first calls tool `t`: the same answer whenever asked with the same history, so a resumed run
    must show every agent what an uninterrupted one showed it. `first` answers the user's message."""

    name = "echo"

    def __init__(self, label: str, call_at: tuple[int, ...] = (), first: LlmResponse | None = None) -> None:
        self.label, self.call_at, self.first = label, call_at, first

    async def generate(self, request: Any) -> AsyncIterator[Any]:
        n = len(request.messages)
        if n == 1 and self.first is not None:
            yield self.first
        elif n in self.call_at and request.messages[-1].role != "tool":
            yield calls(call("t", f"{self.label}-{n}"))
        else:
            yield LlmResponse.text(f"{self.label}{n}")


def echo(name: str, *call_at: int, approval: bool = False) -> LlmAgent:
    """An agent answering as `Echo` does, whose tool `t` waits for an approval if `approval`."""
    tool = Tool("t", idempotent=True)
    tool.requires_approval = approval
    return LlmAgent(name, model=Echo(name, call_at), tools=[tool])


def gated(name: str, *call_at: int) -> LlmAgent:
    return echo(name, *call_at, approval=True)


def handing_over(to: Any) -> LlmAgent:
    """An agent that hands the user's message over to `to`, its sub-agent."""
    return LlmAgent("r", model=Echo("r", first=transfer_to(to.name, call_id="x")), sub_agents=[to])


# Each made with the agent maker it is given: `echo`, or `gated` whose tool calls wait for approval.
NESTED: dict[str, Callable[[Callable[..., LlmAgent]], Any]] = {
    "a loop in a loop": lambda echo: LoopAgent(
        "outer",
        sub_agents=[echo("p"), LoopAgent("inner", sub_agents=[echo("a"), echo("b", 5)], max_iterations=2)],
        max_iterations=2,
    ),
    "a parallel agent in a loop": lambda echo: LoopAgent(
        "loop",
        sub_agents=[
            echo("w"),
            ParallelAgent(
                "par", sub_agents=[echo("a", 4), SequentialAgent("s", sub_agents=[echo("b"), echo("c")])]
            ),
        ],
        max_iterations=2,
    ),
    "a loop in a parallel agent in a loop": lambda echo: LoopAgent(
        "outer",
        sub_agents=[
            echo("w"),
            ParallelAgent(
                "side",
                sub_agents=[
                    LoopAgent("inner", sub_agents=[echo("a"), echo("b", 5)], max_iterations=2),
                    echo("x", 4),
                ],
            ),
        ],
        max_iterations=2,
    ),
    "a transfer to a loop": lambda echo: handing_over(
        LoopAgent("loop", sub_agents=[echo("a"), echo("b", 4)], max_iterations=2)
    ),
    "a transfer to a parallel agent": lambda echo: handing_over(
        ParallelAgent(
            "par", sub_agents=[echo("a"), SequentialAgent("s", sub_agents=[echo("b"), echo("c", 4)])]
        )
    ),
    "loops in a sequence": lambda echo: SequentialAgent(
        "seq",
        sub_agents=[
            LoopAgent("l1", sub_agents=[echo("a"), echo("b")], max_iterations=2),
            LoopAgent("l2", sub_agents=[echo("c", 5), echo("d")], max_iterations=2),
            echo("z"),
        ],
    ),
}


def conversation(session: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Per branch, the messages the agents gave (who, role, text, call ids), in order."""
    by_branch: dict[str, list[tuple[Any, ...]]] = {}
    for e in session.events:
        message = e.message
        if e.author != "user" and message is not None:
            calls_made = tuple(c.id for c in message.tool_calls or ())
            by_branch.setdefault(e.branch, []).append((e.author, message.role, message.content, calls_made))
    return by_branch


@pytest.mark.parametrize("shape", list(NESTED))
async def test_a_run_cut_after_any_event_and_resumed_holds_the_conversation_of_one_never_cut(
    store: SessionService, shape: str
) -> None:
    make = partial(NESTED[shape], echo)
    whole = [e async for e in Runner(make(), session_service=store).run("u", "whole", "hi")]
    expected = conversation(await store.get("u", "whole"))
    for cut in range(1, len(whole) - 1):  # after the user's message ... before the completion
        session_id = f"cut-{cut}"
        runner = Runner(make(), session_service=store)
        events, seen = runner.run("u", session_id, "hi"), 0
        async for _ in events:
            seen += 1
            if seen == cut:
                break
        await events.aclose()
        [e async for e in runner.resume("u", session_id)]
        assert conversation(await store.get("u", session_id)) == expected, f"cut after event {cut}"


@pytest.mark.parametrize("shape", list(NESTED))
async def test_a_run_whose_calls_wait_for_approval_holds_once_approved_the_conversation_of_one_that_did_not(
    store: SessionService, shape: str
) -> None:
    [e async for e in Runner(NESTED[shape](echo), session_service=store).run("u", "free", "hi")]
    expected = conversation(await store.get("u", "free"))
    runner = Runner(NESTED[shape](gated), session_service=store)
    events, pauses = [e async for e in runner.run("u", "gated", "hi")], 0
    while events[-1].object == ObjectType.RUNNER_PAUSED:
        pauses += 1
        answers = dict.fromkeys(events[-1].long_running_tool_ids, Approve())
        events = [e async for e in runner.run("u", "gated", approvals=answers)]
    assert pauses >= 1
    assert events[-1].object == ObjectType.RUNNER_COMPLETION
    assert conversation(await store.get("u", "gated")) == expected


async def test_an_approval_asked_under_a_transfer_is_carried_out_when_given(store: SessionService) -> None:
    # The root hands over to a sequence whose first agent asks for an approval; the answered run
    # goes on there (it used to end at once: the root, followed by other agents, was skipped).
    paid = Tool("t")
    paid.requires_approval = True
    a, b = ScriptedModel([calls(call("t", "k")), "a done"]), ScriptedModel(["b done"])
    work = SequentialAgent("work", sub_agents=[LlmAgent("a", model=a, tools=[paid]), LlmAgent("b", model=b)])
    runner = Runner(handing_over(work), session_service=store)
    assert [e.object for e in [e async for e in runner.run("u", "s", "hi")]][-1] == "runner.paused"

    events = [e async for e in runner.run("u", "s", approvals={"k": Approve()})]

    assert [summary(e) for e in events] == [
        ("tool", "a", "t", "k", '{"echo":{}}'),
        ("model", "a", "a done"),
        ("model", "b", "b done"),
        ("done", "r"),
    ]
    assert paid.calls == [{}]


@pytest.mark.parametrize("arguments", ["not json [", '["w"]', '{"agent_name": "nobody"}'])
async def test_a_failed_transfer_cut_short_is_no_hand_over_and_the_model_is_asked_again(
    store: SessionService, arguments: str
) -> None:
    # A model's transfer call with broken or hostile arguments fails (its result says why); a
    # worker that dies after that result leaves nothing handed over: the resumed run asks the
    # model again rather than crashing on the arguments or running another agent.
    bad = LlmResponse.calls(ToolCall.of("transfer_to_agent", arguments, id="x"))
    root_model, other = ScriptedModel([bad, "tried again"]), ScriptedModel([])
    root = LlmAgent("r", model=root_model, sub_agents=[LlmAgent("w", model=other)])
    runner = Runner(root, session_service=store)
    first = await cut_short(runner, lambda e: e.object == ObjectType.TOOL_RESPONSE)
    assert first[-1].error is not None

    events = await resumed(runner)

    assert [summary(e) for e in events] == [("model", "r", "tried again"), ("done", "r")]
    root_model.assert_done()
    assert other.requests == []
