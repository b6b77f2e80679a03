"""`adk serve --durable` and `adk web --durable` as a client sees them: a run that pauses for
approval is answered through an AG-UI request (a resume entry, as for a plain run) and finished
on a worker, the client seeing what a plain server would show; a client that reconnects after
its worker crashed continues from the last event it saw (`Last-Event-ID`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")
pytest.importorskip("ag_ui")

import httpx
from dbos import DBOSClient

from adk.agui import create_app
from adk.events import Event
from adk.runner import Runner
from adk.sessions.postgres import PostgresSessionService
from adk.web import create_web_app
from tests.agui.support import serving, sse_messages, stable_ids
from tests.durable import crash_agent
from tests.durable._fleet import WAIT, Served, Worker, database

ASK = {
    "threadId": "s0",
    "runId": "r1",
    "messages": [{"id": "m", "role": "user", "content": "n0"}],
    "state": {"theme": "dark"},  # the client's state: a change to the session's, stored first
}
ANSWER = {
    **ASK,
    "runId": "r2",
    "resume": [{"interruptId": "call-1", "status": "resolved", "payload": {"approved": True}}],
    "state": {"theme": "light"},
}
PATHS = {"serve": "", "web": "agui"}


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """POST a RunAgentInput and read its whole SSE stream: its events."""
    with (
        httpx.Client(timeout=WAIT) as client,
        client.stream(
            "POST", url, json=body, headers={"accept": "text/event-stream", **(headers or {})}
        ) as response,
    ):
        assert response.status_code == 200, response.read()
        return [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]


def _seen(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a client is shown, its minted ids made stable; a whole adk event (`adk web`'s CUSTOM
    `adk.event`) as its kind only (its id and times are the run's own)."""
    shown = [{"adk.event": e["value"]["object"]} if e.get("name") == "adk.event" else e for e in events]
    return stable_ids(shown)


def _plain(command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[list[dict[str, Any]]]:
    """The same two requests to a plain server of the same agent (in memory, in this process)."""
    monkeypatch.setenv("ADK_TEST_COUNTER", str(tmp_path / "plain-effects"))
    runner = Runner(crash_agent.make("approval"))
    app = create_web_app(runner) if command == "web" else create_app(runner, path="/agui")
    with serving(app) as url:
        return [post(url, ASK), post(url, ANSWER)]


@pytest.mark.parametrize("command", ["serve", "web"])
def test_a_durable_run_paused_for_approval_is_answered_through_agui(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = tmp_path / "effects"
    env = {"ADK_TEST_COUNTER": str(counter), "ADK_TEST_SHAPE": "approval"}
    with database() as url:
        worker = Worker(url, "w1", env)
        served: Served | None = None
        client = DBOSClient(system_database_url=url)
        try:
            worker.until("adk worker w1: taking runs")
            served = Served(url, env, command)
            asked = post(served.url + PATHS[command], ASK)
            answered = post(served.url + PATHS[command], ANSWER)
            ran_on = [(w.name, w.executor_id) for w in client.list_workflows(sort_desc=False)]
            stored = asyncio.run(_stored(url))
            if command == "serve":
                _reconnect_to_the_ended_runs(served.url, stored)
        finally:
            client.destroy()
            if served is not None:
                served.stop()
            worker.stop()
    plain = _plain(command, monkeypatch, tmp_path)
    assert [_seen(asked), _seen(answered)] == [_seen(run) for run in plain]
    assert asked[-1]["outcome"]["type"] == "interrupt"
    assert [e["type"] for e in answered if e["type"].startswith("TOOL_CALL")] == ["TOOL_CALL_RESULT"]
    assert ran_on == [("adk.run", "w1"), ("adk.answer", "w1")]  # the worker ran both, not the server
    assert counter.read_text().splitlines() == ["n0"]  # the approved call ran once
    assert [e.actions.state_delta for e in stored if e.actions.state_delta] == [
        {"theme": "dark"},  # with the user's message
        {"theme": "light"},  # a state update before the answered call
    ]
    if command == "web":  # each stored event reached the page whole, once
        whole = [e["value"]["id"] for e in asked + answered if e.get("name") == "adk.event"]
        assert whole == [e.id for e in stored]


def _reconnect_to_the_ended_runs(url: str, stored: list[Event]) -> None:
    """Clients that reconnect to the runs once they ended: from the approval request, the pause
    still carries its interrupt (the request was seen: it primes the translator); from a run's
    last event, its end alone, no event again; from an event the thread lacks, 422."""
    request = next(e.id for e in stored if e.object == "tool.approval_request")
    from_request = _follow(url, ASK, after=request)
    assert [(i, e["type"]) for i, e in from_request] == [
        (None, "RUN_STARTED"),
        (None, "STATE_SNAPSHOT"),
        (stored[3].id, "RUN_FINISHED"),  # the pause, stored after the request
    ]
    assert str(stored[3].object) == "runner.paused"
    assert from_request[-1][1]["outcome"]["interrupts"][0]["toolCallId"] == "call-1"
    from_end = _follow(url, ANSWER, after=stored[-1].id)
    assert [(i, e["type"], e.get("outcome")) for i, e in from_end] == [
        (None, "RUN_STARTED", None),
        (None, "STATE_SNAPSHOT", None),
        (None, "RUN_FINISHED", None),  # a success, sent again without the completion's id
    ]
    refused = httpx.post(url, json=ANSWER, headers={"last-event-id": "nope"}, timeout=WAIT)
    assert (refused.status_code, refused.json()) == (
        422,
        {"detail": "Last-Event-ID: no event 'nope' in session 's0'"},
    )


async def _stored(url: str, user: str = "anonymous", session: str = "s0") -> list[Event]:
    store = PostgresSessionService(url)
    try:
        found = await store.get(user, session)
        assert found is not None
        return found.events
    finally:
        await store.close()


def _follow(url: str, body: dict[str, Any], after: str | None = None, until: str | None = None) -> list[Any]:
    """POST `body` (continuing from the event `after`) and read its SSE messages, until one
    whose event is of type `until` (the client then goes away) or the stream's end."""
    headers = {"accept": "text/event-stream", **({"last-event-id": after} if after else {})}
    read: list[tuple[str | None, dict[str, Any]]] = []
    with (
        httpx.Client(timeout=WAIT) as client,
        client.stream("POST", url, json=body, headers=headers) as response,
    ):
        assert response.status_code == 200, response.read()
        for message in sse_messages(response):
            read.append(message)
            if message[1].get("type") == until:
                break
    return read


def test_a_client_of_adk_serve_durable_continues_from_the_last_event_it_saw_after_a_worker_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client follows the run until its tool's result and goes away while the worker is in
    the next model call; the worker is SIGKILLed and restarted; the client posts the run again
    with `Last-Event-ID`: the id it saw last. It is shown the rest, and each stored event once."""
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects")}
    with database() as url:
        first = Worker(url, "w1", {**env, "ADK_TEST_BLOCK": "model2"})
        again: Worker | None = None
        served: Served | None = None
        try:
            first.until("adk worker w1: taking runs")
            served = Served(url, env)
            before = _follow(served.url, ASK, until="TOOL_CALL_RESULT")
            first.until("BLOCKED model2")
            first.kill()
            again = Worker(url, "w1", env)
            last = [i for i, _ in before if i is not None][-1]
            after = _follow(served.url, ASK, after=last)
        finally:
            if served is not None:
                served.stop()
            first.stop()
            if again is not None:
                again.stop()
        stored = asyncio.run(_stored(url))
    monkeypatch.setenv("ADK_TEST_COUNTER", str(tmp_path / "plain-effects"))
    with serving(create_app(Runner(crash_agent.make("crash")), path="/agui")) as plain_url:
        plain = post(plain_url, ASK)
    ids = [i for i, _ in before + after if i is not None]
    assert ids == [e.id for e in stored]  # every stored event, once, in order
    shown = [e for _, e in before if e], [e for _, e in after if e]  # the id-only messages left out
    assert [e["type"] for e in shown[1][:2]] == ["RUN_STARTED", "STATE_SNAPSHOT"]  # a stream of its own
    assert _seen(shown[0] + shown[1][2:]) == _seen(plain)  # the rest of what a plain server shows
