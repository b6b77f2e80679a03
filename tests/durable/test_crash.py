"""A worker SIGKILLed in a model call or a tool call, restarted with the same executor id:
every run completes by itself, its events are exactly a plain run's, nothing is stored twice,
no step runs twice, and the non-idempotent tool's effect happens once (counted here)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOSClient

from adk import Approve
from adk.durable import DurableRunner, launch, shutdown
from adk.durable.runner import enqueue_options, workflow_id
from adk.events import Message
from adk.runner import Runner
from adk.sessions.budgets import BudgetStore
from adk.sessions.memory import InMemorySessionService
from adk.sessions.postgres import PostgresSessionService
from adk.tools import FunctionTool
from tests.durable import crash_agent
from tests.durable._fleet import WAIT, Worker, database

RUNS = 3
STEPS = ["adk.lease", "adk.model:planned", "adk.tool.start:effect", "adk.tool:effect", "adk.model:planned"]
"""A run's steps without callbacks; the `crash` agent's `Pause` adds its after_tool's answer."""
PAUSED = [*STEPS[:4], "adk.hook:Pause.after_tool", STEPS[4]]


def _shape(events: list[Any]) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [
        (
            str(e.object),
            e.author,
            e.message.content if e.message else "",
            tuple(c.function.name for c in e.tool_calls),
        )
        for e in events
    ]


def _plain(note: str) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """A plain run's events (in memory, no worker): what the durable run must store."""
    runner = Runner(crash_agent.LlmAgent("crash", model=crash_agent.Planned(), tools=[_stand_in()]))
    return _shape(runner.run_sync("u", "plain", note))


def _stand_in() -> FunctionTool[..., Any]:
    return FunctionTool(_no_effect, name="effect")


async def _no_effect(note: str) -> str:
    """Stands for `effect` without writing the counter.

    Args:
        note: what to write.
    """
    return f"wrote {note}"


async def _stored(url: str, runs: int = RUNS) -> dict[str, list[Any]]:
    store = PostgresSessionService(url)
    try:
        found = {}
        for i in range(runs):
            session = await store.get("u", f"s{i}")
            assert session is not None
            found[f"s{i}"] = session.events
        return found
    finally:
        await store.close()


def _id(i: int) -> str:
    return workflow_id("u", f"s{i}", f"inv{i}")


def _enqueue(client: DBOSClient, i: int) -> None:
    """Run `i` on session `s{i}`, enqueued by a process without the agent."""
    options = enqueue_options("crash", "u", f"s{i}", f"inv{i}")
    client.enqueue(options, "crash", "u", f"s{i}", Message.user(f"n{i}"), f"inv{i}")


def _result(client: DBOSClient, i: int | str) -> Any:
    """The result of run `i` (or of the workflow of that id), or a failure after `WAIT` seconds
    (a run nobody recovers)."""
    wfid = _id(i) if isinstance(i, int) else i
    with ThreadPoolExecutor(1) as thread:
        waiting = thread.submit(client.retrieve_workflow(wfid).get_result, polling_interval_sec=0.05)
        try:
            return waiting.result(timeout=WAIT)
        except TimeoutError:
            client.cancel_workflow(wfid)  # the thread's wait ends with it
            raise AssertionError(f"run {wfid} did not end in {WAIT}s") from None


def _steps(client: DBOSClient, i: int | str) -> list[str]:
    return [step["function_name"] for step in client.list_workflow_steps(_id(i) if isinstance(i, int) else i)]


@pytest.mark.parametrize("where", ["model1", "tool", "after_tool", "append", "model2"])
def test_a_killed_worker_s_runs_complete_when_it_comes_back(where: str, tmp_path: Path) -> None:
    counter = tmp_path / "effects"
    env = {"ADK_TEST_COUNTER": str(counter)}
    with database() as url:
        first = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": where})
        again: Worker | None = None
        client = DBOSClient(system_database_url=url)
        try:
            first.until("adk worker w1: taking runs")
            for i in range(RUNS):
                _enqueue(client, i)
            first.until(f"BLOCKED {where}", RUNS)
            first.kill()
            again = Worker(url, "w1", env)  # no block: the runs go on from where they were cut
            results = [_result(client, i) for i in range(RUNS)]
            steps = [_steps(client, i) for i in range(RUNS)]
        finally:
            client.destroy()
            first.stop()
            if again is not None:
                again.stop()
        stored = asyncio.run(_stored(url))
    assert results == ["runner.completion"] * RUNS
    made = STEPS if where == "tool" else PAUSED  # a call that failed has no after_tool
    assert steps == [made] * RUNS  # each step once: none made again after the kill
    effects = sorted(counter.read_text().splitlines())
    assert effects == [f"n{i}" for i in range(RUNS)]  # once each: at most once, and here exactly once
    for i in range(RUNS):
        events = stored[f"s{i}"]
        assert len({e.id for e in events}) == len(events)
        expected = _plain(f"n{i}")
        if where == "tool":  # cut mid-body, not idempotent: not run again, the model is told
            told = "Error: ToolInterruptedError: the call to tool 'effect' was interrupted"
            assert _shape(events)[:2] == expected[:2]
            assert _shape(events)[2][2].startswith(told)
            assert _shape(events)[3][2].startswith(f"done: {told}")
            assert _shape(events)[4] == expected[4]
        else:
            assert _shape(events) == expected


def test_a_killed_worker_s_parallel_branches_recover_around_the_step_it_left_in_flight(
    tmp_path: Path,
) -> None:
    """Branch `a`'s first model step is in flight at the kill, after it branch `b`'s steps are
    recorded and its events stored. The restarted worker makes `a`'s step again under its number
    (a gap in the record), replays `b`'s at theirs, and stores `a`'s events after `b`'s."""
    counter = tmp_path / "effects"
    env = {"ADK_TEST_COUNTER": str(counter), "ADK_TEST_SHAPE": "parallel"}
    with database() as url:
        first = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": "parallel"})
        again: Worker | None = None
        client = DBOSClient(system_database_url=url)
        try:
            first.until("adk worker w1: taking runs")
            for i in range(RUNS):
                _enqueue(client, i)
            first.until("BLOCKED parallel", RUNS)
            first.kill()
            again = Worker(url, "w1", env)
            results = [_result(client, i) for i in range(RUNS)]
            steps = [_steps(client, i) for i in range(RUNS)]
        finally:
            client.destroy()
            first.stop()
            if again is not None:
                again.stop()
        stored = asyncio.run(_stored(url))
    assert results == ["runner.completion"] * RUNS
    branch = ["adk.model:branch-{0}@/{0}", "adk.tool.start:effect@/{0}", "adk.tool:effect@/{0}"]
    made = ["adk.lease", *(s.format(b) for b in "ab" for s in [*branch, branch[0]])]
    for i in range(RUNS):
        assert sorted(steps[i]) == sorted(made)  # each once
        assert steps[i][1] == "adk.model:branch-a@/a"  # under the number it had when it was cut
    assert sorted(counter.read_text().splitlines()) == sorted(f"{b} n{i}" for b in "ab" for i in range(RUNS))
    for i in range(RUNS):
        events = stored[f"s{i}"]
        assert len({e.id for e in events}) == len(events)
        plain = Runner(crash_agent.branches(_stand_in())).run_sync("u", "plain", f"n{i}")
        for b in ("crash.a", "crash.b"):  # how the branches interleave is each run's own
            assert _shape([e for e in events if e.branch == b]) == _shape([e for e in plain if e.branch == b])
        assert [e.branch for e in events if e.branch][:2] == ["crash.b"] * 2  # stored before the kill


@pytest.mark.parametrize("opened", [False, True])
def test_a_hook_s_decision_is_replayed_when_the_restarted_worker_would_decide_otherwise(
    opened: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate reads the clock: closed (Halt) before the kill and open after it, or the other
    way round. The recovered run keeps the first worker's decision: no step mismatch, the tool's
    effect as that decision said."""
    counter = tmp_path / "effects"
    until = {True: "1e12", False: "0"}  # open until far ahead; closed since 1970
    env = {"ADK_TEST_COUNTER": str(counter), "ADK_TEST_SHAPE": "gate"}
    with database() as url:
        first = Worker(url, "w1", {**env, "ADK_TEST_OPEN_UNTIL": until[opened], "ADK_TEST_BLOCK": "model2"})
        again: Worker | None = None
        client = DBOSClient(system_database_url=url)
        try:
            first.until("adk worker w1: taking runs")
            _enqueue(client, 0)
            first.until("BLOCKED model2")
            first.kill()
            again = Worker(url, "w1", {**env, "ADK_TEST_OPEN_UNTIL": until[not opened]})
            result, steps = _result(client, 0), _steps(client, 0)
        finally:
            client.destroy()
            first.stop()
            if again is not None:
                again.stop()
        events = asyncio.run(_stored(url, 1))["s0"]
    ran = ["adk.tool.start:effect", "adk.tool:effect"] if opened else []
    assert result == "runner.completion"
    assert steps == [*STEPS[:2], "adk.hook:Gate.before_tool", *ran, STEPS[-1]]
    assert (counter.read_text().splitlines() if counter.exists() else []) == (["n0"] if opened else [])
    monkeypatch.setenv("ADK_TEST_COUNTER", str(tmp_path / "plain-effects"))
    monkeypatch.setenv("ADK_TEST_OPEN_UNTIL", until[opened])
    plain = Runner(crash_agent.make("gate")).run_sync("u", "plain", "n0")
    assert _shape(events) == _shape(plain)


def test_a_worker_recovers_the_runs_of_one_that_never_comes_back(tmp_path: Path) -> None:
    counter = tmp_path / "effects"
    env = {"ADK_TEST_COUNTER": str(counter)}
    with database() as url:
        gone = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": "model2"})
        other: Worker | None = None
        client = DBOSClient(system_database_url=url)
        try:
            gone.until("adk worker w1: taking runs")
            for i in range(RUNS):
                _enqueue(client, i)
            gone.until("BLOCKED model2", RUNS)
            gone.kill()
            other = Worker(url, "w2", env, "--recover", "w1")
            results = [_result(client, i) for i in range(RUNS)]
            steps = [_steps(client, i) for i in range(RUNS)]
            executors = [client.retrieve_workflow(_id(i)).get_status().executor_id for i in range(RUNS)]
        finally:
            client.destroy()
            gone.stop()
            if other is not None:
                other.stop()
        stored = asyncio.run(_stored(url))
    assert results == ["runner.completion"] * RUNS
    assert steps == [PAUSED] * RUNS
    assert executors == ["w2"] * RUNS
    assert sorted(counter.read_text().splitlines()) == [f"n{i}" for i in range(RUNS)]
    assert [_shape(stored[f"s{i}"]) for i in range(RUNS)] == [_plain(f"n{i}") for i in range(RUNS)]


def test_a_recorded_call_s_escalation_holds_when_the_run_is_recovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADK_TEST_COUNTER", str(tmp_path / "plain-effects"))  # for the plain run here
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects"), "ADK_TEST_SHAPE": "loop"}
    with database() as url:
        first = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": "model3"})
        again: Worker | None = None
        client = DBOSClient(system_database_url=url)
        try:
            first.until("adk worker w1: taking runs")
            _enqueue(client, 0)
            first.until("BLOCKED model3")
            first.kill()
            again = Worker(url, "w1", env)
            result = _result(client, 0)
        finally:
            client.destroy()
            first.stop()
            if again is not None:
                again.stop()
        events = asyncio.run(_stored(url, 1))["s0"]
    plain = Runner(crash_agent.make("loop")).run_sync("u", "plain", "n0")
    assert result == "runner.completion"
    assert _shape(events) == _shape(plain)  # one round: the loop ended on the recorded escalation
    assert [e.actions.escalate for e in events] == [e.actions.escalate for e in plain]


def test_the_fleet_never_runs_more_than_its_concurrency(tmp_path: Path) -> None:
    active = tmp_path / "active"
    env = {
        "ADK_TEST_COUNTER": str(tmp_path / "effects"),
        "ADK_TEST_ACTIVE": str(active),
        "ADK_TEST_HOLD": "0.05",
    }
    runs = 8
    with database() as url:
        workers = [Worker(url, f"w{n}", env, "--concurrency", "2") for n in (1, 2)]
        client = DBOSClient(system_database_url=url)
        try:
            for n, worker in enumerate(workers, 1):
                worker.until(f"adk worker w{n}: taking runs")
            for i in range(runs):
                _enqueue(client, i)
            results = [_result(client, i) for i in range(runs)]
            executors = {client.retrieve_workflow(_id(i)).get_status().executor_id for i in range(runs)}
        finally:
            client.destroy()
            for worker in workers:
                worker.stop()
    running, most = 0, 0
    for mark in active.read_text().split():
        running += 1 if mark == "+" else -1
        most = max(most, running)
    assert results == ["runner.completion"] * runs
    assert most == 2  # reached, never exceeded, across both workers
    assert executors <= {"w1", "w2"}


def test_a_pause_is_answered_from_a_third_process_after_every_worker_restarted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = tmp_path / "effects"
    monkeypatch.setenv("ADK_TEST_COUNTER", str(tmp_path / "plain-effects"))  # for the plain run here
    env = {"ADK_TEST_COUNTER": str(counter), "ADK_TEST_SHAPE": "approval"}
    with database() as url:
        first = Worker(url, "w1", env)
        second: Worker | None = None
        client = DBOSClient(system_database_url=url)
        try:
            first.until("adk worker w1: taking runs")
            _enqueue(client, 0)
            paused = _result(client, 0)
            first.kill()  # the paused run holds no worker: nothing is lost
            second = Worker(url, "w2", env)
            second.until("adk worker w2: taking runs")
            answered = asyncio.run(_answer(url))
        finally:
            client.destroy()
            first.stop()
            if second is not None:
                second.stop()
        events = asyncio.run(_stored(url, 1))["s0"]
    expected = asyncio.run(_plain_answered())
    assert (paused, answered) == ("runner.paused", "runner.completion")
    assert counter.read_text().splitlines() == ["n0"]
    assert _shape(events) == _shape(expected)


async def _plain_answered() -> list[Any]:
    """The same pause and answer by a plain runner in memory."""
    plain = Runner(crash_agent.make("approval"))
    events = [e async for e in plain.run("u", "plain", "n0")]
    return events + [e async for e in plain.run("u", "plain", approvals={"call-1": Approve()})]


async def _answer(url: str) -> str:
    """Answer the pause from this process, which takes no runs: a worker finishes it."""
    store = PostgresSessionService(url)
    runner = DurableRunner(crash_agent.make("approval"), session_service=store)
    await launch(url, runners=[runner], executor_id="answering", worker=False)
    try:
        handle = await runner.submit("u", "s0", approvals={"call-1": Approve()})
        return await asyncio.wait_for(handle.result(), WAIT)
    finally:
        shutdown()
        await store.close()


def test_a_worker_killed_while_it_resumes_an_answered_pause_finishes_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = tmp_path / "effects"
    monkeypatch.setenv("ADK_TEST_COUNTER", str(tmp_path / "plain-effects"))  # for the plain run here
    env = {"ADK_TEST_COUNTER": str(counter), "ADK_TEST_SHAPE": "approval"}
    with database() as url:
        first = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": "model2"})
        again: Worker | None = None
        client = DBOSClient(system_database_url=url)
        try:
            first.until("adk worker w1: taking runs")
            _enqueue(client, 0)
            paused = _result(client, 0)
            answer = asyncio.run(_submit_answer(url))  # from a third process; w1 takes it
            first.until("BLOCKED model2")  # the approved call ran, its event stored
            first.kill()
            again = Worker(url, "w1", env)
            answered, steps = _result(client, answer), _steps(client, answer)
        finally:
            client.destroy()
            first.stop()
            if again is not None:
                again.stop()
        events = asyncio.run(_stored(url, 1))["s0"]
    expected = asyncio.run(_plain_answered())
    assert (paused, answered) == ("runner.paused", "runner.completion")
    assert steps == STEPS[:1] + STEPS[2:]  # the lease, the approved call, the model: each once
    assert counter.read_text().splitlines() == ["n0"]  # exactly once
    assert len({e.id for e in events}) == len(events)
    assert _shape(events) == _shape(expected)


async def _submit_answer(url: str) -> str:
    """Answer the pause from this process, which takes no runs; the answer's workflow id."""
    store = PostgresSessionService(url)
    runner = DurableRunner(crash_agent.make("approval"), session_service=store)
    await launch(url, runners=[runner], executor_id="answering", worker=False)
    try:
        return (await runner.submit("u", "s0", approvals={"call-1": Approve()})).workflow_id
    finally:
        shutdown()
        await store.close()


def test_a_recovered_run_spends_a_stored_budget_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker SIGKILLed in its second model call (the first attempt, its settlement and the
    tool call recorded), restarted: the session's stored budget holds what a plain run spends;
    the replayed attempts are not reserved or settled again."""
    monkeypatch.setenv("ADK_TEST_COUNTER", str(tmp_path / "plain-effects"))  # for the plain run here
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects"), "ADK_TEST_SHAPE": "budget"}
    with database() as url:
        env["ADK_TEST_BUDGET_URL"] = url
        first = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": "model2"})
        again: Worker | None = None
        client = DBOSClient(system_database_url=url)
        try:
            first.until("adk worker w1: taking runs")
            _enqueue(client, 0)
            first.until("BLOCKED model2")
            first.kill()
            again = Worker(url, "w1", env)
            result, steps = _result(client, 0), _steps(client, 0)
        finally:
            client.destroy()
            first.stop()
            if again is not None:
                again.stop()
        used = asyncio.run(_budget_used(PostgresSessionService(url), "s0"))
    plain = asyncio.run(_plain_budget())
    assert result == "runner.completion"
    assert used == plain  # exactly a plain run's: nothing counted twice
    assert (used["model_calls"], used["tool_calls"], used["tool:effect"]) == (2.0, 1.0, 1.0)
    used_step = "adk.budget.used:budget"
    metered = [used_step, "adk.budget.reserve:budget", "adk.model:planned", used_step]
    tool = ["adk.hook:Budget.before_tool", "adk.tool.start:effect", "adk.tool:effect"]
    assert steps == ["adk.lease", *metered, *tool, *metered]  # each once: none made again after the kill


async def _plain_budget() -> dict[str, float]:
    """What a plain run in memory spends of the same budget."""
    store = InMemorySessionService()
    budget = crash_agent.budget(store)
    agent = crash_agent.LlmAgent(
        "crash", model=crash_agent.Planned(), tools=[crash_agent.effect], callbacks=[budget]
    )
    async for _ in Runner(agent, session_service=store).run("u", "s0", "n0"):
        pass
    return await _budget_used(store, "s0")


async def _budget_used(store: BudgetStore, session: str) -> dict[str, float]:
    try:
        return await store.budget_used(f"budget:session:1:u:{session}")
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            await close()
