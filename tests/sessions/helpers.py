"""Events that exercise every part of an `Event`, for the session tests."""

from __future__ import annotations

from typing import Any

from adk.events import (
    Choice,
    ErrorInfo,
    Event,
    EventActions,
    LlmResponse,
    Message,
    ObjectType,
    ToolCall,
    Usage,
)


def delta_event(n: int = 0, **delta: Any) -> Event:
    """A small event numbered `n` (its id is `e<n>`) carrying `delta`."""
    return Event.new("inv", "agent", id=f"e{n}", actions=EventActions(state_delta=delta))


def rich_events() -> list[Event]:
    """One event of each kind the runner stores, with every optional part filled in."""
    calls = [
        ToolCall.of("get_weather", '{"city": "Zürich", "days": [1, 2]}', id="call_1"),
        ToolCall.of("lookup", "{}", id="call_2"),
    ]
    response = LlmResponse.calls(
        *calls,
        content="let me check 🌦",
        model="scripted",
        usage=Usage(prompt_tokens=12, completion_tokens=7, total_tokens=19),
    )
    return [
        Event.new("inv", "user", choices=[Choice(message=Message.user("hi\nthere \u2603"))]),
        Event.from_response("inv", "agent", response, branch="root.agent", long_running_tool_ids=["call_2"]),
        Event.new(
            "inv",
            "agent",
            object=ObjectType.TOOL_RESPONSE,
            choices=[Choice(message=Message.tool('{"t": 21.5}', tool_call_id="call_1", name="get_weather"))],
        ),
        Event.new(
            "inv",
            "agent",
            object=ObjectType.STATE_UPDATE,
            actions=EventActions(
                state_delta={"prefs": {"units": "si", "nested": [1, 2.5, None, {"x": True}]}, "gone": None},
                transfer_to_agent="helper",
                escalate=True,
            ),
        ),
        Event.from_error("inv", "agent", ErrorInfo(type="ToolError", message="boom", where="tool:lookup")),
        Event.new("inv", "runner", object=ObjectType.RUNNER_COMPLETION, done=True),
    ]
