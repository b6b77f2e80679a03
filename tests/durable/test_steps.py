"""Every model attempt and every tool call of a durable run is a step, whichever model or tool
makes it: a model a hook falls back to, an MCP server's tool, the calls of two agent tools'
agents made at once, a transferred-to agent's; and a `ParallelAgent`'s branches, whose steps
start in another order when the run is recovered than when it ran.

Recovery is made in process by forking the workflow past its last step (DBOS runs it again over
every recorded step, as a recovered worker does): nothing is called again, and the session
holds one run's events, those a plain run makes.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")
pytest.importorskip("mcp")

from dbos import DBOS

from adk import BaseAgent, Cont, LlmAgent, LlmResponse, ParallelAgent, Runner
from adk.context import ModelContext, RunContext
from adk.durable import DurableRunner, workflow_id
from adk.durable.replay import ReplayStore
from adk.events import Choice, Event, Message, ToolCall
from adk.mcp import McpToolset
from adk.models.base import LlmRequest
from adk.recovery import FallbackModels
from adk.sessions.memory import InMemorySessionService
from adk.testing import ScriptedModel, call_tool, transfer_to

ROOT = Path(__file__).resolve().parents[2]

Launch = Callable[[DurableRunner], Coroutine[Any, Any, None]]


async def _recovered(wfid: str) -> Any:
    """Run workflow `wfid` again over every step it recorded, as a recovery does; its result."""
    handle = await DBOS.fork_workflow_async(wfid, 1000)
    return await handle.get_result()


async def _steps(wfid: str) -> list[str]:
    return [s["function_name"] for s in await DBOS.list_workflow_steps_async(wfid)]


def _shape(events: list[Event]) -> list[tuple[str, str, str, str]]:
    return [(str(e.object), e.author, e.branch, e.message.content if e.message else "") for e in events]


async def _run_and_recover(
    runner: DurableRunner, store: InMemorySessionService, text: str, seen: Seen | None = None
) -> list[Event]:
    """The run's complete events, checked to be the session's after the run and after its
    recovery; with `seen`, the recovery made each as the run had (before it adopted the stored one)."""
    events = [e async for e in runner.run("u", "s", text, invocation_id="i1") if not e.is_partial]
    session = await store.get("u", "s")
    assert session is not None and session.events == events
    made = len(seen.made) if seen is not None else 0
    assert await _recovered(workflow_id("u", "s", "i1")) == "runner.completion"
    session = await store.get("u", "s")
    assert session is not None and session.events == events  # nothing stored twice, nothing changed
    if seen is not None:
        assert seen.made[made:] == seen.made[:made]
    return events


async def _plain(agent: BaseAgent, text: str, *callbacks: Seen) -> list[tuple[str, str, str, str]]:
    """A plain run's events (with the runner's `callbacks`)."""
    return _shape(
        [e async for e in Runner(agent, callbacks=callbacks).run("u", "s", text) if not e.is_partial]
    )


def _interleaved(events: list[Event], plain: list[tuple[str, str, str, str]]) -> None:
    """`events` are a plain run's, each branch's in order (how concurrent branches interleave is
    each run's own)."""
    made = _shape(events)
    assert sorted(made) == sorted(plain)
    for branch in {s[2] for s in plain}:
        assert [s for s in made if s[2] == branch] == [s for s in plain if s[2] == branch]


def _counted(effects: list[str]) -> Callable[..., str]:
    def effect(note: str) -> str:
        """Note something: an effect that must happen once.

        Args:
            note: what to note.
        """
        effects.append(note)
        return f"noted {note}"

    return effect


def _falling_back() -> tuple[LlmAgent, ScriptedModel, ScriptedModel]:
    primary = ScriptedModel([RuntimeError("down")], name="primary")
    backup = ScriptedModel(["from the backup"], name="backup")
    return LlmAgent("fb", model=primary, callbacks=[FallbackModels([backup])]), primary, backup


async def test_a_model_a_hook_falls_back_to_is_a_step(started: Launch) -> None:
    store = InMemorySessionService()
    agent, primary, backup = _falling_back()
    runner = DurableRunner(agent, session_service=store, name="fallback")
    await started(runner)
    events = await _run_and_recover(runner, store, "hi")
    assert await _steps(workflow_id("u", "s", "i1")) == [
        "adk.lease",
        "adk.model:primary",
        "adk.hook:FallbackModels.on_model_error",
        "adk.model:backup",
    ]
    assert len(primary.requests) == 1 and len(backup.requests) == 1  # neither called again
    assert _shape(events) == await _plain(_falling_back()[0], "hi")


def _noting(notes: Path) -> tuple[LlmAgent, McpToolset]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ADK_MCP_NOTES": str(notes)}
    toolset = McpToolset.stdio(sys.executable, "-m", "tests.durable.mcp_counter", env=env, name="counter")
    model = ScriptedModel([call_tool("note", text="once", call_id="c1"), "noted"], name="m")
    return LlmAgent("mcp", model=model, tools=[toolset]), toolset


async def test_an_mcp_server_s_tool_call_is_a_step(started: Launch, tmp_path: Path) -> None:
    store = InMemorySessionService()
    notes = tmp_path / "notes"
    agent, toolset = _noting(notes)
    runner = DurableRunner(agent, session_service=store, name="mcp")
    await started(runner)
    try:
        events = await _run_and_recover(runner, store, "note it")
    finally:
        await toolset.close()
    assert notes.read_text().splitlines() == ["once"]  # the server's effect, made once
    assert await _steps(workflow_id("u", "s", "i1")) == [
        "adk.lease",
        "adk.model:m",
        "adk.tool.start:note",
        "adk.tool:note",
        "adk.model:m",
    ]
    plain, plain_toolset = _noting(tmp_path / "plain-notes")
    try:
        assert _shape(events) == await _plain(plain, "note it")
    finally:
        await plain_toolset.close()


class Holding:
    """Holds calls back, as hooks that wait on I/O would: the model call of `calls[0]` until
    `calls[1]`'s model has answered, and the answer of `answers[0]` until `answers[1]`'s has
    reached the runner (`Seen`); each named by its agent, or by the request it was asked. So the
    steps and the events of concurrent lanes come in one order when the run is made, and would
    come in another when it is recovered (each answer then at once, from the record)."""

    def __init__(self, calls: tuple[str, str], answers: tuple[str, str]) -> None:
        self.calls, self.answers = calls, answers
        self.answered = asyncio.Event()
        self.stored = asyncio.Event()

    async def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        if self.calls[0] in _names(ctx):
            await self.answered.wait()
        return Cont(ctx)

    async def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        if self.calls[1] in _names(ctx):
            self.answered.set()
        if self.answers[0] in _names(ctx) and not self.stored.is_set():
            await self.stored.wait()
        return response


def _names(ctx: ModelContext) -> tuple[str, str]:
    return ctx.agent.name, str(ctx.request.messages[-1].content)


class Seen:
    """The runner's callback that tells `holding` when `holding.answers[1]` first answered, and
    notes what the run made of each complete event before it was stored (or, in a recovery,
    adopted): a recovered run must make the same."""

    def __init__(self, holding: Holding) -> None:
        self.holding = holding
        self.made: list[tuple[str, str, str]] = []

    def on_event(self, event: Event, ctx: RunContext) -> Event:
        early = self.holding.answers[1]
        answer = event.message is not None and event.message.role == "assistant"
        if answer and early in (event.author, event.content.removeprefix("answer to ")):
            self.holding.stored.set()
        if not event.is_partial:
            self.made.append((event.author, event.branch, event.content))
        return event


def _asking_two() -> tuple[LlmAgent, list[ScriptedModel], Seen]:
    holding = Holding(calls=("second", "first"), answers=("first", "second"))
    first_model = ScriptedModel(["the first's answer"], name="first-model")
    second_model = ScriptedModel(["the second's answer"], name="second-model")
    first = LlmAgent("first", model=first_model, callbacks=[holding])
    second = LlmAgent("second", model=second_model, callbacks=[holding])
    both = LlmResponse.calls(
        ToolCall.of("first", '{"request": "one"}', id="t1"),
        ToolCall.of("second", '{"request": "two"}', id="t2"),
    )
    boss_model = ScriptedModel([both, "both answered"], name="boss-model")
    models = [boss_model, first_model, second_model]
    return LlmAgent("boss", model=boss_model, tools=[first, second]), models, Seen(holding)


async def test_agent_tools_called_at_once_make_their_calls_as_steps_of_their_lanes(started: Launch) -> None:
    store = InMemorySessionService()
    agent, models, seen = _asking_two()
    runner = DurableRunner(agent, session_service=store, callbacks=[seen], name="agent-tools")
    await started(runner)
    events = await _run_and_recover(runner, store, "ask both", seen)
    assert [len(m.requests) for m in models] == [2, 1, 1]  # none called again
    steps = await _steps(workflow_id("u", "s", "i1"))
    assert [s for s in steps if s.startswith("adk.model")] == [
        "adk.model:boss-model",
        "adk.model:first-model@/0",  # the first call's agent, on the response's first lane
        "adk.model:second-model@/1",
        "adk.model:boss-model",
    ]
    answers = [e.author for e in events if e.author in ("first", "second")]
    assert answers == ["second", "first"]  # as stored: the second agent's answer first
    plain, _, plain_seen = _asking_two()
    _interleaved(events, await _plain(plain, "ask both", plain_seen))
    results = [e.message.content for e in events if e.message is not None and e.message.role == "tool"]
    assert results == ["the first's answer", "the second's answer"]


def _answer_to(request: LlmRequest) -> str:
    return f"answer to {request.messages[-1].content}"


def _asking_one_twice() -> tuple[LlmAgent, list[ScriptedModel], Seen]:
    holding = Holding(calls=("two", "one"), answers=("one", "two"))
    helper_model = ScriptedModel([_answer_to, _answer_to], name="helper-model")
    helper = LlmAgent("helper", model=helper_model, callbacks=[holding])
    twice = LlmResponse.calls(
        ToolCall.of("helper", '{"request": "one"}', id="t1"),
        ToolCall.of("helper", '{"request": "two"}', id="t2"),
    )
    boss_model = ScriptedModel([twice, "both answered"], name="boss-model")
    return LlmAgent("boss", model=boss_model, tools=[helper]), [boss_model, helper_model], Seen(holding)


async def test_one_agent_tool_called_twice_at_once_recovers_each_call_s_events(started: Launch) -> None:
    """The two calls' events share a branch and an author: each lane takes its own back."""
    store = InMemorySessionService()
    agent, models, seen = _asking_one_twice()
    runner = DurableRunner(agent, session_service=store, callbacks=[seen], name="agent-tool-twice")
    await started(runner)
    events = await _run_and_recover(runner, store, "ask twice", seen)
    assert [len(m.requests) for m in models] == [2, 2]
    answers = [e.content for e in events if e.author == "helper"]
    assert answers == ["answer to two", "answer to one"]  # as stored: the second call's first
    results = [e.message.content for e in events if e.message is not None and e.message.role == "tool"]
    assert results == ["answer to one", "answer to two"]
    plain, _, plain_seen = _asking_one_twice()
    assert _shape(events) == await _plain(plain, "ask twice", plain_seen)


def _handing_over(effects: list[str]) -> tuple[LlmAgent, list[ScriptedModel]]:
    billing_model = ScriptedModel(
        [call_tool("effect", note="refund", call_id="r1"), "Refunded."], name="billing-m"
    )
    billing = LlmAgent("billing", model=billing_model, tools=[_counted(effects)])
    desk_model = ScriptedModel([transfer_to("billing", call_id="t1")], name="desk-m")
    return LlmAgent("desk", model=desk_model, sub_agents=[billing]), [desk_model, billing_model]


async def test_a_transferred_to_agent_s_calls_are_steps(started: Launch) -> None:
    store = InMemorySessionService()
    effects: list[str] = []
    agent, models = _handing_over(effects)
    runner = DurableRunner(agent, session_service=store, name="transfer")
    await started(runner)
    events = await _run_and_recover(runner, store, "refund me")
    assert [len(m.requests) for m in models] == [1, 2] and effects == ["refund"]
    assert await _steps(workflow_id("u", "s", "i1")) == [
        "adk.lease",
        "adk.model:desk-m",
        "adk.model:billing-m",
        "adk.tool.start:effect",
        "adk.tool:effect",
        "adk.model:billing-m",
    ]  # the transfer itself is no step: it only notes where the turn goes, and is made again
    assert _shape(events) == await _plain(_handing_over([])[0], "refund me")


def _branches(effects: list[str]) -> tuple[ParallelAgent, list[ScriptedModel], Seen]:
    holding = Holding(calls=("a", "b"), answers=("b", "a"))
    models = []
    branches = []
    for name in ("a", "b"):
        model = ScriptedModel(
            [call_tool("effect", note=name, call_id=f"{name}1"), f"{name} done"], name=f"m{name}"
        )
        models.append(model)
        branches.append(LlmAgent(name, model=model, tools=[_counted(effects)], callbacks=[holding]))
    return ParallelAgent("both", sub_agents=branches), models, Seen(holding)


async def test_a_parallel_agent_s_branches_recover_in_the_order_they_ran(started: Launch) -> None:
    store = InMemorySessionService()
    effects: list[str] = []
    agent, models, seen = _branches(effects)
    runner = DurableRunner(agent, session_service=store, callbacks=[seen], name="parallel")
    await started(runner)
    events = await _run_and_recover(runner, store, "go", seen)
    assert [len(m.requests) for m in models] == [2, 2] and sorted(effects) == ["a", "b"]
    steps = await _steps(workflow_id("u", "s", "i1"))
    assert steps.index("adk.model:mb@/b") < steps.index("adk.model:ma@/a")  # b's call was made first
    assert sorted(steps) == sorted(
        ["adk.lease"]
        + [f"adk.hook:Holding.{hook}@/{n}" for n in "ab" for hook in ("before_model", "after_model") * 2]
        + [f"adk.model:m{n}@/{n}" for n in "ab" for _ in range(2)]
        + [f"adk.tool{kind}:effect@/{n}" for n in "ab" for kind in (".start", "")]
    )
    plain, _, plain_seen = _branches([])
    _interleaved(events, await _plain(plain, "go", plain_seen))


def _answer(author: str, text: str, branch: str = "boss.helper") -> Event:
    return Event.new("i1", author, branch=branch, choices=[Choice(message=Message.assistant(text))])


async def _waits(replay: ReplayStore, event: Event) -> bool:
    """Whether a lane handing `event` on waits (it goes on when the record allows)."""
    handing = asyncio.ensure_future(replay.handing(event))
    await asyncio.sleep(0)  # one turn of the loop: no real wait
    waits = not handing.done()
    handing.cancel()
    return waits


async def test_a_lane_hands_on_the_event_the_record_holds_next_by_its_text() -> None:
    """Two calls of one agent tool: same branch and author; each lane's answer waits for its
    own turn. An answer whose text no later stored event has (an `on_event` edited it before it
    was stored) is taken as the next of its kind, rather than held forever."""
    replay = ReplayStore(InMemorySessionService(), "wf", "i1", None)
    replay.recorded = [_answer("helper", "answer to two"), _answer("helper", "answer to one")]
    assert await _waits(replay, _answer("helper", "answer to one"))
    assert not await _waits(replay, _answer("helper", "answer to two"))
    assert not await _waits(replay, _answer("helper", "answer to one"))  # its turn now
    edited = ReplayStore(InMemorySessionService(), "wf", "i1", None)
    edited.recorded = [_answer("helper", "ANSWER TO TWO"), _answer("other", "x", "boss.other")]
    assert await _waits(edited, _answer("other", "x", "boss.other"))
    assert not await _waits(edited, _answer("helper", "answer to two"))
    assert not await _waits(edited, _answer("other", "x", "boss.other"))
