"""The behaviour every session store shares, run against each of them."""

from __future__ import annotations

import asyncio

import pytest

from adk.events import Choice, Event, EventActions, Message, ObjectType
from adk.sessions import Session, SessionService
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


async def test_a_stale_session_object_appends_to_the_stored_session(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    await store.append_event(session, delta_event(1, a=1))
    stale = Session(id="s", user_id="u")  # another handle on the same session, say from earlier

    await store.append_event(stale, delta_event(2, b=2))

    assert stale.state == {"b": 2}
    stored = await store.get("u", "s")
    assert stored is not None
    assert stored.state == {"a": 1, "b": 2}
    assert [e.id for e in stored.events] == ["e1", "e2"]


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


async def test_concurrent_appends_to_one_session_keep_call_order(store: SessionService) -> None:
    session = await store.get_or_create("u", "s")
    order: list[str] = []

    async def writer(w: int) -> None:
        for i in range(20):
            event = Event.new("inv", f"w{w}", id=f"w{w}-{i}", actions=EventActions(state_delta={"last": w}))
            await store.append_event(session, event)
            order.append(event.id)
            await asyncio.sleep(0)

    await asyncio.gather(*(writer(w) for w in range(5)))

    stored = await store.get("u", "s")
    assert stored is not None
    assert [e.id for e in stored.events] == order
    assert len(order) == 100
    assert stored.state == {"last": int(order[-1][1])}
