"""OpenAIModel against a real server, checked for shape only: a tiny model's words are noise."""

from __future__ import annotations

import pytest

from adk.errors import BadRequestError, StreamInterruptedError
from adk.events import LlmResponse, Message, ObjectType, ToolCall, ToolDeclaration
from adk.models.base import LlmRequest
from adk.models.openai import OpenAIModel

pytestmark = pytest.mark.live

WEATHER = ToolDeclaration(
    name="get_weather",
    description="Get the current weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
FORCE_WEATHER = {"type": "function", "function": {"name": "get_weather"}}
HELLO = [Message.user("Say hello in one short sentence.")]
WEATHER_QUESTION = [Message.user("What is the weather in Paris? Use the get_weather tool.")]


async def collect(model: OpenAIModel, request: LlmRequest) -> list[LlmResponse]:
    return [r async for r in model.generate(request)]


def assert_complete(response: LlmResponse) -> None:
    assert (response.object, response.done, response.is_partial) == (ObjectType.CHAT_COMPLETION, True, False)
    assert response.id
    assert response.message is not None
    assert response.message.role == "assistant"
    assert response.choices[0].finish_reason


async def test_a_text_turn(live_model: OpenAIModel) -> None:
    [response] = await collect(live_model, LlmRequest(instruction="Be brief.", messages=HELLO))

    assert_complete(response)
    assert response.choices[0].finish_reason in ("stop", "length")
    assert response.tool_calls == []
    assert response.usage is not None
    assert response.usage.prompt_tokens > 0


async def test_a_streamed_turn(live_model: OpenAIModel) -> None:
    *chunks, final = await collect(live_model, LlmRequest(messages=HELLO, stream=True))

    assert chunks, "a streamed answer of a few tokens comes in more than one piece"
    assert {(c.object, c.is_partial, c.done) for c in chunks} == {
        (ObjectType.CHAT_COMPLETION_CHUNK, True, False)
    }
    assert_complete(final)
    assert final.content == "".join(c.content for c in chunks)


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "streamed"])
async def test_a_forced_tool_call(live_model: OpenAIModel, stream: bool) -> None:
    request = LlmRequest(
        messages=WEATHER_QUESTION, tools=[WEATHER], tool_choice=FORCE_WEATHER, stream=stream, max_tokens=48
    )

    responses = await collect(live_model, request)

    final = responses[-1]
    assert_complete(final)
    [call] = final.tool_calls
    # Streamed, llama.cpp repeats the name in every chunk: it must not come out doubled.
    assert call.function.name == "get_weather"
    assert call.id
    assert isinstance(call.function.arguments, str)


async def test_a_tool_result_turn_is_accepted(live_model: OpenAIModel) -> None:
    """The assistant's tool-call message goes out with content "" (some servers refuse None)."""
    call = ToolCall.of("get_weather", '{"city": "Paris"}', id="call_1")
    messages = [
        *WEATHER_QUESTION,
        Message.assistant("", [call]),
        Message.tool('{"temp_c": 18, "sky": "sunny"}', tool_call_id="call_1", name="get_weather"),
    ]

    [response] = await collect(live_model, LlmRequest(messages=messages, tools=[WEATHER], tool_choice="none"))

    assert_complete(response)


async def test_a_streamed_turn_with_automatic_tool_choice_ends_in_a_response_or_an_interruption(
    live_model: OpenAIModel,
) -> None:
    """llama.cpp's function-calling format drops this stream empty; elsewhere it answers."""
    request = LlmRequest(messages=WEATHER_QUESTION, tools=[WEATHER], tool_choice="auto", stream=True)

    try:
        responses = await collect(live_model, request)
    except StreamInterruptedError:
        return  # what llama.cpp does: a transient error, which the default recovery policy retries
    assert_complete(responses[-1])


async def test_a_bad_request_is_a_bad_request_error(live_model: OpenAIModel) -> None:
    too_long = [Message.user("hello " * 20_000)]  # beyond the context of the small models this runs with

    with pytest.raises(BadRequestError) as info:
        await collect(live_model, LlmRequest(messages=too_long))

    assert info.value.status_code == 400
    assert not info.value.transient
