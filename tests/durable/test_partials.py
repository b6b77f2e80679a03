"""A streamed durable run's partial events across processes: an `adk worker` process runs it,
its model streaming word by word, and a follower here gets the same events, partial chunks
included and in their place, as a plain streamed run gives; as the worker makes them (the
worker is blocked mid-answer when the first chunk arrives here); after the worker is killed
mid-answer and restarted, the answer's chunks again, after an `attempt.discarded`; and a
follower that reconnects after a completed call gets none of that call's chunks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from adk import FunctionTool, LlmAgent, Runner
from adk.durable import DurableRunner, launch, shutdown
from adk.durable.serving import QueuedRunner
from adk.events import Event
from adk.sessions.postgres import PostgresSessionService
from tests.durable import crash_agent
from tests.durable._fleet import WAIT, Worker, database
from tests.durable.test_crash import _no_effect


def _seen(events: list[Event]) -> list[tuple[Any, ...]]:
    """What a client is shown of each event: its kind, author, whether partial, its chunk or
    its text, and its calls' names and arguments so far."""
    return [
        (
            str(e.object),
            e.author,
            e.is_partial,
            e.content,
            tuple((c.function.name, c.function.arguments) for c in (m.tool_calls if m else ())),
        )
        for e in events
        for m in [e.delta or e.message]
    ]


async def _plain() -> list[Event]:
    """A plain streamed run of the same agent, in memory."""
    stand_in = FunctionTool(_no_effect, name="effect")
    runner = Runner(LlmAgent("crash", model=crash_agent.Planned(), tools=[stand_in]))
    return [e async for e in runner.run("u", "plain", "n0", stream=True)]


PLAIN = asyncio.run(_plain())


async def _follow(url: str, env: dict[str, str]) -> tuple[list[Event], list[Event]]:
    """Run the agent, streamed, on a worker process; follow it here through `QueuedRunner`
    (what `adk serve --durable` streams). Its events, and the session's."""
    worker = Worker(url, "w1", env)
    store = PostgresSessionService(url)
    durable = DurableRunner(crash_agent.make("crash"), session_service=store)
    try:
        worker.until("adk worker w1: taking runs")
        await launch(url, runners=[durable], executor_id="client", worker=False)
        async with asyncio.timeout(WAIT):
            followed = [
                e
                async for e in QueuedRunner(durable, poll=0.01).run(
                    "u", "s0", "n0", invocation_id="inv0", stream=True
                )
            ]
        session = await store.get("u", "s0")
        assert session is not None
        return followed, session.events
    finally:
        shutdown()
        await store.close()
        worker.stop()


def test_a_follower_gets_a_streamed_run_s_partial_chunks_from_its_worker(tmp_path: Path) -> None:
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects")}
    with database() as url:
        followed, stored = asyncio.run(_follow(url, env))
    assert [seen[2:] for seen in _seen(PLAIN) if seen[2]] == [  # both model calls streamed
        (True, "", (("effect", '{"note":"n0"}'),)),
        (True, "done:", ()),
        (True, " wrote", ()),
        (True, " n0", ()),
    ]
    assert _seen(followed) == _seen(PLAIN)
    assert [e for e in followed if not e.is_partial] == stored  # the stored events, as a plain run's
    assert _seen(stored) == _seen([e for e in PLAIN if not e.is_partial])


async def _across_a_crash(url: str, env: dict[str, str]) -> tuple[list[Event], list[Event], list[Event]]:
    """Submit a streamed run; follow it until the answer's first chunk, while its worker is
    blocked after making it; kill the worker and restart it, following on. Then reconnect from
    the tool's event, after the run ended. The events followed, reconnected to, and stored."""
    first = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": "stream"})
    again: Worker | None = None
    store = PostgresSessionService(url)
    durable = DurableRunner(crash_agent.make("crash"), session_service=store)
    try:
        first.until("adk worker w1: taking runs")
        await launch(url, runners=[durable], executor_id="client", worker=False)
        handle = await durable.submit("u", "s0", "n0", invocation_id="inv0", stream=True)
        followed: list[Event] = []
        async with asyncio.timeout(WAIT):
            async for event in handle.follow(poll=0.01, partials=True):
                followed.append(event)
                if again is None and event.is_partial and event.content == "done:":
                    first.until("BLOCKED stream")  # the model has not answered yet: a live chunk
                    assert await handle.status() == "PENDING"
                    first.kill()
                    again = Worker(url, "w1", env)
        tool = next(e for e in followed if e.object == "tool.response")
        async with asyncio.timeout(WAIT):
            reconnected = [e async for e in durable.handle("u", "s0", "inv0").follow(tool.id, partials=True)]
        session = await store.get("u", "s0")
        assert session is not None
        return followed, reconnected, session.events
    finally:
        shutdown()
        await store.close()
        first.stop()
        if again is not None:
            again.stop()


def test_partial_chunks_come_live_and_again_after_the_worker_is_recovered(tmp_path: Path) -> None:
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects")}
    with database() as url:
        followed, reconnected, stored = asyncio.run(_across_a_crash(url, env))
    answer = PLAIN.index(next(e for e in PLAIN if e.is_partial and e.content == "done:"))
    discarded = ("attempt.discarded", "crash", True, "", ())
    cut, rest = _seen(PLAIN[answer : answer + 1]), _seen(PLAIN[answer:])  # the answer's first chunk; from it
    assert _seen(followed) == [*_seen(PLAIN[:answer]), *cut, discarded, *rest]
    assert [e for e in followed if not e.is_partial] == stored
    # reconnected from the tool's result: the answer's chunks (its call had not completed
    # then: both executions'), its event and the run's end; none of the tool call's chunks
    assert _seen(reconnected) == [*cut, discarded, *rest]
    assert (tmp_path / "effects").read_text().splitlines() == ["n0"]
