"""AG-UI and A2A read a session from its horizon (`adk.sessions.base.read_from_horizon`): on a
compacted session, what they check (its state, the paused run's calls) is read without the
events before the horizon, and they answer as they did when they read every event."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client

from adk import LlmAgent, Runner
from adk.a2a import create_app as a2a_app
from adk.agui import create_app as agui_app
from adk.compaction import Compact
from adk.sessions import InMemorySessionService, SessionService
from adk.sessions.base import Session, read_from_horizon
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls
from tests.a2a.support import send, shape
from tests.agui.support import stable_ids
from tests.context.support import WORDS, turn
from tests.sessions.conftest import Opener

Q = [f"q{n} {WORDS}" for n in range(4)]
"""User messages of 51 tokens: the third turn passes 150 and folds the first (keep_last=1)."""
YES = {"status": "resolved", "payload": {"approved": True}}
URL = "http://127.0.0.1/"


class Recorded:
    """A store whose reads of a whole session (`get`) and from its horizon are recorded, as
    (method, events skipped, events read); `from_horizon=False` hides the store's
    `get_from_horizon`, as a store written before it would."""

    def __init__(self, store: SessionService, *, from_horizon: bool = True) -> None:
        self.store = store
        self.from_horizon = from_horizon
        self.reads: list[tuple[str, int, int]] = []

    async def _read(self, name: str, read: Awaitable[Session | None]) -> Session | None:
        session = await read
        if session is not None:
            self.reads.append((name, session.skipped, len(session.events)))
        return session

    async def get(self, user_id: str, session_id: str) -> Session | None:
        return await self._read("get", self.store.get(user_id, session_id))

    def __getattr__(self, name: str) -> Any:
        if name == "get_from_horizon":
            if not self.from_horizon:
                raise AttributeError(name)
            get = self.store.get_from_horizon  # type: ignore[attr-defined]
            return lambda user_id, session_id: self._read(name, get(user_id, session_id))
        return getattr(self.store, name)


def paying_agent(script: list[Any]) -> LlmAgent:
    """An agent whose `pay` needs approval, compacted past 150 tokens (keeping the last turn)."""
    pay = Tool("pay")
    pay.requires_approval = True  # type: ignore[attr-defined]
    compact = Compact(
        keep_last=1, summarize=ScriptedModel(["S1", "S2"], name="summarizer"), threshold_tokens=150
    )
    return LlmAgent("a", model=ScriptedModel(script), callbacks=[compact], tools=[pay])


async def two_turns(worker: Opener, session: str) -> None:
    """`session` of user u, two turns long (not compacted yet), stored by another worker."""
    runner = Runner(paying_agent(["a1", "a2"]), session_service=worker())
    for q in Q[1:3]:
        await turn(runner, q, session)


async def agui(
    worker: Opener, thread: str, *, from_horizon: bool
) -> tuple[list[Any], list[tuple[str, int, int]]]:
    """Over AG-UI, on a new worker: the third turn (compacted, paused for `pay`), then a resume
    naming no open interrupt (refused), then the approval. What each request got (the thread's
    id as "t"), and the reads of the last two."""
    await two_turns(worker, thread)
    store = Recorded(worker(), from_horizon=from_horizon)
    runner = Runner(paying_agent([calls(call("pay", "c1", amount=5)), "paid"]), session_service=store)
    app = agui_app(runner, path="/agui", identity=lambda request: "u")
    message = [{"id": "u1", "role": "user", "content": Q[3]}]
    answered: list[Any] = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as c:
        for n, resume in enumerate([[], [{"interruptId": "c9", **YES}], [{"interruptId": "c1", **YES}]]):
            if n == 1:
                store.reads.clear()
            body = {"threadId": thread, "runId": f"r{n}", "messages": message, "resume": resume}
            response = await c.post("/agui", json=body)
            text = response.text.replace(thread, "t")
            if response.status_code != 200:
                answered.append((response.status_code, json.loads(text)["detail"]))
                continue
            events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
            answered.append((200, stable_ids(events)))
    return answered, store.reads


async def test_agui_checks_a_compacted_threads_answers_from_its_horizon_and_answers_as_before(
    worker: Opener,
) -> None:
    before, whole_reads = await agui(worker, "thread-1", from_horizon=False)
    after, reads = await agui(worker, "thread-2", from_horizon=True)
    assert after == before
    assert [code for code, _ in after] == [200, 422, 200]
    assert after[0][1][-1]["outcome"]["interrupts"][0]["id"] == "c1"
    assert after[1][1] == "resume.0: 'c9' is no interrupt open on this thread"
    assert [e["type"] for e in after[2][1]][-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    # The refused resume's check, the approval's check, and its state snapshot (one event stored
    # by then): the first turn's three events, folded, were not read; before, every event was.
    assert reads == [("get_from_horizon", 3, 8)] * 2 + [("get_from_horizon", 3, 9)]
    assert whole_reads == [("get", 0, 11)] * 2 + [("get", 0, 12)]


@asynccontextmanager
async def a2a_client(runner: Runner) -> AsyncIterator[Any]:
    app = a2a_app(runner, url=URL, identity=lambda request: "u")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as http:
        c = await create_client(URL, ClientConfig(httpx_client=http, streaming=True))
        try:
            yield c
        finally:
            await c.close()


async def a2a(
    worker: Opener, session: str, *, from_horizon: bool
) -> tuple[list[Any], list[tuple[str, int, int]]]:
    """Over A2A, on a new worker: the third turn (compacted, paused for `pay`), then a text that
    is no answer, then the approval. The shape of each response, and the reads of the last two."""
    await two_turns(worker, session)
    store = Recorded(worker(), from_horizon=from_horizon)
    runner = Runner(paying_agent([calls(call("pay", "c1", amount=5)), "paid"]), session_service=store)
    async with a2a_client(runner) as c:
        asked = await send(c, Q[3], context_id=session)
        task = asked[-1].status_update.task_id
        store.reads.clear()
        refused = await send(c, "maybe", task_id=task, context_id=session)
        done = await send(c, "approve", task_id=task, context_id=session)
    return [[shape(r) for r in responses] for responses in (asked, refused, done)], store.reads


async def test_a2a_finds_a_compacted_sessions_paused_task_from_its_horizon_and_answers_as_before(
    worker: Opener,
) -> None:
    before, whole_reads = await a2a(worker, "session-1", from_horizon=False)
    after, reads = await a2a(worker, "session-2", from_horizon=True)
    assert after == before
    assert after[0][-1][:2] == ("status", "TASK_STATE_INPUT_REQUIRED")
    assert after[1][-1][2].startswith("'maybe' is not an answer")
    assert after[2][-2:] == [("artifact", "answer", "paid", False), ("status", "TASK_STATE_COMPLETED", "")]
    assert reads == [("get_from_horizon", 3, 8)] * 2
    assert whole_reads == [("get", 0, 11)] * 2


async def test_a_store_without_a_read_from_its_horizon_is_read_whole() -> None:
    store = InMemorySessionService()
    await turn(Runner(paying_agent(["a1"]), session_service=store), Q[1])
    older = Recorded(store, from_horizon=False)
    session = await read_from_horizon(older, "u", "s")
    assert session is not None and older.reads == [("get", 0, 3)]
    assert await read_from_horizon(Recorded(store), "u", "nothing") is None


async def test_a_read_from_the_horizon_is_what_a_run_reads_and_takes_no_lease(worker: Opener) -> None:
    runner = Runner(paying_agent(["a1", "a2", "a3"]), session_service=worker())
    for q in Q[1:4]:
        await turn(runner, q)
    store = worker()
    held = await store.acquire("u", "s", "w1")
    read = await store.get_from_horizon("u", "s")  # type: ignore[attr-defined]
    assert read.skipped == held.skipped == 3 and read.last_seq == held.last_seq == 10
    assert (read.events, read.state, read.lease) == (held.events, held.state, None)
    assert await store.get_from_horizon("u", "nothing") is None  # type: ignore[attr-defined]
    await store.release(held)
