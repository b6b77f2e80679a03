"""Streaming across workers: a process that takes no runs follows the events of a run an
`adk worker` process executes, as it stores them; after the worker is SIGKILLed and restarted,
a client that reconnects from the last event it saw gets every other event, each once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

import httpx
from dbos import DBOSClient

from adk.durable import DurableRunner, launch, shutdown, workflow_id
from adk.durable.runner import enqueue_options
from adk.events import Event, Message
from adk.sessions.postgres import PostgresSessionService
from tests.durable import crash_agent
from tests.durable._fleet import AGENT, WAIT, Adk, Worker, database, free_port
from tests.durable.test_crash import _plain, _result, _shape


async def _follow_across_a_crash(url: str, env: dict[str, str]) -> tuple[list[Event], list[Event], list[Any]]:
    """Submit a run from here; follow it until its tool's event while the worker is blocked in
    the next model call; kill the worker, restart it, reconnect from the last event seen. The
    events seen before the kill, those after, and the session's."""
    first = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": "model2"})
    again: Worker | None = None
    store = PostgresSessionService(url)
    runner = DurableRunner(crash_agent.make("crash"), session_service=store)
    try:
        first.until("adk worker w1: taking runs")
        await launch(url, runners=[runner], executor_id="client", worker=False)
        handle = await runner.submit("u", "s0", "n0", invocation_id="inv0")
        before: list[Event] = []
        async with asyncio.timeout(WAIT):
            async for event in handle.follow(poll=0.01):
                before.append(event)
                if event.object == "tool.response":
                    break  # the client goes away here
        first.until("BLOCKED model2")  # the run goes on in the worker: it has not ended
        assert await handle.status() == "PENDING"
        first.kill()
        again = Worker(url, "w1", env)
        reconnected = runner.handle("u", "s0", "inv0")
        async with asyncio.timeout(WAIT):
            after = [e async for e in reconnected.follow(before[-1].id, poll=0.01)]
        session = await store.get("u", "s0")
        assert session is not None
        return before, after, session.events
    finally:
        shutdown()
        await store.close()
        first.stop()
        if again is not None:
            again.stop()


def test_a_client_follows_a_run_on_another_worker_and_reconnects_after_its_crash(tmp_path: Path) -> None:
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects")}
    with database() as url:
        before, after, stored = asyncio.run(_follow_across_a_crash(url, env))
    assert _shape(before) == _plain("n0")[:3]  # the user's message, the call, its result
    assert [e.id for e in before + after] == [e.id for e in stored if e.invocation_id == "inv0"]
    assert before + after == [e for e in stored if e.invocation_id == "inv0"]
    assert _shape(stored) == _plain("n0")
    assert str(after[-1].object) == "runner.completion"


def _post(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST a RunAgentInput to `adk serve` and read its whole SSE stream."""
    with (
        httpx.Client(timeout=WAIT) as client,
        client.stream("POST", url, json=body, headers={"accept": "text/event-stream"}) as response,
    ):
        assert response.status_code == 200, response.read()
        return [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]


def test_adk_serve_durable_streams_a_run_that_a_worker_executes(tmp_path: Path) -> None:
    pytest.importorskip("ag_ui")
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects")}
    port = free_port()
    with database() as url:
        worker = Worker(url, "w1", env)
        served = Adk(
            [
                "serve",
                str(AGENT),
                "--durable",
                "--sessions",
                url,
                "--system-database",
                url,
                "--port",
                str(port),
            ],
            env,
        )
        client = DBOSClient(system_database_url=url)
        try:
            worker.until("adk worker w1: taking runs")
            served.until("adk serve: the AG-UI endpoint is")
            served.until("INFO:     Uvicorn running")  # listening now
            body = {
                "threadId": "s0",
                "runId": "inv0",
                "messages": [{"id": "m", "role": "user", "content": "n0"}],
            }
            events = _post(f"http://127.0.0.1:{port}/", body)
            ran_on = client.list_workflows(workflow_ids=[workflow_id("anonymous", "s0", "inv0")])
        finally:
            client.destroy()
            served.stop()
            worker.stop()
    assert [w.executor_id for w in ran_on] == ["w1"]  # the worker ran it, not the server
    kinds = [e["type"] for e in events]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert "TOOL_CALL_RESULT" in kinds
    deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert deltas == ["done:", " wrote", " n0"]  # token by token, as the worker's model streamed it
    assert (tmp_path / "effects").read_text().splitlines() == ["n0"]


def test_a_run_for_an_agent_no_worker_has_ends_with_an_error_event_naming_it(tmp_path: Path) -> None:
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects")}
    with database() as url:
        worker = Worker(url, "w1", env)
        client = DBOSClient(system_database_url=url)
        try:
            worker.until("adk worker w1: taking runs")
            options = enqueue_options("travel", "u", "s0", "inv0")  # the fleet runs only `crash`
            client.enqueue(options, "travel", "u", "s0", Message.user("n0"), "inv0")
            result = _result(client, options["workflow_id"])  # fails after WAIT s if nobody takes it
        finally:
            client.destroy()
            worker.stop()
        stored = asyncio.run(_session(url))
    assert result == "error"
    assert [(str(e.object), e.author, e.invocation_id) for e in stored] == [("error", "travel", "inv0")]
    assert stored[0].error is not None
    assert stored[0].error.message == (
        "a durable run of session 's0' names the agent 'travel', which this worker does not have "
        "(it has 'crash'): start workers with that agent, or submit to one of these"
    )
    assert not (tmp_path / "effects").exists()


async def _session(url: str) -> list[Event]:
    store = PostgresSessionService(url)
    try:
        session = await store.get("u", "s0")
        assert session is not None
        return session.events
    finally:
        await store.close()
