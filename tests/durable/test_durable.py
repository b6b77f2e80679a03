"""A durable run in one process (DBOS on a SQLite system database of the test's own): its
events are a plain run's, stored exactly as yielded; the same run submitted twice runs once;
queued runs of one session never overlap; a system database that cannot be reached is one line."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOS

from adk import Approve, FunctionTool, LlmAgent, ObjectType, Runner
from adk.durable import DurableError, DurableRunner, WorkflowMismatchError, launch, workflow_id
from adk.durable.budgets import DurableBudgetStore, durable_budgets
from adk.durable.replay import ReplayStore
from adk.errors import ApprovalError
from adk.events import Event
from adk.limits import Budget
from adk.sessions.memory import InMemorySessionService
from adk.testing import ScriptedModel, call_tool

Launch = Callable[[DurableRunner], Coroutine[Any, Any, None]]


def _agent(model: ScriptedModel, effects: list[int]) -> LlmAgent:
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: one.
            b: the other.
        """
        effects.append(a + b)
        return a + b

    return LlmAgent("calc", model=model, tools=[add])


def _script() -> ScriptedModel:
    return ScriptedModel([call_tool("add", a=1, b=2, call_id="c1"), "three"])


def _shape(events: list[Event]) -> list[tuple[str, str, str]]:
    return [(str(e.object), e.author, e.message.content if e.message else "") for e in events]


async def test_a_durable_run_yields_a_plain_run_s_events_and_stores_them_as_yielded(started: Launch) -> None:
    store = InMemorySessionService()
    effects: list[int] = []
    runner = DurableRunner(_agent(_script(), effects), session_service=store, name="calc-plain")
    await started(runner)
    events = [e async for e in runner.run("u", "s", "1+2?", invocation_id="i1")]
    plain_runner = Runner(_agent(_script(), []), session_service=InMemorySessionService())
    plain = [e async for e in plain_runner.run("u", "s", "1+2?")]
    session = await store.get("u", "s")
    assert session is not None
    assert session.events == events
    assert _shape(events) == _shape(plain)
    assert {e.invocation_id for e in events} == {"i1"}
    assert effects == [3]


async def test_a_streamed_durable_run_yields_a_plain_streamed_run_s_partial_chunks(started: Launch) -> None:
    store = InMemorySessionService()
    runner = DurableRunner(_agent(_script(), []), session_service=store, name="calc-streamed")
    await started(runner)
    events = [e async for e in runner.run("u", "s", "1+2?", invocation_id="i1", stream=True)]
    plain_runner = Runner(_agent(_script(), []), session_service=InMemorySessionService())
    plain = [e async for e in plain_runner.run("u", "s", "1+2?", stream=True)]
    session = await store.get("u", "s")
    assert session is not None
    assert session.events == [e for e in events if not e.is_partial]
    assert [(e.is_partial, e.content) for e in events] == [(e.is_partial, e.content) for e in plain]
    assert [e.content for e in events if e.is_partial] == ["", "three"]  # the call's arguments, the answer


async def test_a_durable_run_stores_the_caller_s_state_delta_first_as_a_plain_run_does(
    started: Launch,
) -> None:
    store = InMemorySessionService()
    runner = DurableRunner(_agent(_script(), []), session_service=store, name="calc-state")
    await started(runner)
    events = [e async for e in runner.run("u", "s", "1+2?", state_delta={"theme": "dark", "n": 1})]
    plain_runner = Runner(_agent(_script(), []))
    plain = [e async for e in plain_runner.run("u", "s", "1+2?", state_delta={"theme": "dark", "n": 1})]
    session = await store.get("u", "s")
    assert session is not None
    assert session.events == events
    assert [(e.object, e.actions.state_delta) for e in events] == [
        (e.object, e.actions.state_delta) for e in plain
    ]
    assert session.state == {"theme": "dark", "n": 1}


async def test_the_same_run_started_twice_runs_once(started: Launch) -> None:
    store = InMemorySessionService()
    effects: list[int] = []
    model = _script()
    runner = DurableRunner(_agent(model, effects), session_service=store, name="calc-twice")
    await started(runner)
    first = [e async for e in runner.run("u", "s", "1+2?", invocation_id="i1")]
    again = [e async for e in runner.run("u", "s", "1+2?", invocation_id="i1")]
    handle = await runner.submit("u", "s", "1+2?", invocation_id="i1")
    assert await handle.result() == "runner.completion"
    assert again == []
    assert len(model.requests) == 2 and effects == [3]
    assert await handle.events() == first


async def test_queued_runs_of_one_session_never_overlap(started: Launch) -> None:
    active: list[int] = [0]
    most: list[int] = [0]

    async def answer(request: Any) -> str:
        active[0] += 1
        most[0] = max(most[0], active[0])
        await asyncio.sleep(0)  # lets another run in, were it started
        active[0] -= 1
        return "ok"

    model = ScriptedModel([answer] * 6)
    store = InMemorySessionService()
    runner = DurableRunner(LlmAgent("one", model=model), session_service=store, name="one-session")
    await started(runner)
    handles = [await runner.submit("u", "s", f"m{i}", invocation_id=f"i{i}") for i in range(6)]
    assert [await h.result() for h in handles] == ["runner.completion"] * 6
    assert most[0] == 1


async def test_a_system_database_that_cannot_be_reached_is_one_line() -> None:
    with pytest.raises(DurableError) as raised:
        await launch("postgresql://postgres:secret@127.0.0.1:1/nowhere", executor_id="test")
    line = str(raised.value)
    assert "\n" not in line and "secret" not in line
    assert line.startswith(
        "cannot start DBOS on its system database postgresql://postgres:***@127.0.0.1:1/nowhere: "
    )


def _payer(model: ScriptedModel, paid: list[int]) -> LlmAgent:
    def pay(amount: int) -> str:
        """Pay.

        Args:
            amount: how much.
        """
        paid.append(amount)
        return f"paid {amount}"

    return LlmAgent("payer", model=model, tools=[FunctionTool(pay, requires_approval=True)])


async def test_a_paused_run_is_answered_by_a_workflow_of_its_own(started: Launch) -> None:
    store = InMemorySessionService()
    paid: list[int] = []
    script = [call_tool("pay", amount=5, call_id="p1"), "Paid."]
    runner = DurableRunner(_payer(ScriptedModel(script), paid), session_service=store, name="payer")
    await started(runner)
    paused = [e async for e in runner.run("u", "s", "pay 5", invocation_id="i1")]
    assert paused[-1].object == ObjectType.RUNNER_PAUSED and paid == []
    answered = [e async for e in runner.run("u", "s", approvals={"p1": Approve()})]
    assert paid == [5]
    session = await store.get("u", "s")
    assert session is not None and session.events == paused + answered
    plain = Runner(_payer(ScriptedModel(script), []))
    expected = [e async for e in plain.run("u", "s", "pay 5")]
    expected += [e async for e in plain.run("u", "s", approvals={"p1": Approve()})]
    assert _shape(paused + answered) == _shape(expected)
    with pytest.raises(ApprovalError, match=r"^session 's' of user 'u' has no paused run: no call waits"):
        [e async for e in runner.run("u", "s", approvals={"p1": Approve()})]
    assert paid == [5]


async def test_answers_submitted_to_the_queue_resume_the_paused_run(started: Launch) -> None:
    store = InMemorySessionService()
    paid: list[int] = []
    script = [call_tool("pay", amount=7, call_id="p1"), "Paid."]
    runner = DurableRunner(_payer(ScriptedModel(script), paid), session_service=store, name="payer-queued")
    await started(runner)
    paused = await runner.submit("u", "s", "pay 7", invocation_id="i1")
    assert await paused.result() == "runner.paused"
    answer = await runner.submit("u", "s", approvals={"p1": Approve()})
    assert answer.workflow_id.startswith("adk:u:s:i1:") and answer.invocation_id == "i1"
    assert await answer.result() == "runner.completion"
    assert paid == [7]
    assert [str(e.object) for e in await answer.events()][-3:] == [
        "tool.response",
        "chat.completion",
        "runner.completion",
    ]


async def test_a_replay_that_no_longer_matches_its_record_stops_naming_the_workflow(started: Launch) -> None:
    store = InMemorySessionService()
    runner = DurableRunner(_agent(_script(), []), session_service=store, name="calc-mismatch")
    await started(runner)
    recorded = [e async for e in runner.run("u", "s", "1+2?", invocation_id="i1")]
    replay = ReplayStore(store, "adk:u:s:i1", "i1", None)
    session = await replay.acquire("u", "s", "owner")
    assert session.events == [] and replay.recorded == recorded
    await replay.append_event(session, Event.new("i1", "user", object=recorded[0].object))  # matches: adopted
    assert session.events == [recorded[0]]
    with pytest.raises(WorkflowMismatchError) as raised:
        await replay.append_event(session, Event.new("i1", "calc", object=ObjectType.ERROR))
    assert str(raised.value) == (
        "workflow 'adk:u:s:i1' no longer matches its record: event 2 of session 's' was chat.completion"
        " by 'calc', the run now makes error by 'calc' (was the agent changed?); nothing was run again"
    )
    stored = await store.get("u", "s")
    assert stored is not None and stored.events == recorded


async def test_a_stored_budget_spends_in_a_durable_run_what_it_spends_in_a_plain_one(started: Launch) -> None:
    """A runner's stored `Budget` is metered through steps (its store wrapped once): the same
    use and the same refusal of the second model call as a plain run."""
    store, plain_store = InMemorySessionService(), InMemorySessionService()
    budget = Budget(model_calls=1, scope="session", store=store)
    agent = _agent(_script(), [])
    runner = DurableRunner(agent, session_service=store, callbacks=[budget], name="calc-budget")
    await started(runner)
    events = [e async for e in runner.run("u", "s", "1+2?", invocation_id="i1")]
    plain_budget = Budget(model_calls=1, scope="session", store=plain_store)
    plain_runner = Runner(_agent(_script(), []), session_service=plain_store, callbacks=[plain_budget])
    plain = [e async for e in plain_runner.run("u", "s", "1+2?")]
    wrapped = budget.store
    durable_budgets([budget])  # again: nothing more
    assert isinstance(wrapped, DurableBudgetStore) and wrapped.store is store and budget.store is wrapped
    assert _shape(events) == _shape(plain)
    assert events[-1].error is not None and events[-1].error.type == "BudgetExceededError"
    key = "budget:session:1:u:s"  # the user id's length first (adk.limits.budget)
    assert await store.budget_used(key) == await plain_store.budget_used(key)
    steps = [s["function_name"] for s in await DBOS.list_workflow_steps_async(workflow_id("u", "s", "i1"))]
    assert steps[:3] == ["adk.lease", "adk.budget.used:budget", "adk.budget.reserve:budget"]
    assert steps.count("adk.model:scripted") == 1  # the second call was refused before its step
