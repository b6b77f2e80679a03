"""OpenAIModel against a real server, checked for shape only: a tiny model's words are noise."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from adk import Cont, Event, LlmAgent, ModelContext, Runner, tool
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
    assert response.tool_calls == ()
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


# --- through LlmAgent and Runner -----------------------------------------------------------------


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Get the current weather for a city."""
    return {"city": city, "temp_c": 18, "sky": "sunny"}


class ForceToolFirst:
    """Forces the tool on a turn's first model call and forbids it after: a tiny model would loop."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        first = ctx.request.messages[-1].role == "user"
        # The forced call needs room for its JSON arguments.
        update = {"tool_choice": FORCE_WEATHER, "max_tokens": 48} if first else {"tool_choice": "none"}
        return Cont(dataclasses.replace(ctx, request=ctx.request.model_copy(update=update)))


async def run(agent: LlmAgent, message: str, stream: bool = False) -> list[Event]:
    return [e async for e in Runner(agent).run("user", "session", message, stream=stream)]


def objects(events: list[Event]) -> list[str]:
    return [e.object for e in events]


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "streamed"])
async def test_a_text_turn_through_the_runner(live_model: OpenAIModel, stream: bool) -> None:
    events = await run(
        LlmAgent("assistant", model=live_model, instruction="Be brief."), HELLO[0].content, stream
    )

    user, *chunks, answer, done = events
    assert (user.author, user.content) == ("user", HELLO[0].content)
    assert (answer.object, answer.author, answer.error) == (ObjectType.CHAT_COMPLETION, "assistant", None)
    assert answer.tool_calls == ()
    if stream:
        assert {(c.object, c.is_partial) for c in chunks} == {(ObjectType.CHAT_COMPLETION_CHUNK, True)}
        assert answer.content == "".join(c.content for c in chunks)
    else:
        assert chunks == []
    assert (done.object, done.done) == (ObjectType.RUNNER_COMPLETION, True)


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "streamed"])
async def test_a_tool_calling_turn_through_the_runner(live_model: OpenAIModel, stream: bool) -> None:
    agent = LlmAgent("assistant", model=live_model, tools=[get_weather], callbacks=[ForceToolFirst()])

    events = await run(agent, WEATHER_QUESTION[0].content, stream)

    complete = [e for e in events if not e.is_partial]
    assert objects(complete) == [
        ObjectType.CHAT_COMPLETION,  # the user's message
        ObjectType.CHAT_COMPLETION,  # the call
        ObjectType.TOOL_RESPONSE,
        ObjectType.CHAT_COMPLETION,  # the answer
        ObjectType.RUNNER_COMPLETION,
    ]
    [call] = complete[1].tool_calls
    assert call.function.name == "get_weather"
    result = complete[2].message
    assert result is not None
    # The model's arguments may not even be JSON: then the result is an error for the model.
    assert (result.role, result.tool_call_id, result.name) == ("tool", call.id, "get_weather")
    assert complete[3].tool_calls == ()


async def test_a_prompt_past_the_context_ends_the_run_with_a_context_overflow(
    live_model: OpenAIModel,
) -> None:
    # llama.cpp refuses it ("exceeds the available context size"): a typed ContextOverflowError (a
    # BadRequestError), which the default recovery cannot shrink (one message, no older turn to drop).
    events = await run(LlmAgent("assistant", model=live_model), "hello " * 20_000)

    assert objects(events) == [ObjectType.CHAT_COMPLETION, ObjectType.ERROR]
    error = events[-1].error
    assert error is not None
    assert (error.type, error.where) == ("ContextOverflowError", f"model:{live_model.name}")


async def test_under_a_budget_the_models_own_max_tokens_still_bounds_a_long_answer(
    live_model: OpenAIModel,
) -> None:
    # The model is set to 8 tokens; a generous budget must not raise that to what it has left
    # (the server would then write hundreds), and settles to the tokens the server reports.
    from adk.limits import Budget

    budget, reports = Budget(total_tokens=100_000), []

    class Report:
        async def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            reports.append(budget.report(ctx.invocation))
            return response

    agent = LlmAgent("counter", model=live_model, callbacks=[budget, Report()])
    events = await run(agent, "Count from one to one hundred in words, one number a line.", False)
    answer = events[-2]
    assert answer.object == ObjectType.CHAT_COMPLETION and answer.usage is not None
    assert (answer.usage.completion_tokens, answer.choices[0].finish_reason) == (8, "length")
    assert reports == [
        {
            "model_calls": 1.0,
            "input_tokens": float(answer.usage.prompt_tokens),
            "output_tokens": 8.0,
            "total_tokens": float(answer.usage.prompt_tokens + 8),
        }
    ]
