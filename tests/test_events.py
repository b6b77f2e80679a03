"""Events: constructors, deep clones, a lossless JSON round-trip, and the response helpers."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from adk.events import (
    Choice,
    ErrorInfo,
    Event,
    EventActions,
    FunctionCall,
    LlmResponse,
    Message,
    ObjectType,
    ToolCall,
    Usage,
    new_id,
)
from adk.events import (
    new_event as _event,
)

# --- strategies -----------------------------------------------------------------------------------

_floats = st.floats(allow_nan=False, allow_infinity=False)  # JSON has no NaN or infinity
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _floats | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
_optional_text = st.none() | st.text(max_size=10)
_tool_calls = st.builds(
    ToolCall,
    id=st.text(max_size=10),
    function=st.builds(FunctionCall, name=st.text(max_size=10), arguments=st.text(max_size=30)),
)
_messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.text(max_size=30),
    tool_calls=st.lists(_tool_calls, max_size=2).map(tuple),
    tool_call_id=_optional_text,
    name=_optional_text,
)
_choices = st.builds(
    Choice,
    index=st.integers(0, 3),
    message=st.none() | _messages,
    delta=st.none() | _messages,
    finish_reason=st.none() | st.sampled_from(["stop", "tool_calls", "length"]),
)
_object_types = [v for k, v in vars(ObjectType).items() if k.isupper()]
events = st.builds(
    Event,
    id=st.text(max_size=12),
    object=st.sampled_from(_object_types) | st.text(max_size=10),
    created=_floats,
    model=st.text(max_size=10),
    choices=st.lists(_choices, max_size=2),
    usage=st.none() | st.builds(Usage, prompt_tokens=st.integers(0), completion_tokens=st.integers(0)),
    error=st.none()
    | st.builds(ErrorInfo, type=st.text(max_size=10), message=st.text(), where=_optional_text),
    done=st.booleans(),
    is_partial=st.booleans(),
    invocation_id=st.text(max_size=10),
    author=st.text(max_size=10),
    timestamp=_floats,
    branch=st.text(max_size=10),
    actions=st.builds(
        EventActions,
        state_delta=st.dictionaries(st.text(max_size=8), _json, max_size=4),
        transfer_to_agent=_optional_text,
        escalate=st.booleans(),
    ),
    long_running_tool_ids=st.lists(st.text(max_size=8), max_size=3),
)


def _full_event() -> Event:
    """An event with every nested part present, for the clone tests."""
    return Event.new(
        "inv",
        "agent",
        choices=[
            Choice(
                message=Message.assistant("hi", [ToolCall.of("f", '{"a": 1}', id="c1")]),
                delta=Message.assistant("h"),
            )
        ],
        usage=Usage(prompt_tokens=1, completion_tokens=2, total_tokens=3),
        error=ErrorInfo(type="E", message="m", where="model"),
        actions=EventActions(state_delta={"cart": {"items": [1, 2]}}, transfer_to_agent="b"),
        long_running_tool_ids=["c1"],
    )


# --- constructors ---------------------------------------------------------------------------------


def test_new_fills_in_identity_and_defaults() -> None:
    before = time.time()
    event = Event.new("inv-1", "agent", branch="root.agent")
    after = time.time()

    assert (event.invocation_id, event.author, event.branch) == ("inv-1", "agent", "root.agent")
    assert before <= event.timestamp <= after
    assert before <= event.created <= after
    assert event.object == ObjectType.CHAT_COMPLETION
    assert (event.choices, event.usage, event.error) == ([], None, None)
    assert (event.done, event.is_partial) == (False, False)
    assert event.actions == EventActions(state_delta={}, transfer_to_agent=None, escalate=False)
    assert event.long_running_tool_ids == []
    assert Event.new("inv-1", "agent").id != event.id


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(TypeError, match="colour"):
        Event.new("inv", "agent", colour="blue")
    with pytest.raises(ValidationError, match="colour"):
        Event.model_validate({"colour": "blue"})
    with pytest.raises(ValidationError, match="state_delta"):
        EventActions.model_validate({"state_delta": "not a dict"})
    with pytest.raises(ValidationError, match="role"):
        Event.model_validate_json('{"choices": [{"message": {"role": "robot"}}]}')


def test_validation_converts_what_json_cannot_say() -> None:
    message = {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f"}}]}
    event = Event.model_validate_json(json.dumps({"choices": [{"message": message}]}))
    assert event.tool_calls == (ToolCall.of("f", id="c"),)
    assert isinstance(event.choices[0], Choice)


def test_from_error_with_an_exception() -> None:
    event = Event.from_error("inv", "agent", ValueError("bad value"), where="tool:lookup", branch="b")

    assert event.object == ObjectType.ERROR
    assert event.error == ErrorInfo(type="ValueError", message="bad value", where="tool:lookup")
    assert event.done is True
    assert (event.invocation_id, event.author, event.branch) == ("inv", "agent", "b")


def test_from_error_with_error_info() -> None:
    info = ErrorInfo(type="RetriesExhausted", message="gave up", where="model")

    assert Event.from_error("inv", "agent", info).error == info
    relocated = Event.from_error("inv", "agent", info, where="agent:root")
    assert relocated.error == ErrorInfo(type="RetriesExhausted", message="gave up", where="agent:root")
    assert info.where == "model"


def test_from_error_defaults_can_be_overridden() -> None:
    event = Event.from_error("inv", "agent", KeyError("k"), done=False, object=ObjectType.TOOL_RESPONSE)
    assert (event.done, event.object) == (False, ObjectType.TOOL_RESPONSE)
    assert event.error == ErrorInfo(type="KeyError", message="'k'")


def test_from_response_copies_every_response_field() -> None:
    response = LlmResponse(
        id="resp-1",
        object=ObjectType.CHAT_COMPLETION_CHUNK,
        created=123.5,
        model="m-1",
        choices=[Choice(delta=Message.assistant("par"), finish_reason=None)],
        usage=Usage(prompt_tokens=4, completion_tokens=5, total_tokens=9),
        error=ErrorInfo(type="E", message="m"),
        done=True,
        is_partial=True,
    )
    # Every field differs from its default, so a field left uncopied would show.
    for field in dataclasses.fields(LlmResponse):
        default = field.default_factory() if callable(field.default_factory) else field.default
        assert getattr(response, field.name) != default, field.name

    event = Event.from_response("inv", "agent", response, branch="x")

    for field in dataclasses.fields(LlmResponse):
        assert getattr(event, field.name) == getattr(response, field.name), field.name
    assert (event.invocation_id, event.author, event.branch) == ("inv", "agent", "x")


def test_the_frameworks_events_built_through_slots_equal_the_constructors() -> None:
    # `_event` sets every field itself: one it forgot (a field added later) fails the comparison
    fast = _event("inv", "agent", ObjectType.TOOL_RESPONSE, "a.b")
    slow = Event(
        invocation_id="inv",
        author="agent",
        object=ObjectType.TOOL_RESPONSE,
        branch="a.b",
        id=fast.id,
        created=fast.created,
        timestamp=fast.timestamp,
    )
    assert fast == slow
    assert fast.actions is not _event("inv", "agent").actions  # nothing mutable is shared
    assert fast.choices is not _event("inv", "agent").choices
    assert fast.long_running_tool_ids is not _event("inv", "agent").long_running_tool_ids
    state = Event.state_update("inv", "agent", {"k": 1}, branch="b")
    assert state == Event(
        invocation_id="inv",
        author="agent",
        branch="b",
        object=ObjectType.STATE_UPDATE,
        actions=EventActions(state_delta={"k": 1}),
        id=state.id,
        created=state.created,
        timestamp=state.timestamp,
    )


def test_from_response_fields_override_the_response() -> None:
    response = LlmResponse.text("hello", id="resp-1")
    event = Event.from_response("inv", "agent", response, id="event-1", done=False)
    assert (event.id, event.done, event.content) == ("event-1", False, "hello")
    assert (response.id, response.done) == ("resp-1", True)


# --- messages are frozen ----------------------------------------------------------------------------


def test_a_message_cannot_change_in_place_and_a_copy_can_differ() -> None:
    call = ToolCall.of("f", '{"x": 1}', id="c1")
    message = Message.assistant("hi", [call])

    with pytest.raises(dataclasses.FrozenInstanceError, match="content"):
        message.content = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="arguments"):
        message.tool_calls[0].function.arguments = "{}"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        message.tool_calls.append(ToolCall.of("g"))  # type: ignore[attr-defined]
    changed = message.model_copy(update={"content": "changed"})

    assert (message.content, changed.content, changed.tool_calls) == ("hi", "changed", (call,))
    assert Message.model_validate_json(message.model_dump_json()) == message


# --- clone ----------------------------------------------------------------------------------------


def test_clone_is_equal_and_deep() -> None:
    original = _full_event()
    snapshot = original.model_dump_json()
    clone = original.clone()
    assert clone == original

    message = clone.choices[0].message
    assert message is not None
    clone.choices[0].message = message.model_copy(update={"content": "changed"})
    clone.choices[0].delta = None
    clone.choices.append(Choice())
    assert clone.usage is not None
    clone.usage.total_tokens = 99
    assert clone.error is not None
    clone.error.message = "changed"
    clone.actions.state_delta["cart"]["items"].append(3)
    clone.actions.state_delta["new"] = 1
    clone.actions.escalate = True
    clone.long_running_tool_ids.append("c2")

    assert original.model_dump_json() == snapshot
    assert clone != original


@given(events)
def test_clone_of_any_event_is_equal(event: Event) -> None:
    assert event.clone() == event
    assert event.clone() is not event


# --- JSON -----------------------------------------------------------------------------------------


@given(events)
def test_json_round_trip_loses_nothing(event: Event) -> None:
    text = event.model_dump_json()
    back = Event.model_validate_json(text)
    assert back == event
    assert back.model_dump_json() == text


def test_json_round_trip_of_a_full_event() -> None:
    event = _full_event()
    assert Event.model_validate_json(event.model_dump_json()) == event


# --- response helpers -----------------------------------------------------------------------------


def test_text_builds_a_complete_assistant_answer() -> None:
    response = LlmResponse.text("the answer", model="m")

    assert response.choices == [
        Choice(message=Message(role="assistant", content="the answer"), finish_reason="stop")
    ]
    assert (response.done, response.is_partial, response.model) == (True, False, "m")
    assert (response.content, response.tool_calls) == ("the answer", ())
    assert response.message == Message.assistant("the answer")
    assert response.delta is None
    assert LlmResponse.text("not yet", done=False).done is False


def test_text_on_event_builds_an_event() -> None:
    event = Event.text("hi", author="agent")
    assert isinstance(event, Event)
    assert (event.author, event.content, event.done) == ("agent", "hi", True)


def test_calls_builds_a_tool_call_request() -> None:
    first, second = ToolCall.of("a", '{"x": 1}'), ToolCall.of("b")
    response = LlmResponse.calls(first, second, content="thinking")

    assert response.tool_calls == (first, second)
    assert response.content == "thinking"
    assert response.choices[0].finish_reason == "tool_calls"
    assert response.done is True
    assert LlmResponse.calls(first).content == ""


def test_tool_call_of_makes_fresh_ids_unless_given() -> None:
    call = ToolCall.of("lookup", '{"q": "x"}')
    assert call.id.startswith("call_")
    assert call.function == FunctionCall(name="lookup", arguments='{"q": "x"}')
    assert ToolCall.of("lookup").id != call.id
    assert ToolCall.of("lookup", id="mine").id == "mine"
    assert ToolCall.of("lookup").function.arguments == "{}"


def test_content_falls_back_to_the_delta_and_tool_calls_never_do() -> None:
    chunk = LlmResponse(choices=[Choice(delta=Message.assistant("chu", [ToolCall.of("f")]))], is_partial=True)
    assert chunk.content == "chu"
    assert chunk.message is None
    assert chunk.tool_calls == ()


def test_helpers_on_a_response_without_choices() -> None:
    empty = LlmResponse()
    assert (empty.message, empty.delta, empty.content, empty.tool_calls) == (None, None, "", ())


def test_message_constructors() -> None:
    assert Message.user("q") == Message(role="user", content="q")
    assert Message.assistant() == Message(role="assistant", content="", tool_calls=())
    assert Message.tool("{}", tool_call_id="c", name="t") == Message(
        role="tool", content="{}", tool_call_id="c", name="t"
    )


def test_error_info_of_an_exception() -> None:
    assert ErrorInfo.of(TimeoutError("slow"), "model") == ErrorInfo(
        type="TimeoutError", message="slow", where="model"
    )


def test_chunk_and_word_chunks() -> None:
    chunk = LlmResponse.chunk("Hel", model="m")
    assert (chunk.object, chunk.is_partial, chunk.content, chunk.model) == (
        "chat.completion.chunk",
        True,
        "Hel",
        "m",
    )
    assert chunk.message is None
    response = LlmResponse.text("Hello big world", model="m")
    chunks = response.word_chunks()
    assert [c.content for c in chunks] == ["Hello", " big", " world"]
    assert {(c.id, c.model, c.is_partial) for c in chunks} == {(response.id, "m", True)}


def test_ids_are_distinct_32_hex_digits_across_pool_refills() -> None:
    ids = [new_id() for _ in range(600)]  # more than one pool of 256
    assert len(set(ids)) == 600
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_a_forked_child_does_not_repeat_its_parents_next_ids() -> None:
    new_id()  # the pool is filled: a child that kept it would hand out the parent's next ids
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.write(write, ",".join(new_id() for _ in range(3)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 200).decode().split(",")
    os.close(read)
    os.close(write)
    assert len(child) == 3
    assert not set(child) & {new_id() for _ in range(3)}


def test_from_response_carries_every_field_of_the_response() -> None:
    response = LlmResponse.text(
        "hi", model="m", usage=Usage(total_tokens=3), error=ErrorInfo(type="T", message="x")
    )
    event = Event.from_response("inv", "agent", response, branch="a.b", done=False)
    for f in dataclasses.fields(LlmResponse):
        expected = False if f.name == "done" else getattr(response, f.name)
        assert getattr(event, f.name) == expected, f.name
    assert (event.invocation_id, event.author, event.branch) == ("inv", "agent", "a.b")
