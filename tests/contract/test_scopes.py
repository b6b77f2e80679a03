"""State scopes, kept by every store: `user:` keys per user, `app:` keys per store, `temp:` never."""

from __future__ import annotations

from typing import Any

from adk.sessions import SessionService
from adk.sessions.base import merge_scopes, split_delta
from tests.sessions.helpers import delta_event


def scoped(n: int, delta: dict[str, Any]) -> Any:
    return delta_event(n, **delta)


async def test_user_keys_are_shared_by_the_sessions_of_one_user_only(
    store: SessionService, twin: SessionService
) -> None:
    first = await store.get_or_create("ada", "s1")
    await store.get_or_create("ada", "s2")
    await store.get_or_create("bob", "s1")

    await store.append_event(first, scoped(1, {"user:name": "Ada", "topic": "tea"}))

    assert first.state == {"user:name": "Ada", "topic": "tea"}
    other = await twin.get("ada", "s2")
    assert other is not None
    assert other.state == {"user:name": "Ada"}
    stranger = await twin.get("bob", "s1")
    assert stranger is not None
    assert stranger.state == {}
    assert await twin.user_state("ada") == {"user:name": "Ada"}
    assert await twin.user_state("bob") == {}


async def test_app_keys_are_shared_by_every_session(store: SessionService, twin: SessionService) -> None:
    first = await store.get_or_create("ada", "s1")
    await store.append_event(first, scoped(1, {"app:motd": "hello", "user:lang": "fr"}))

    later = await twin.get_or_create("zed", "new")
    assert later.state == {"app:motd": "hello"}
    assert await twin.app_state() == {"app:motd": "hello"}
    leased = await twin.acquire("zed", "other", "owner-1")
    assert leased.state == {"app:motd": "hello"}


async def test_a_scoped_key_changed_in_one_session_shows_in_the_others_next_read(
    store: SessionService, twin: SessionService
) -> None:
    one = await store.get_or_create("ada", "s1")
    two = await store.get_or_create("ada", "s2")
    await store.append_event(one, scoped(1, {"user:n": 1, "app:n": 1}))
    await store.append_event(two, scoped(1, {"user:n": 2}))
    await store.append_event(one, scoped(2, {"app:n": None}))

    again = await twin.get("ada", "s1")
    assert again is not None
    assert again.state == {"user:n": 2}
    assert await twin.app_state() == {}
    # The session's own keys stay its own; replacing a value replaces it whole.
    await store.append_event(two, scoped(2, {"user:prefs": {"a": 1}}))
    await store.append_event(two, scoped(3, {"user:prefs": {"b": 2}}))
    assert await twin.user_state("ada") == {"user:n": 2, "user:prefs": {"b": 2}}


async def test_temp_keys_are_never_stored(store: SessionService, twin: SessionService) -> None:
    session = await store.get_or_create("ada", "s1")
    await store.append_event(session, scoped(1, {"temp:scratch": 1, "kept": True, "user:temp:x": 2}))

    assert session.state == {"kept": True, "user:temp:x": 2}
    stored = await twin.get("ada", "s1")
    assert stored is not None
    assert stored.state == {"kept": True, "user:temp:x": 2}


async def test_deleting_a_session_keeps_the_user_and_app_state(store: SessionService) -> None:
    session = await store.get_or_create("ada", "s1")
    await store.append_event(session, scoped(1, {"user:a": 1, "app:b": 2, "c": 3}))
    await store.delete("ada", "s1")

    fresh = await store.get_or_create("ada", "s1")
    assert fresh.state == {"user:a": 1, "app:b": 2}


def test_split_delta_sorts_keys_by_prefix_and_drops_temp_ones() -> None:
    parts = split_delta({"a": 1, "user:b": 2, "app:c": None, "temp:d": 4, "userx": 5})
    assert (parts.session, parts.user, parts.app) == ({"a": 1, "userx": 5}, {"user:b": 2}, {"app:c": None})
    plain = split_delta({"a": 1})
    assert (plain.session, plain.user, plain.app) == ({"a": 1}, {}, {})


def test_merge_scopes_replaces_the_scoped_keys_a_state_held_before() -> None:
    state = {"a": 1, "user:old": 1, "app:old": 2, "temp:x": 3}
    merge_scopes(state, {"user:new": 4}, {"app:new": 5})
    assert state == {"a": 1, "user:new": 4, "app:new": 5}
