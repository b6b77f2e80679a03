"""A session's per-branch history: what an agent sees, kept up to date as events are added."""

from __future__ import annotations

from adk.events import Choice, Event, LlmResponse, Message, ToolCall
from adk.sessions.base import Session


def said(text: str, *, branch: str = "", author: str = "agent") -> Event:
    return Event.new("inv", author, branch=branch, choices=[Choice(message=Message.assistant(text))])


def asked(*ids: str) -> Event:
    return Event.from_response("inv", "agent", LlmResponse.calls(*(ToolCall.of("t", id=i) for i in ids)))


def answered(call_id: str) -> Event:
    message = Message.tool("ok", tool_call_id=call_id, name="t")
    return Event.new("inv", "agent", choices=[Choice(message=message)])


def contents(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


def test_read_in_steps_equals_read_at_once() -> None:
    events = [
        said("hi", author="user"),
        said("root", branch="root"),
        said("left", branch="root.left"),
        said("right", branch="root.right"),
        asked("c1", "c2"),
        answered("c1"),
        said("after the cut", author="user"),
        said("deep", branch="root.left.deeper"),
    ]
    growing = Session(id="s", user_id="u")
    for event in events:
        growing.events.append(event)
        growing.history("root.left")
        growing.history("")
    whole = Session(id="s", user_id="u", events=list(events))

    for branch in ("", "root", "root.left", "root.right"):
        assert growing.history(branch) == whole.history(branch), branch
    assert contents(whole.history("root.left")) == [
        ("assistant", "hi"),
        ("assistant", "root"),
        ("assistant", "left"),
        ("assistant", ""),
        ("tool", "ok"),
        ("tool", "Error: the run was stopped before this call returned"),
        ("assistant", "after the cut"),
    ]


def test_only_new_events_are_read() -> None:
    session = Session(id="s", user_id="u", events=[said("first")])
    first = session.history("")
    session.events[0].choices = [Choice(message=Message.assistant("changed afterwards"))]
    session.events.append(said("second"))

    assert session.history("") is first
    assert contents(first) == [("assistant", "first"), ("assistant", "second")]


def test_replaced_events_are_read_again() -> None:
    session = Session(id="s", user_id="u", events=[said("a"), said("b")])
    assert contents(session.history("")) == [("assistant", "a"), ("assistant", "b")]

    session.events = [said("c"), said("d")]
    assert contents(session.history("")) == [("assistant", "c"), ("assistant", "d")]
    session.events = [said("e")]
    assert contents(session.history("")) == [("assistant", "e")]
