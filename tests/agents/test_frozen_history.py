"""What a hook receives cannot change the stored history: messages are frozen, and a hook that
wants other messages puts changed copies in its own request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk.agents import LlmAgent
from adk.callbacks.results import Cont
from adk.context import ModelContext
from adk.runner import Runner
from adk.sessions import InMemorySessionService, SessionService, SqliteSessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, run, summary

REAL = Tool("t", lambda args, ctx: "real")


class EditInPlace:
    """On the turn's second model call, rewrites the tool's result in the request, in place."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        last = ctx.request.messages[-1]
        if last.role == "tool":
            last.content = "forged"  # type: ignore[misc]
        return Cont(ctx)


class EditACopy:
    """Same, through a changed copy in the request's own list."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        messages = ctx.request.messages
        if messages[-1].role == "tool":
            messages[-1] = messages[-1].model_copy(update={"content": "forged"})
        return Cont(ctx)


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
    else:
        async with SqliteSessionService(tmp_path / "s.sqlite3") as sqlite:
            yield sqlite


async def history(store: SessionService) -> list[str]:
    session = await store.get("u", "s")
    assert session is not None
    return [e.content for e in session.events]


async def test_a_hook_that_edits_a_request_message_in_place_fails_and_history_stays(
    store: SessionService,
) -> None:
    model = ScriptedModel([calls(call("t", "c1")), "unused"])
    agent = LlmAgent("root", model=model, tools=[REAL], callbacks=[EditInPlace()])

    events = await run(Runner(agent, session_service=store))

    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "", [("t", "{}")]),
        ("tool", "root", "t", "c1", "real"),
        ("error", "root", "CallbackError", "callback:EditInPlace.before_model"),
    ]
    assert (
        events[-1].error is not None
        and "FrozenInstanceError: cannot assign to field" in events[-1].error.message
    )
    assert await history(store) == ["hi", "", "real", ""]
    assert len(model.requests) == 1


async def test_a_hook_that_puts_a_changed_copy_in_its_request_changes_only_that_request(
    store: SessionService,
) -> None:
    model = ScriptedModel([calls(call("t", "c1")), "done", "again"])
    agent = LlmAgent("root", model=model, tools=[REAL], callbacks=[EditACopy()])
    runner = Runner(agent, session_service=store)

    await run(runner)
    await run(runner, "next")

    assert model.requests[1].messages[-1].content == "forged"
    assert [m.content for m in model.requests[2].messages] == ["hi", "", "real", "done", "next"]
    assert await history(store) == ["hi", "", "real", "done", "", "next", "again", ""]  # "": completions
