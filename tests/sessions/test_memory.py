"""The in-memory store as the runner calls it: at once, unless a subclass overrides its calls."""

from __future__ import annotations

import time

from adk.agents import LlmAgent
from adk.events import Event
from adk.runner import Runner
from adk.sessions import InMemorySessionService, Session
from adk.testing import ScriptedModel


class Audited(InMemorySessionService):
    """An in-memory store that records the events appended through its `append_event`."""

    def __init__(self) -> None:
        super().__init__()
        self.appended: list[str] = []

    async def append_event(self, session: Session, event: Event) -> None:
        self.appended.append(event.object)
        await super().append_event(session, event)


async def test_a_subclass_that_overrides_append_event_sees_every_stored_event() -> None:
    store = Audited()
    runner = Runner(LlmAgent("root", model=ScriptedModel(["hello"])), session_service=store)
    events = [e async for e in runner.run("u", "s", "hi")]
    assert store.appended == [e.object for e in events] == ["chat.completion"] * 2 + ["runner.completion"]


def test_a_new_session_is_empty() -> None:
    before = time.time()
    session = Session._empty("s", "u")
    assert (session.id, session.user_id, session.state, session.events, session.lease) == (
        "s",
        "u",
        {},
        [],
        None,
    )
    assert session.histories == {}
    assert before <= session.updated_at <= time.time()
    assert Session._empty("s", "u").events is not session.events
