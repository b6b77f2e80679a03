"""AguiTranslator: the exact AG-UI event sequence for every kind of adk event."""

from __future__ import annotations

import dataclasses
from typing import Any

from ag_ui.core import BaseEvent, RunAgentInput, ToolMessage, UserMessage

from adk.agents import LlmAgent
from adk.agui import AguiTranslator, TranslateContext
from adk.events import Event, LlmResponse, Message, ObjectType, ToolCall
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests.agui.support import (
    CTX,
    INV,
    call_chunk,
    chunk,
    complete,
    completion,
    discarded,
    error,
    run_finished,
    run_started,
    state_update,
    text,
    tool_call,
    tool_response,
    tool_result,
    verified,
    weather,
    wire,
)


async def translate(
    events: list[Event], state: dict[str, Any] | None = None, **options: Any
) -> list[dict[str, Any]]:
    """start, every event, finish: the whole stream, as wire dicts."""
    t = AguiTranslator(options.pop("ctx", CTX), **options)
    out: list[BaseEvent] = await t.start(state or {})
    for event in events:
        out += await t.translate(event)
    out += await t.finish()
    return verified(wire(out))


def snapshot(state: dict[str, Any]) -> dict[str, Any]:
    return {"type": "STATE_SNAPSHOT", "snapshot": state}


START = [run_started(), snapshot({})]


async def test_start_sends_run_started_then_the_session_state() -> None:
    assert await translate([completion()], {"city": "Paris"}) == [
        run_started(),
        snapshot({"city": "Paris"}),
        run_finished(),
    ]


async def test_streamed_deltas_become_one_text_message_ended_by_the_complete_one() -> None:
    events = [chunk("Hel"), chunk(""), chunk("lo"), complete("Hello"), completion()]
    assert await translate(events) == [
        *START,
        *text("id1", "Hel", "lo"),
        run_finished(),
    ]


async def test_a_message_that_was_not_streamed_is_sent_whole() -> None:
    assert await translate([complete("Hello"), completion()]) == [
        *START,
        *text("id1", "Hello"),
        run_finished(),
    ]


async def test_the_users_own_message_and_empty_answers_send_nothing() -> None:
    user = Event.new("r1", "user", choices=complete("x").choices)
    user.choices[0].message = Message.user("hi")
    assert await translate([user, complete(""), completion()]) == [*START, run_finished()]


async def test_tool_calls_follow_the_streamed_text_and_are_parented_to_its_message() -> None:
    calls = [ToolCall.of("weather", '{"city": "Paris"}', id="call_1"), ToolCall.of("clock", "", id="call_2")]
    events = [chunk("Checking"), complete("Checking", *calls), tool_response("call_1", '{"temp": 21}')]
    events += [tool_response("call_2", '"noon"', name="clock"), completion()]
    assert await translate(events) == [
        *START,
        *text("id1", "Checking"),
        *tool_call("call_1", "weather", '{"city": "Paris"}', parent="id1"),
        *tool_call("call_2", "clock", "", parent="id1"),
        tool_result("id2", "call_1", '{"temp": 21}'),
        tool_result("id3", "call_2", '"noon"'),
        run_finished(),
    ]


async def test_tool_calls_without_text_name_no_parent_message() -> None:
    calls = [ToolCall.of("weather", "{}", id="call_1"), ToolCall.of("clock", "{}", id="call_2")]
    assert await translate([complete("", *calls), completion()]) == [
        *START,
        *tool_call("call_1", "weather", "{}"),
        *tool_call("call_2", "clock", "{}"),
        run_finished(),
    ]


async def test_streamed_arguments_go_out_as_deltas_under_the_text_streamed_before_them() -> None:
    call = ToolCall.of("weather", '{"city": "Paris"}', id="call_1")
    events = [chunk("Let me"), chunk(" check"), call_chunk("call_1", "weather", '{"city":')]
    events += [call_chunk("call_1", "weather", ' "Paris"}'), complete("Let me check", call), completion()]
    assert await translate(events) == [
        *START,
        {"type": "TEXT_MESSAGE_START", "messageId": "id1", "role": "assistant", "name": "helper"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id1", "delta": "Let me"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id1", "delta": " check"},
        *tool_call("call_1", "weather", '{"city":', ' "Paris"}', parent="id1")[:-1],
        {"type": "TEXT_MESSAGE_END", "messageId": "id1"},
        {"type": "TOOL_CALL_END", "toolCallId": "call_1"},
        run_finished(),
    ]


async def test_a_call_streamed_before_any_text_names_no_parent_and_the_text_is_its_own_message() -> None:
    call = ToolCall.of("weather", "{}", id="call_1")
    events = [
        call_chunk("call_1", "weather", "{}"),
        chunk("Checking"),
        complete("Checking", call),
        completion(),
    ]
    assert await translate(events) == [
        *START,
        *tool_call("call_1", "weather", "{}")[:-1],
        {"type": "TEXT_MESSAGE_START", "messageId": "id1", "role": "assistant", "name": "helper"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id1", "delta": "Checking"},
        {"type": "TEXT_MESSAGE_END", "messageId": "id1"},
        {"type": "TOOL_CALL_END", "toolCallId": "call_1"},
        run_finished(),
    ]


def assistant(message_id: str, *calls: tuple[str, str, str], **fields: Any) -> dict[str, Any]:
    """An assistant message of a MESSAGES_SNAPSHOT, holding `calls` (id, name, arguments)."""
    tool_calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
    return {"id": message_id, "role": "assistant", **fields, **({"toolCalls": tool_calls} if calls else {})}


async def test_complete_calls_unlike_the_streamed_ones_are_corrected_by_a_messages_snapshot() -> None:
    client = [UserMessage(id="u1", content="hi")]
    events = [call_chunk("call_1", "weather", '{"city": "Paris"}'), call_chunk("call_2", "clock", "{}")]
    events += [complete("", ToolCall.of("weather", '{"city": "Oslo"}', id="call_1")), completion()]
    assert await translate(events, messages=client) == [
        *START,
        *tool_call("call_1", "weather", '{"city": "Paris"}')[:-1],
        *tool_call("call_2", "clock", "{}")[:-1],
        {"type": "TOOL_CALL_END", "toolCallId": "call_1"},
        {"type": "TOOL_CALL_END", "toolCallId": "call_2"},  # streamed, then dropped by after_model
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "u1", "role": "user", "content": "hi"},
                assistant("call_1", ("call_1", "weather", '{"city": "Oslo"}')),
            ],
        },
        run_finished(),
    ]


def pending(*call_ids: str, client: bool = False) -> Event:
    kind = ObjectType.CLIENT_PENDING if client else ObjectType.TOOL_PENDING
    return Event.new(INV, "helper", object=kind, long_running_tool_ids=list(call_ids))


def paused(*call_ids: str) -> Event:
    return Event.new(INV, "helper", object=ObjectType.RUNNER_PAUSED, long_running_tool_ids=list(call_ids))


def served(**fields: Any) -> TranslateContext:
    """The context of a served run whose input carries `fields` (tools, messages)."""
    body = {"threadId": "t1", "runId": INV, "messages": [], **fields}
    return dataclasses.replace(CTX, input=RunAgentInput.model_validate(body))


async def test_a_paused_run_finishes_naming_the_client_tool_calls_left_waiting() -> None:
    calls = [
        ToolCall.of("weather", "{}", id="call_1"),
        ToolCall.of("confirm", "{}", id="call_2"),
        ToolCall.of("render", "{}", id="call_3"),  # a long-running tool of the server's
    ]
    events = [
        complete("", *calls),
        tool_response("call_1", "21"),
        pending("call_2", client=True),
        pending("call_3"),
    ]
    ctx = served(tools=[{"name": "confirm", "description": "Ask the user"}])
    assert (await translate([*events, paused("call_2", "call_3")], ctx=ctx))[-1] == {
        **run_finished(),
        "outcome": {"type": "success", "pendingToolCallIds": ["call_2"]},  # only the client's
    }


async def test_a_result_the_client_sent_is_not_echoed() -> None:
    sent = ToolMessage(id="m1", content="yes", tool_call_id="call_2")
    events = [tool_response("call_2", "yes", name="confirm"), complete("Done"), completion()]
    assert await translate(events, messages=[sent]) == [*START, *text("id1", "Done"), run_finished()]


async def test_the_users_own_state_delta_is_not_echoed() -> None:
    user = Event.new("r1", "user", choices=complete("x").choices)
    user.choices[0].message = Message.user("hi")
    user.actions.state_delta["theme"] = "dark"
    assert await translate([user, state_update(city="Oslo"), completion()], {"theme": "dark"}) == [
        run_started(),
        snapshot({"theme": "dark"}),
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/city", "value": "Oslo"}]},
        run_finished(),
    ]


async def test_a_complete_text_unlike_the_streamed_one_is_corrected_by_a_messages_snapshot() -> None:
    client = [UserMessage(id="u1", content="hi")]
    events = [chunk("draft"), complete("final"), completion()]
    assert await translate(events, messages=client) == [
        *START,
        *text("id1", "draft"),
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "u1", "role": "user", "content": "hi"},
                {"id": "id1", "role": "assistant", "name": "helper", "content": "final"},
            ],
        },
        run_finished(),
    ]


async def test_a_discarded_attempt_ends_what_it_streamed_and_a_snapshot_drops_it() -> None:
    client = [UserMessage(id="u1", content="hi")]
    events = [complete("", ToolCall.of("weather", "{}", id="call_1")), tool_response("call_1", "21")]
    events += [
        chunk("The wea"),
        call_chunk("call_2", "weather", '{"ci'),
        discarded(),
        chunk("It is"),
        chunk(" 21"),
        complete("It is 21"),
        completion(),
    ]
    assert await translate(events, messages=client) == [
        *START,
        *tool_call("call_1", "weather", "{}"),
        tool_result("id1", "call_1", "21"),
        *text("id2", "The wea")[:-1],
        *tool_call("call_2", "weather", '{"ci', parent="id2")[:-1],
        {"type": "TEXT_MESSAGE_END", "messageId": "id2"},
        {"type": "TOOL_CALL_END", "toolCallId": "call_2"},
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "u1", "role": "user", "content": "hi"},
                assistant("call_1", ("call_1", "weather", "{}")),
                {"id": "id1", "role": "tool", "content": "21", "toolCallId": "call_1"},
            ],
        },
        *text("id3", "It is", " 21"),
        run_finished(),
    ]


async def test_a_discard_before_any_text_went_out_sends_nothing() -> None:
    assert await translate([discarded(), complete("ok")]) == [
        *START,
        *text("id1", "ok"),
        run_finished(),
    ]


async def test_branches_stream_into_separate_messages() -> None:
    events = [chunk("a", branch="p.x"), chunk("b", branch="p.y"), chunk("c", branch="p.x")]
    events += [complete("b", branch="p.y"), complete("ac", branch="p.x"), completion()]
    assert await translate(events) == [
        *START,
        {"type": "TEXT_MESSAGE_START", "messageId": "id1", "role": "assistant", "name": "helper"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id1", "delta": "a"},
        {"type": "TEXT_MESSAGE_START", "messageId": "id2", "role": "assistant", "name": "helper"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id2", "delta": "b"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id1", "delta": "c"},
        {"type": "TEXT_MESSAGE_END", "messageId": "id2"},
        {"type": "TEXT_MESSAGE_END", "messageId": "id1"},
        run_finished(),
    ]


async def test_state_deltas_become_json_patch_adds_and_removes() -> None:
    events = [state_update(city="Paris", **{"a/b~c": 1}), state_update(city=None, gone=None, unit="C")]
    assert await translate([*events, completion()], {"gone": True}) == [
        run_started(),
        snapshot({"gone": True}),
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "add", "path": "/city", "value": "Paris"},
                {"op": "add", "path": "/a~1b~0c", "value": 1},
            ],
        },
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "remove", "path": "/city"},
                {"op": "remove", "path": "/gone"},
                {"op": "add", "path": "/unit", "value": "C"},
            ],
        },
        run_finished(),
    ]


async def test_a_delta_riding_on_another_event_follows_that_events_translation() -> None:
    result = tool_response("call_1", "21")
    result.actions.state_delta["last"] = 21
    done = completion()
    done.actions.state_delta["n"] = 1
    assert (await translate([result, state_update(nothing=None), done]))[2:] == [
        tool_result("id1", "call_1", "21"),
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/last", "value": 21}]},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": 1}]},
        run_finished(),
    ]


async def test_an_error_event_is_run_error_and_nothing_follows() -> None:
    events = [chunk("Hel"), error(), complete("late"), completion()]
    assert await translate(events) == [
        *START,
        {"type": "TEXT_MESSAGE_START", "messageId": "id1", "role": "assistant", "name": "helper"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id1", "delta": "Hel"},
        {"type": "RUN_ERROR", "message": "boom (at model:scripted)", "code": "ServerError"},
    ]


async def test_the_end_of_events_without_a_completion_ends_open_messages_and_the_run() -> None:
    assert await translate([chunk("Hel")]) == [
        *START,
        *text("id1", "Hel"),
        run_finished(),
    ]


async def test_fail_turns_an_exception_into_run_error_once() -> None:
    t = AguiTranslator(CTX)
    assert wire(await t.fail(ValueError("bad thread"))) == [
        {"type": "RUN_ERROR", "message": "bad thread", "code": "ValueError"}
    ]
    assert await t.fail(ValueError("again")) == []
    assert await t.translate(complete("late")) == []
    assert await t.finish() == []


async def test_a_real_streamed_tool_run_translates_to_the_complete_sequence() -> None:
    model = ScriptedModel(
        [LlmResponse.calls(ToolCall.of("weather", '{"city": "Paris"}', id="call_1")), "Sunny in Paris"]
    )
    runner = Runner(LlmAgent("helper", model=model, tools=[weather]))
    t = AguiTranslator(CTX, messages=[UserMessage(id="u1", content="Weather?")])
    out = await t.start({})
    async for event in runner.run("u", "t1", "Weather?", stream=True, invocation_id="r1"):
        out += await t.translate(event)
    out += await t.finish()
    assert wire(out) == [
        *START,
        *tool_call("call_1", "weather", '{"city":', ' "Paris"}'),
        tool_result("id1", "call_1", '{"city":"Paris","sky":"sunny"}'),
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/last_city", "value": "Paris"}]},
        *text("id2", "Sunny", " in", " Paris"),
        run_finished(),
    ]
