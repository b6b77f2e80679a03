"""SSE ids (adk.agui.resume): each stored event's AG-UI events go out under its id (on the last
of them, or alone when it shows nothing), so a client's last event id names the last event it
was shown whole; a plain server, which stops a run when its client goes away, refuses to
continue one (`Last-Event-ID`) in one line."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests._runtime import call, calls, reply
from tests.agui.support import sse_messages, verified
from tests.agui.test_approvals import Bank, ask, refused, served


def _read(url: str, body: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", url, json=body, headers={"accept": "text/event-stream"}) as response,
    ):
        assert response.status_code == 200, response.read()
        return list(sse_messages(response))


def test_each_stored_event_goes_out_under_its_id_once_in_order() -> None:
    bank = Bank(calls(call("echo", "c1", x=1)), reply)
    with served(bank) as url:
        read = _read(url, ask())
    session = asyncio.run(bank.sessions.get("anonymous", "t1"))
    assert session is not None
    assert [i for i, _ in read if i is not None] == [e.id for e in session.events]
    verified([e for _, e in read if e])  # the official client takes the stream as it was
    assert [e.get("type") for i, e in read if i is not None] == [
        "STATE_SNAPSHOT",  # the user's message: shows nothing of its own, after the snapshot
        "TOOL_CALL_END",  # the model's call: START, ARGS, END
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_END",  # the answer: its streamed chunks carry no id (they are not stored)
        "RUN_FINISHED",
    ]


def test_a_plain_server_refuses_to_continue_a_run_in_one_line() -> None:
    bank = Bank(reply)
    with served(bank) as url:
        status, detail = refused(url, ask(), headers={"last-event-id": "e1"})
    assert (status, detail) == (
        409,
        "Last-Event-ID: this server stops a run when its client goes away, so it has none to continue"
        " (adk serve --durable does); send the request without it for a new run",
    )
    assert asyncio.run(bank.stored()) == []  # nothing ran
