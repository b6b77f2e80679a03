"""State scopes through the runner: `user:` per user, `app:` across users, `temp:` never stored."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adk import AgentContext, Cont, LlmAgent, ModelContext, Runner, SqliteSessionService, ToolContext
from adk.sessions import InMemorySessionService, SessionService
from adk.testing import ScriptedModel, call_tool


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    async with SqliteSessionService(tmp_path / "s.sqlite3") as sqlite:
        yield sqlite


def remember(ctx: ToolContext, key: str, value: str) -> str:
    """Remember a value."""
    ctx.state[key] = value
    return "ok"


class Sees:
    """Records, before each model call, the state keys the agent sees."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        self.seen.append(dict(ctx.state))
        return Cont(ctx)


def agent(*steps: Any, callbacks: list[Any] | None = None) -> LlmAgent:
    return LlmAgent("a", model=ScriptedModel(steps), tools=[remember], callbacks=callbacks or [])


async def turn(runner: Runner, user: str, session: str) -> None:
    [_ async for _ in runner.run(user, session, "hi")]


async def test_user_keys_follow_the_user_into_another_session_and_app_keys_every_user(
    store: SessionService,
) -> None:
    sees = Sees()
    steps = [
        call_tool("remember", key="user:name", value="Ada"),
        call_tool("remember", key="app:greeting", value="Hello"),
        call_tool("remember", key="topic", value="tea"),
        "Noted.",
        "Hello again, Ada.",
        "Hello, stranger.",
        "Back to tea.",
    ]
    runner = Runner(agent(*steps, callbacks=[sees]), session_service=store)

    await turn(runner, "ada", "first")
    await turn(runner, "ada", "second")
    await turn(runner, "bob", "first")
    await turn(runner, "ada", "first")  # a session taken again (SQLite reads only what is new)

    assert sees.seen[-3] == {"user:name": "Ada", "app:greeting": "Hello"}  # ada's second session
    assert sees.seen[-2] == {"app:greeting": "Hello"}  # bob
    assert sees.seen[-1] == {"user:name": "Ada", "app:greeting": "Hello", "topic": "tea"}
    first = await store.get("ada", "first")
    assert first is not None
    assert first.state == {"user:name": "Ada", "app:greeting": "Hello", "topic": "tea"}
    assert await store.user_state("ada") == {"user:name": "Ada"}
    assert await store.user_state("bob") == {}
    assert await store.app_state() == {"app:greeting": "Hello"}


async def test_temp_keys_live_for_one_invocation_and_are_never_stored(store: SessionService) -> None:
    seen: list[Any] = []

    class Scratch:
        def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
            seen.append(ctx.state.get("temp:scratch"))
            ctx.state["temp:scratch"] = object()  # any value: it is never written anywhere
            ctx.state["temp:count"] = 1
            return Cont(ctx)

        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            seen.append(sorted(ctx.state))
            return Cont(ctx)

    runner = Runner(agent("One.", "Two.", callbacks=[Scratch()]), session_service=store)
    await turn(runner, "u", "s")
    await turn(runner, "u", "s")

    assert seen == [None, ["temp:count", "temp:scratch"], None, ["temp:count", "temp:scratch"]]
    stored = await store.get("u", "s")
    assert stored is not None
    assert stored.state == {}
    assert all(not e.actions.state_delta for e in stored.events)


async def test_a_scoped_key_deleted_in_one_session_is_gone_from_the_others(store: SessionService) -> None:
    class Forget:
        def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
            if "user:name" in ctx.state and ctx.invocation.session.id == "second":
                del ctx.state["user:name"]
            return Cont(ctx)

    steps = [call_tool("remember", key="user:name", value="Ada"), "Noted.", "Forgot.", "Who are you?"]
    runner = Runner(agent(*steps, callbacks=[Forget()]), session_service=store)
    await turn(runner, "ada", "first")
    await turn(runner, "ada", "second")
    await turn(runner, "ada", "first")

    first = await store.get("ada", "first")
    assert first is not None
    assert first.state == {}
    assert await store.user_state("ada") == {}
