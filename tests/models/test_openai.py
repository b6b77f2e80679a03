"""OpenAIModel against a fake server: httpx.MockTransport answers as a chat-completions endpoint would."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from email.utils import formatdate
from typing import Any

import httpx
import pytest

from adk import Event, LlmAgent, Runner, tool
from adk.errors import (
    AuthenticationError,
    BadRequestError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from adk.events import FunctionCall, LlmResponse, Message, ObjectType, ToolCall, ToolDeclaration, Usage
from adk.models.base import LlmRequest
from adk.models.openai import OpenAIModel
from adk.recovery import Testing

KEY = "sk-test-4f3a9c1e7b2d"
URL = "http://fake.test/v1"
WEATHER = ToolDeclaration(
    name="get_weather",
    description="The weather in a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)

Handler = Callable[[httpx.Request], httpx.Response]


class FakeServer:
    """Answers each request with the next of `responses`; records the JSON bodies it received."""

    def __init__(self, *responses: httpx.Response | Handler) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.responses.pop(0)
        return answer if isinstance(answer, httpx.Response) else answer(request)


@pytest.fixture
async def client() -> AsyncIterator[Callable[[FakeServer], httpx.AsyncClient]]:
    clients: list[httpx.AsyncClient] = []

    def make(server: FakeServer) -> httpx.AsyncClient:
        clients.append(httpx.AsyncClient(transport=httpx.MockTransport(server)))
        return clients[-1]

    yield make
    for c in clients:
        await c.aclose()


@pytest.fixture
def model(client: Callable[[FakeServer], httpx.AsyncClient]) -> Callable[..., OpenAIModel]:
    def make(server: FakeServer, **settings: Any) -> OpenAIModel:
        settings.setdefault("api_key", KEY)
        return OpenAIModel("gpt-test", base_url=URL, http_client=client(server), **settings)

    return make


def completion(
    content: str | None = "Hello", tool_calls: list[dict[str, Any]] | None = None, finish: str = "stop"
) -> httpx.Response:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-test-0613",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        },
    )


def chunk(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    choices = [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else []
    return {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test-0613",
        "choices": choices,
        "usage": usage,
    }


def sse(*chunks: dict[str, Any], done: bool = True) -> httpx.Response:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + ("data: [DONE]\n\n" if done else "")
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def http_error(status: int, message: str = "nope", headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers, json={"error": {"message": message, "type": "x"}})


def ask(stream: bool = False, **fields: Any) -> LlmRequest:
    return LlmRequest(messages=[Message.user("Hi")], stream=stream, **fields)


async def collect(model: OpenAIModel, request: LlmRequest) -> list[LlmResponse]:
    return [r async for r in model.generate(request)]


async def fail(model: OpenAIModel, request: LlmRequest) -> ModelError:
    with pytest.raises(ModelError) as info:
        await collect(model, request)
    return info.value


def cause(error: BaseException) -> str:
    """The type of what `error` was raised from, as its masked stand-in names it."""
    return str(error.__cause__).partition(":")[0]


# --- answers -------------------------------------------------------------------------------------


async def test_a_text_answer_is_one_complete_response(model: Callable[..., OpenAIModel]) -> None:
    [response] = await collect(model(FakeServer(completion("Hello"))), ask())

    assert response.model_dump(exclude={"created"}) == {
        "id": "chatcmpl-1",
        "object": ObjectType.CHAT_COMPLETION,
        "model": "gpt-test-0613",
        "choices": [
            {
                "index": 0,
                "message": Message.assistant("Hello").model_dump(),
                "delta": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        "error": None,
        "done": True,
        "is_partial": False,
    }


async def test_a_streamed_answer_yields_text_deltas_then_the_complete_message(
    model: Callable[..., OpenAIModel],
) -> None:
    server = FakeServer(
        sse(
            chunk(content=""),  # the role-only first chunk many servers send: no text, no partial
            chunk(content="Hel"),
            chunk(content="lo"),
            chunk(finish="stop"),
            chunk(usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}),
        )
    )

    responses = await collect(model(server), ask(stream=True))

    assert [(r.object, r.is_partial, r.done, r.content) for r in responses] == [
        (ObjectType.CHAT_COMPLETION_CHUNK, True, False, "Hel"),
        (ObjectType.CHAT_COMPLETION_CHUNK, True, False, "lo"),
        (ObjectType.CHAT_COMPLETION, False, True, "Hello"),
    ]
    assert [r.delta for r in responses[:2]] == [Message.assistant("Hel"), Message.assistant("lo")]
    final = responses[-1]
    assert (final.id, final.model, final.message, final.choices[0].finish_reason, final.usage) == (
        "chatcmpl-2",
        "gpt-test-0613",
        Message.assistant("Hello"),
        "stop",
        Usage(prompt_tokens=5, completion_tokens=2, total_tokens=7),
    )
    assert server.bodies[0]["stream"] is True
    assert server.bodies[0]["stream_options"] == {"include_usage": True}


async def test_a_stream_without_usage_is_complete_and_usage_need_not_be_asked_for(
    model: Callable[..., OpenAIModel],
) -> None:
    server = FakeServer(sse(chunk(content="Hi", finish="stop")))

    responses = await collect(model(server, stream_usage=False), ask(stream=True))

    assert responses[-1].usage is None
    assert responses[-1].message == Message.assistant("Hi")
    assert "stream_options" not in server.bodies[0]


def call_chunk(index: int, name: str | None, arguments: str, id: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    part: dict[str, Any] = {"index": index, "type": "function", "function": function}
    if id is not None:
        part["id"] = id
    return chunk(tool_calls=[part])


@pytest.mark.parametrize(
    ("chunks", "pieces"),
    [
        pytest.param(
            [
                call_chunk(0, "get_weather", "", id="call_a"),
                call_chunk(0, None, '{"city": '),
                call_chunk(0, None, '"Paris"}'),
                call_chunk(1, "get_time", "{}", id="call_b"),
            ],
            [
                ("call_a", "get_weather", '{"city": '),
                ("call_a", "get_weather", '"Paris"}'),
                ("call_b", "get_time", "{}"),
            ],
            id="name-once",
        ),
        pytest.param(
            # llama.cpp: the id and the whole name come again with every fragment of the arguments.
            [
                call_chunk(0, "get_weather", '{"city": ', id="call_a"),
                call_chunk(0, "get_weather", '"Paris"}', id="call_a"),
                call_chunk(1, "get_time", "{", id="call_b"),
                call_chunk(1, "get_time", "}", id="call_b"),
            ],
            [
                ("call_a", "get_weather", '{"city": '),
                ("call_a", "get_weather", '"Paris"}'),
                ("call_b", "get_time", "{"),
                ("call_b", "get_time", "}"),
            ],
            id="name-repeated",
        ),
    ],
)
async def test_streamed_tool_calls_are_put_together_by_index(
    model: Callable[..., OpenAIModel], chunks: list[dict[str, Any]], pieces: list[tuple[str, str, str]]
) -> None:
    server = FakeServer(sse(*chunks, chunk(finish="tool_calls")))

    *partial, response = await collect(model(server), ask(stream=True, tools=[WEATHER]))
    # Each piece of arguments goes out as it comes, named by its call's id and name.
    assert [
        (p.is_partial, p.content, p.choices[0].delta.tool_calls) for p in partial if p.choices[0].delta
    ] == [(True, "", (ToolCall(id=i, function=FunctionCall(name=n, arguments=a)),)) for i, n, a in pieces]
    assert response.tool_calls == (
        ToolCall(id="call_a", function=FunctionCall(name="get_weather", arguments='{"city": "Paris"}')),
        ToolCall(id="call_b", function=FunctionCall(name="get_time", arguments="{}")),
    )
    assert response.message is not None
    assert response.message.content == ""
    assert response.choices[0].finish_reason == "tool_calls"


async def test_a_streamed_call_without_an_id_gets_one_shared_by_its_pieces(
    model: Callable[..., OpenAIModel],
) -> None:
    server = FakeServer(
        sse(
            call_chunk(0, "get_weather", '{"city":'),
            call_chunk(0, None, ' "Oslo"}'),
            chunk(finish="tool_calls"),
        )
    )
    *pieces, response = await collect(model(server), ask(stream=True, tools=[WEATHER]))
    ids = {c.id for p in pieces for c in p.choices[0].delta.tool_calls}  # type: ignore[union-attr]
    assert ids == {response.tool_calls[0].id}
    assert response.tool_calls[0].function.arguments == '{"city": "Oslo"}'


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "streamed"])
async def test_tool_call_arguments_that_are_not_json_pass_through_unchanged(
    model: Callable[..., OpenAIModel], stream: bool
) -> None:
    broken = '{"city": "Par'
    call = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": broken}}
    answer = (
        sse(chunk(tool_calls=[{"index": 0, **call}]), chunk(finish="tool_calls"))
        if stream
        else completion(None, [call], "tool_calls")
    )

    responses = await collect(model(FakeServer(answer)), ask(stream=stream, tools=[WEATHER]))

    assert responses[-1].tool_calls == (ToolCall.of("get_weather", broken, id="call_a"),)


async def test_a_tool_call_without_id_or_arguments_gets_an_id_and_no_arguments(
    model: Callable[..., OpenAIModel],
) -> None:
    server = FakeServer(completion(None, [{"type": "function", "function": {"name": "now"}}], "tool_calls"))

    [response] = await collect(model(server), ask(tools=[WEATHER]))

    [call] = response.tool_calls
    assert call.id.startswith("call_")
    assert call.function == FunctionCall(name="now", arguments="{}")


# --- streams that end badly ----------------------------------------------------------------------


async def test_a_stream_that_ends_without_a_finish_reason_is_interrupted(
    model: Callable[..., OpenAIModel],
) -> None:
    seen: list[str] = []
    m = model(FakeServer(sse(chunk(content="Hel"), chunk(content="lo"), done=False)))

    async def consume() -> None:
        async for response in m.generate(ask(stream=True)):
            seen.append(response.content)

    with pytest.raises(StreamInterruptedError, match=r"without a finish reason after 2 chunk\(s\)") as info:
        await consume()

    assert seen == ["Hel", "lo"]  # the partials went out before the error: the runtime rolls them back
    assert info.value.transient


async def test_an_empty_stream_is_interrupted(model: Callable[..., OpenAIModel]) -> None:
    empty = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"")

    error = await fail(model(FakeServer(empty)), ask(stream=True))

    assert isinstance(error, StreamInterruptedError)
    assert "after 0 chunk(s)" in str(error)


class BreakingStream(httpx.AsyncByteStream):
    """A response body that sends `data` and then fails the way a dropped connection does."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data
        raise httpx.ReadError("connection reset by peer")

    async def aclose(self) -> None:
        self.closed = True


async def test_a_stream_whose_connection_breaks_is_interrupted(model: Callable[..., OpenAIModel]) -> None:
    body = BreakingStream(f"data: {json.dumps(chunk(content='Hel'))}\n\n".encode())
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    error = await fail(model(FakeServer(response)), ask(stream=True))

    assert isinstance(error, StreamInterruptedError)
    assert "broke after 1 chunk(s)" in str(error)
    assert cause(error) in ("openai.APIConnectionError", "httpx.ReadError")
    assert body.closed


async def test_an_error_event_in_a_stream_is_a_server_error(model: Callable[..., OpenAIModel]) -> None:
    event = {"error": {"message": "the engine is overloaded", "type": "server_error"}}

    error = await fail(model(FakeServer(sse(chunk(content="Hel"), event))), ask(stream=True))

    assert isinstance(error, ServerError)
    assert "the engine is overloaded" in str(error)


@pytest.mark.parametrize(
    "body",
    [b"data: {not json\n\n", b'data: ["a list"]\n\n', b'data: {"choices": "not a list"}\n\n'],
    ids=["not-json", "not-an-object", "bad-choices"],
)
async def test_a_malformed_chunk_is_a_server_error(model: Callable[..., OpenAIModel], body: bytes) -> None:
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    error = await fail(model(FakeServer(response)), ask(stream=True))

    assert type(error) is ServerError
    assert "malformed chunk: " in str(error)


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, text="<html>a proxy's page</html>"),
        httpx.Response(200, json={"id": "chatcmpl-1", "choices": []}),
        httpx.Response(200, json={"choices": [{"message": None}]}),
    ],
    ids=["not-json", "no-choices", "no-message"],
)
async def test_a_malformed_completion_is_a_server_error(
    model: Callable[..., OpenAIModel], response: httpx.Response
) -> None:
    error = await fail(model(FakeServer(response)), ask())

    assert type(error) is ServerError
    assert "malformed response" in str(error)


async def test_a_consumer_that_stops_early_closes_the_response(model: Callable[..., OpenAIModel]) -> None:
    body = BreakingStream(f"data: {json.dumps(chunk(content='Hel'))}\n\n".encode())
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    responses = model(FakeServer(response)).generate(ask(stream=True))
    assert isinstance(responses, AsyncGenerator)

    first = await anext(responses)
    await responses.aclose()

    assert first.content == "Hel"
    assert body.closed


# --- errors --------------------------------------------------------------------------------------


async def test_a_refused_key_is_an_authentication_error_that_says_so(
    model: Callable[..., OpenAIModel],
) -> None:
    error = await fail(model(FakeServer(http_error(401, "Incorrect API key"))), ask())

    assert type(error) is AuthenticationError
    assert error.status_code == 401
    assert not error.transient
    assert "the server refused the API key (HTTP 401)" in str(error)
    assert cause(error) == "openai.AuthenticationError"


async def test_a_missing_key_is_an_authentication_error_that_says_so(
    client: Callable[[FakeServer], httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = FakeServer(http_error(401))
    m = OpenAIModel("gpt-test", base_url=URL, http_client=client(server))

    error = await fail(m, ask())

    assert type(error) is AuthenticationError
    assert "the server requires an API key and none was given" in str(error)


async def test_a_forbidden_request_is_an_authentication_error(model: Callable[..., OpenAIModel]) -> None:
    error = await fail(model(FakeServer(http_error(403, "not allowed in your region"))), ask())

    assert type(error) is AuthenticationError
    assert error.status_code == 403
    assert "(HTTP 403): not allowed in your region" in str(error)


@pytest.mark.parametrize(
    ("headers", "retry_after"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "7"}, 0.25),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "inf"}, None),
        ({}, None),
    ],
)
async def test_a_rate_limit_carries_the_servers_retry_after(
    model: Callable[..., OpenAIModel], headers: dict[str, str], retry_after: float | None
) -> None:
    error = await fail(model(FakeServer(http_error(429, "slow down", headers))), ask())

    assert type(error) is RateLimitError
    assert (error.status_code, error.retry_after, error.transient) == (429, retry_after, True)
    assert "slow down" in str(error)


async def test_a_retry_after_given_as_an_http_date_is_the_seconds_until_then(
    model: Callable[..., OpenAIModel],
) -> None:
    in_two_minutes = formatdate(time.time() + 120, usegmt=True)

    error = await fail(model(FakeServer(http_error(429, headers={"retry-after": in_two_minutes}))), ask())

    assert error.retry_after is not None
    assert 100 < error.retry_after <= 120


@pytest.mark.parametrize(
    ("status", "kind", "transient"),
    [
        (500, ServerError, True),
        (503, ServerError, True),
        (408, ModelTimeoutError, True),
        (400, BadRequestError, False),
        (404, BadRequestError, False),
        (422, BadRequestError, False),
    ],
)
async def test_http_errors_map_onto_the_recovery_taxonomy(
    model: Callable[..., OpenAIModel], status: int, kind: type[ModelError], transient: bool
) -> None:
    error = await fail(model(FakeServer(http_error(status, "context length exceeded"))), ask())

    assert type(error) is kind
    assert (error.status_code, error.transient) == (status, transient)
    assert str(error).endswith(f"(HTTP {status}): context length exceeded")
    assert "'gpt-test' at http://fake.test/v1" in str(error)
    assert cause(error).startswith("openai.")


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "streamed"])
@pytest.mark.parametrize(
    ("failure", "kind"),
    [(httpx.ReadTimeout("slow"), ModelTimeoutError), (httpx.ConnectError("refused"), ModelConnectionError)],
)
async def test_timeouts_and_connection_failures_are_transient(
    model: Callable[..., OpenAIModel], failure: Exception, kind: type[ModelError], stream: bool
) -> None:
    def fail_request(request: httpx.Request) -> httpx.Response:
        raise failure

    error = await fail(model(FakeServer(fail_request)), ask(stream=stream))

    assert type(error) is kind
    assert error.transient
    assert cause(error) in ("openai.APITimeoutError", "openai.APIConnectionError")


# --- what is sent --------------------------------------------------------------------------------


async def test_the_request_body_maps_instruction_history_tools_and_settings(
    model: Callable[..., OpenAIModel],
) -> None:
    server = FakeServer(completion())
    call = ToolCall.of("get_weather", '{"city": "Paris"}', id="call_a")
    request = LlmRequest(
        instruction="Be brief.",
        messages=[
            Message.user("Weather in Paris?"),
            Message.assistant("", [call]),
            Message.tool('{"temp_c": 18}', tool_call_id="call_a", name="get_weather"),
            Message.assistant("It is 18 C."),
        ],
        tools=[WEATHER],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        temperature=0.0,
    )

    await collect(model(server, temperature=0.7, max_tokens=64, tool_choice="auto"), request)

    assert server.bodies == [
        {
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                },
                {"role": "tool", "content": '{"temp_c": 18}', "tool_call_id": "call_a"},
                {"role": "assistant", "content": "It is 18 C."},
            ],
            "temperature": 0.0,
            "max_tokens": 64,
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "description": "The weather in a city",
                        "parameters": WEATHER.parameters,
                    },
                }
            ],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "stream": False,
        }
    ]
    assert server.requests[0].url == "http://fake.test/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_the_models_defaults_apply_and_tool_choice_goes_only_with_tools(
    model: Callable[..., OpenAIModel],
) -> None:
    server = FakeServer(completion(), completion())
    m = model(server, tool_choice="required", response_format={"type": "json_object"})

    await collect(m, LlmRequest(model="other-model", messages=[Message.user("Hi")]))
    await collect(m, ask(tools=[WEATHER]))

    assert [(b["model"], b.get("tool_choice"), b["response_format"]) for b in server.bodies] == [
        ("other-model", None, {"type": "json_object"}),
        ("gpt-test", "required", {"type": "json_object"}),
    ]


async def test_under_a_budget_the_models_max_tokens_goes_out_lowered_only_when_less_is_left(
    model: Callable[..., OpenAIModel],
) -> None:
    # A provider refuses a max_tokens above its model's limit ("max_tokens is too large"): a
    # budget with plenty left must send the model's own, never what the whole budget has left.
    from adk.limits import Budget

    server = FakeServer(completion(), completion())
    m = model(server, max_tokens=64)
    for session, budget in (("s1", Budget(total_tokens=100_000)), ("s2", Budget(total_tokens=40))):
        events = [e async for e in Runner(LlmAgent("a", model=m), callbacks=[budget]).run("u", session, "Hi")]
        assert events[-1].object == ObjectType.RUNNER_COMPLETION
    assert [b["max_tokens"] for b in server.bodies] == [64, 40 - 5]  # "Hi": 1 token of text, 4 a message


async def test_max_tokens_can_go_out_as_max_completion_tokens(model: Callable[..., OpenAIModel]) -> None:
    # OpenAI's reasoning models refuse `max_tokens`; a Budget sets one on every call.
    from adk.limits import Budget

    server = FakeServer(completion(), completion())
    m = model(server, max_tokens=64, max_tokens_as="max_completion_tokens")
    await collect(m, ask())
    events = [
        e
        async for e in Runner(LlmAgent("a", model=m), callbacks=[Budget(total_tokens=40)]).run("u", "s", "Hi")
    ]
    assert events[-1].object == ObjectType.RUNNER_COMPLETION
    assert [(b.get("max_tokens"), b.get("max_completion_tokens")) for b in server.bodies] == [
        (None, 64),
        (None, 40 - 5),
    ]


async def test_a_json_schema_goes_out_as_asked_or_as_json_object_with_the_schema(
    model: Callable[..., OpenAIModel],
) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    asked = {"type": "json_schema", "json_schema": {"name": "Verdict", "schema": schema}}
    server = FakeServer(completion(), completion(), completion())
    plain = model(server)
    llama_cpp_python = model(server, schema_format="json_object")

    await collect(plain, LlmRequest(messages=[Message.user("Hi")], response_format=asked))
    await collect(llama_cpp_python, LlmRequest(messages=[Message.user("Hi")], response_format=asked))
    await collect(
        llama_cpp_python, LlmRequest(messages=[Message.user("Hi")], response_format={"type": "text"})
    )

    assert [b["response_format"] for b in server.bodies] == [
        asked,
        {"type": "json_object", "schema": schema},
        {"type": "text"},
    ]


# --- configuration -------------------------------------------------------------------------------


async def test_key_and_base_url_default_from_the_environment(
    client: Callable[[FakeServer], httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.test/v9")
    server = FakeServer(completion())

    await collect(OpenAIModel("gpt-test", http_client=client(server)), ask())

    assert server.requests[0].url == "http://env.test/v9/chat/completions"
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_no_key_and_no_base_url_is_refused_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    with pytest.raises(AuthenticationError, match=r"no API key for model 'gpt-test': pass api_key="):
        OpenAIModel("gpt-test")


async def test_aclose_closes_only_a_client_the_model_made(
    client: Callable[[FakeServer], httpx.AsyncClient],
) -> None:
    given = client(FakeServer())
    borrowed = OpenAIModel("gpt-test", base_url=URL, http_client=given)
    owned = OpenAIModel("gpt-test", base_url=URL)

    await borrowed.aclose()
    await owned.aclose()

    assert not given.is_closed
    assert owned._client.is_closed()


def test_importing_adk_does_not_import_openai() -> None:
    code = (
        "import sys, adk, adk.models; assert 'openai' not in sys.modules, 'openai imported';"
        "from adk.models import OpenAIModel; assert 'openai' in sys.modules;"
        "assert OpenAIModel.__module__ == 'adk.models.openai'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the key stays secret ------------------------------------------------------------------------


def test_the_key_is_not_in_the_models_repr(model: Callable[..., OpenAIModel]) -> None:
    m = model(FakeServer())

    assert repr(m) == "OpenAIModel('gpt-test', base_url='http://fake.test/v1')"
    assert KEY not in str(m)


async def test_credentials_in_the_base_url_stay_out_of_reprs_and_errors(
    client: Callable[[FakeServer], httpx.AsyncClient],
) -> None:
    m = OpenAIModel(
        "gpt-test",
        base_url=f"http://user:{KEY}@fake.test/v1",
        http_client=client(FakeServer(http_error(500))),
    )

    error = await fail(m, ask())

    assert repr(m) == "OpenAIModel('gpt-test', base_url='http://fake.test/v1')"
    assert KEY not in str(error)


# Every other path, logs and tracebacks included: the property test in test_openai_secrets.py.


# --- through LlmAgent and Runner -----------------------------------------------------------------


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city."""
    return {"city": city, "temp_c": 18}


async def run(model: OpenAIModel, stream: bool = False) -> list[Event]:
    agent = LlmAgent("assistant", model=model, tools=[get_weather])
    return [e async for e in Runner(agent).run("user", "session", "Weather in Paris?", stream=stream)]


def trace(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.object, e.content if e.error is None else e.error.type) for e in events]


async def test_a_rate_limit_then_success_through_the_runners_recovery(
    model: Callable[..., OpenAIModel], testing: Testing
) -> None:
    server = FakeServer(http_error(429, "slow down", {"retry-after": "2"}), completion("Sunny"))

    events = await run(model(server))

    assert trace(events) == [
        (ObjectType.CHAT_COMPLETION, "Weather in Paris?"),
        (ObjectType.ATTEMPT_FAILED, "RateLimitError"),
        (ObjectType.CHAT_COMPLETION, "Sunny"),
        (ObjectType.RUNNER_COMPLETION, ""),
    ]
    assert testing.waits == [2.0]  # the server's Retry-After, above the policy's own first wait
    assert server.bodies[0] == server.bodies[1]


async def test_a_cut_stream_is_discarded_and_retried_through_the_runner(
    model: Callable[..., OpenAIModel], testing: Testing
) -> None:
    server = FakeServer(
        sse(chunk(content="Sun"), done=False),
        sse(chunk(content="Sunny"), chunk(finish="stop")),
    )

    events = await run(model(server), stream=True)

    assert trace(events) == [
        (ObjectType.CHAT_COMPLETION, "Weather in Paris?"),
        (ObjectType.CHAT_COMPLETION_CHUNK, "Sun"),
        (ObjectType.ATTEMPT_FAILED, "StreamInterruptedError"),
        (ObjectType.ATTEMPT_DISCARDED, "AttemptDiscarded"),
        (ObjectType.CHAT_COMPLETION_CHUNK, "Sunny"),
        (ObjectType.CHAT_COMPLETION, "Sunny"),
        (ObjectType.RUNNER_COMPLETION, ""),
    ]
    assert len(testing.waits) == 1


async def test_malformed_tool_arguments_go_back_to_the_model_as_a_tool_error(
    model: Callable[..., OpenAIModel], testing: Testing
) -> None:
    broken = '{"city": "Par'
    call = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": broken}}
    server = FakeServer(completion(None, [call], "tool_calls"), completion("Sorry."))

    events = await run(model(server))

    assert trace(events) == [
        (ObjectType.CHAT_COMPLETION, "Weather in Paris?"),
        (ObjectType.CHAT_COMPLETION, ""),
        (ObjectType.TOOL_RESPONSE, "ToolArgumentsError"),
        (ObjectType.CHAT_COMPLETION, "Sorry."),
        (ObjectType.RUNNER_COMPLETION, ""),
    ]
    *_, assistant, tool_result = server.bodies[1]["messages"]
    assert assistant == {"role": "assistant", "content": "", "tool_calls": [call]}
    assert tool_result["tool_call_id"] == "call_a"
    assert "arguments are not valid JSON" in tool_result["content"]
    assert testing.waits == []


async def test_a_refused_key_ends_the_run_with_an_error_event_and_no_retry(
    model: Callable[..., OpenAIModel], testing: Testing
) -> None:
    server = FakeServer(http_error(401, f"Incorrect API key provided: {KEY}"))

    events = await run(model(server))

    assert trace(events) == [
        (ObjectType.CHAT_COMPLETION, "Weather in Paris?"),
        (ObjectType.ERROR, "AuthenticationError"),
    ]
    error = events[-1].error
    assert error is not None
    assert (error.where, events[-1].done) == ("model:gpt-test", True)
    assert "the server refused the API key (HTTP 401)" in error.message
    assert [KEY in e.model_dump_json() for e in events] == [False, False]
    assert len(server.requests) == 1
