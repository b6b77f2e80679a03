"""Faults between a PostgreSQL store and its server: an answer lost after the commit, a server gone.

Through a proxy on 127.0.0.1 (tests/sessions/proxy.py) that cuts a connection once the server
has answered a chosen statement: the statement committed, its client never hears so.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adk.agents import LlmAgent
from adk.events import ObjectType
from adk.runner import Runner
from adk.sessions.postgres import PostgresSessionService
from adk.testing import ScriptedModel
from tests import postgres
from tests._runtime import summary
from tests.sessions.helpers import delta_event
from tests.sessions.proxy import Proxy


@pytest.fixture
async def proxy() -> AsyncIterator[Proxy]:
    postgres.require()
    async with Proxy(postgres.URL) as proxy:
        yield proxy


@pytest.fixture
async def store(proxy: Proxy) -> AsyncIterator[PostgresSessionService]:
    async with (
        postgres.fresh_schema() as schema,
        PostgresSessionService(proxy.url, schema=schema, max_size=1) as store,
    ):
        yield store


async def test_appends_sent_together_whose_answer_is_lost_are_found_stored(
    proxy: Proxy, store: PostgresSessionService
) -> None:
    # Sent again one by one, each finds its own event already at its place: stored, not stale.
    sessions = [await store.acquire("u", f"s{i}", "me") for i in range(3)]
    events = [delta_event(i + 1, k=i) for i in range(3)]
    cut = proxy.cut_after(b'"id":"e1"')

    await asyncio.gather(*(store.append_event(s, e) for s, e in zip(sessions, events, strict=True)))

    assert cut.done()
    for i, session in enumerate(sessions):
        stored = await store.get("u", f"s{i}")
        assert stored is not None
        assert [e.id for e in stored.events] == [e.id for e in session.events] == [f"e{i + 1}"]
        assert stored.state == session.state == {"k": i}


async def test_a_run_whose_completion_answer_is_lost_ends_as_done_stored_once(
    proxy: Proxy, store: PostgresSessionService
) -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel(["hello"])), session_service=store)
    cut = proxy.cut_after(ObjectType.RUNNER_COMPLETION.encode())

    events = [e async for e in runner.run("u", "s", "hi")]

    assert cut.done()
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "hello"),
        ("done", "root"),
    ]
    stored = await store.get("u", "s")
    assert stored is not None and stored.events == events


async def test_a_store_error_says_which_event_may_be_stored_and_the_session_tells(
    proxy: Proxy, store: PostgresSessionService
) -> None:
    # The completion committed, then the server could not be reached to ask: the error names
    # the event whose fate is unknown; once the server answers, the session tells.
    runner = Runner(LlmAgent("root", model=ScriptedModel(["hello"])), session_service=store)
    cut = proxy.cut_after(ObjectType.RUNNER_COMPLETION.encode())
    events = []
    async for event in runner.run("u", "s", "hi"):
        events.append(event)
        proxy.refusing = proxy.refusing or event.author == "root"  # from the completion's append on

    assert [summary(e)[:2] for e in events] == [("model", "user"), ("model", "root"), ("error", "root")]
    error = events[-1].error
    assert error is not None and (error.type, error.where) == ("UnconfirmedAppendError", "store")
    assert cut.done()

    proxy.refusing = False
    stored = await store.get("u", "s")
    assert stored is not None
    ran = [e for e in stored.events if e.invocation_id == events[-1].invocation_id]
    assert [e.object for e in ran] == [ObjectType.CHAT_COMPLETION] * 2 + [ObjectType.RUNNER_COMPLETION]
    assert error.message.startswith(
        f"cannot tell whether event {ran[-1].id} (runner.completion) was stored as number 3"
        " of session 's' of user 'u': events up to number 2 are stored"
    )
