"""The contract every session store keeps, run against each of them: what the runner relies on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adk.agents import LlmAgent
from adk.errors import SessionBusyError, StaleSessionError
from adk.events import Choice, Event, EventActions, Message, ObjectType
from adk.runner import Runner
from adk.sessions import Session, SessionService
from adk.testing import ScriptedModel, call_tool
from adk.tools import tool
from tests.sessions.helpers import delta_event, rich_events


async def test_a_missing_session_is_none_and_not_listed(store: SessionService) -> None:
    assert await store.get("u", "s") is None
    assert await store.list_sessions("u") == []


async def test_get_or_create_creates_an_empty_session_once(store: SessionService) -> None:
    created = await store.get_or_create("u", "s")
    assert (created.id, created.user_id, created.state, created.events) == ("s", "u", {}, [])

    again = await store.get_or_create("u", "s")
    assert (again.id, again.user_id, again.state, again.events) == ("s", "u", {}, [])
    assert again.updated_at == created.updated_at
    assert await store.list_sessions("u") == ["s"]


async def test_sessions_are_per_user_and_listed_oldest_first(store: SessionService) -> None:
    for user, session_id in [("u1", "b"), ("u2", "b"), ("u1", "a"), ("u1", "c")]:
        await store.get_or_create(user, session_id)
    await store.append_event(await store.get_or_create("u2", "b"), delta_event(1, owner="u2"))

    assert await store.list_sessions("u1") == ["b", "a", "c"]
    assert await store.list_sessions("u2") == ["b"]
    assert await store.list_sessions("nobody") == []
    u1_b = await store.get("u1", "b")
    assert u1_b is not None
    assert (u1_b.state, u1_b.events) == ({}, [])


async def test_delete_removes_the_session_and_its_events(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    await store.append_event(session, delta_event(1, a=1))
    await store.get_or_create("u", "other")

    await store.delete("u", "s")
    assert await store.get("u", "s") is None
    assert await store.list_sessions("u") == ["other"]
    await store.delete("u", "s")  # deleting a missing session does nothing
    await store.delete("nobody", "s")

    fresh = await store.get_or_create("u", "s")
    assert (fresh.state, fresh.events) == ({}, [])


async def test_append_event_stores_the_event_and_applies_its_delta(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    state = session.state
    first = delta_event(1, a=1, b={"x": None}, c=[1, 2])
    second = delta_event(2, a=None, c="three", missing=None)

    await store.append_event(session, first)
    await store.append_event(session, second)

    # The passed session is updated in place: contexts hold a reference to its state dict.
    assert session.state is state
    assert session.state == {"b": {"x": None}, "c": "three"}
    assert [e.id for e in session.events] == ["e1", "e2"]
    assert session.updated_at == second.timestamp

    stored = await store.get("u", "s")
    assert stored is not None
    assert stored.state == {"b": {"x": None}, "c": "three"}
    assert stored.events == [first, second]
    assert stored.updated_at == second.timestamp


async def test_partial_events_are_neither_stored_nor_applied(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    chunk = Event.new(
        "inv",
        "agent",
        object=ObjectType.CHAT_COMPLETION_CHUNK,
        is_partial=True,
        choices=[Choice(delta=Message.assistant("hel"))],
        actions=EventActions(state_delta={"k": 1}),
    )
    complete = delta_event(1)

    await store.append_event(session, chunk)
    await store.append_event(session, complete)

    assert (session.state, session.events) == ({}, [complete])
    stored = await store.get("u", "s")
    assert stored is not None
    assert (stored.state, stored.events) == ({}, [complete])


async def test_appending_to_a_session_not_in_the_store_is_a_lookup_error(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    await store.delete("u", "s")

    with pytest.raises(LookupError, match=r"session 's' of user 'u'.*not in"):
        await store.append_event(session, delta_event(1, a=1))
    with pytest.raises(LookupError, match=r"session 'never' of user 'u'"):
        await store.append_event(Session(id="never", user_id="u"), delta_event(2))
    assert (session.state, session.events) == ({}, [])
    assert await store.get("u", "s") is None


async def test_an_append_from_a_copy_that_missed_events_is_refused(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    await store.append_event(session, delta_event(1, a=1))
    stale = Session(id="s", user_id="u")  # another handle on the same session, from before e1

    with pytest.raises(StaleSessionError, match=r"the store has 1 event\(s\) and this copy has seen 0"):
        await store.append_event(stale, delta_event(2, b=2))

    assert (stale.state, stale.events) == ({}, [])
    stored = await store.get("u", "s")
    assert stored is not None
    assert (stored.state, [e.id for e in stored.events]) == ({"a": 1}, ["e1"])
    await store.append_event(stored, delta_event(3, c=3))  # a fresh read follows the last event
    assert stored.last_seq == 2


async def test_of_two_copies_appending_at_once_exactly_one_wins(
    store: SessionService, twin: SessionService
) -> None:
    await store.get_or_create("u", "s")
    one, two = Session(id="s", user_id="u"), Session(id="s", user_id="u")  # two readers' copies

    results = await asyncio.gather(
        store.append_event(one, delta_event(1, who="one")),
        twin.append_event(two, delta_event(2, who="two")),
        return_exceptions=True,
    )

    refused = [r for r in results if isinstance(r, StaleSessionError)]
    assert len(refused) == 1 and results.count(None) == 1
    winner = "e1" if results[0] is None else "e2"
    for view in (store, twin):
        stored = await view.get("u", "s")
        assert stored is not None
        assert [e.id for e in stored.events] == [winner]
        assert stored.state == {"who": "one" if winner == "e1" else "two"}


async def test_events_come_back_equal_in_every_field(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    events = rich_events()
    for event in events:
        await store.append_event(session, event)

    stored = await store.get("u", "s")
    assert stored is not None
    assert stored.events == events
    assert [e.model_dump() for e in stored.events] == [e.model_dump() for e in events]
    assert stored.state == {"prefs": {"units": "si", "nested": [1, 2.5, None, {"x": True}]}}


async def test_concurrent_appends_to_many_sessions_do_not_interfere(store: SessionService) -> None:
    sessions, per_session = 40, 25

    async def converse(n: int) -> None:
        session = await store.get_or_create("u", f"s{n}")
        for i in range(per_session):
            await store.append_event(session, delta_event(i, owner=n, last=i, **{f"k{i}": n * 1000 + i}))
            await asyncio.sleep(0)  # let the other conversations interleave with this one

    await asyncio.gather(*(converse(n) for n in range(sessions)))

    assert sorted(await store.list_sessions("u")) == sorted(f"s{n}" for n in range(sessions))
    for n in range(sessions):
        stored = await store.get("u", f"s{n}")
        assert stored is not None
        assert [e.id for e in stored.events] == [f"e{i}" for i in range(per_session)]
        assert all(e.actions.state_delta["owner"] == n for e in stored.events)
        expected = {"owner": n, "last": per_session - 1} | {f"k{i}": n * 1000 + i for i in range(per_session)}
        assert stored.state == expected


async def test_appends_through_one_copy_in_turn_keep_their_order(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    for i in range(30):
        await store.append_event(session, delta_event(i, last=i))
    stored = await store.get("u", "s")
    assert stored is not None
    assert [e.id for e in stored.events] == [f"e{i}" for i in range(30)]
    assert stored.state == {"last": 29}


# the run lease


async def test_a_lease_keeps_every_other_owner_out_until_released(
    store: SessionService, twin: SessionService
) -> None:
    held = await store.acquire("u", "s", "run-1")
    assert (held.id, held.user_id, held.lease, held.events) == ("s", "u", "run-1", [])
    assert await store.list_sessions("u") == ["s"]  # acquiring creates the session

    for view in (store, twin):
        with pytest.raises(SessionBusyError, match="session 's' of user 'u' is already running"):
            await view.acquire("u", "s", "run-2")
    with pytest.raises(SessionBusyError):  # an append through a copy that is not the holder's
        await twin.append_event(Session(id="s", user_id="u"), delta_event(1))
    await store.append_event(held, delta_event(2, by="holder"))
    assert (await twin.acquire("u", "elsewhere", "run-2")).lease == "run-2"  # other sessions are free

    await store.release(held)
    assert held.lease is None
    taken = await twin.acquire("u", "s", "run-2")
    assert (taken.lease, [e.id for e in taken.events], taken.state) == ("run-2", ["e2"], {"by": "holder"})


async def test_the_same_owner_acquires_again_and_a_named_takeover_is_allowed(store: SessionService) -> None:
    await store.acquire("u", "s", "run-1")
    assert (await store.acquire("u", "s", "run-1")).lease == "run-1"
    with pytest.raises(SessionBusyError):
        await store.acquire("u", "s", "run-2")
    assert (await store.acquire("u", "s", "run-2", takeover="run-1")).lease == "run-2"
    with pytest.raises(SessionBusyError):
        await store.acquire("u", "s", "run-3", takeover="run-1")  # run-1 no longer holds it


async def test_an_expired_lease_is_taken_over_and_its_holder_is_then_refused(
    store: SessionService, twin: SessionService
) -> None:
    store.lease_ttl = 0.0  # expires at once: no waiting
    dead = await store.acquire("u", "s", "dead-worker")
    await store.append_event(dead, delta_event(1))
    twin.lease_ttl = 60.0
    alive = await twin.acquire("u", "s", "live-worker")
    assert [e.id for e in alive.events] == ["e1"]

    with pytest.raises(SessionBusyError):
        await store.renew(dead)  # the lease was lost
    with pytest.raises(SessionBusyError):
        await store.append_event(dead, delta_event(2))  # fenced out, although its copy is current
    await store.release(dead)  # releasing a lost lease does nothing
    with pytest.raises(SessionBusyError):
        await store.acquire("u", "s", "third")
    await twin.append_event(alive, delta_event(3))
    stored = await twin.get("u", "s")
    assert stored is not None
    assert [e.id for e in stored.events] == ["e1", "e3"]


async def test_renewing_keeps_a_lease_that_would_have_expired(store: SessionService) -> None:
    store.lease_ttl = 0.0
    held = await store.acquire("u", "s", "run-1")
    store.lease_ttl = 60.0
    await store.renew(held)  # not taken by anyone meanwhile: still ours, now for a minute
    with pytest.raises(SessionBusyError):
        await store.acquire("u", "s", "run-2")


async def test_renewing_without_a_lease_is_refused(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    with pytest.raises(SessionBusyError):
        await store.renew(session)


async def test_deleting_a_leased_session_frees_its_id(store: SessionService) -> None:
    await store.acquire("u", "s", "run-1")
    await store.delete("u", "s")
    assert (await store.acquire("u", "s", "run-2")).events == []


async def test_a_short_run_costs_two_lease_calls_taken_and_released(
    store: SessionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    @tool
    def look() -> str:
        """Look."""
        return "seen"

    calls: list[str] = []
    for name in ("acquire", "renew", "release"):
        method = getattr(type(store), name)

        def counted(
            self: SessionService, *args: object, _name: str = name, _method: Any = method, **kw: object
        ) -> Any:
            calls.append(_name)
            return _method(self, *args, **kw)

        monkeypatch.setattr(type(store), name, counted)
    model = ScriptedModel([call_tool("look"), "done", "again"])
    runner = Runner(LlmAgent("root", model=model, tools=[look]), session_service=store)

    first = [e.object async for e in runner.run("u", "s", "go")]
    assert calls == ["acquire", "release"]
    second = [e.object async for e in runner.run("u", "s", "more")]
    assert calls == ["acquire", "release"] * 2
    assert first[-1] == second[-1] == ObjectType.RUNNER_COMPLETION
