"""The API key and the base URL's credentials never leave the adapter, whatever the server echoes.

A property test: a fake server (httpx.MockTransport) echoes the key or the URL's credentials (the
password decoded or percent-encoded, `user:password`, the `Authorization: Basic` token httpx
makes of them), whole or a piece of it, in one place of its answer (a JSON field, an SSE chunk,
an error body, a header, an exception's text) or streamed in pieces of 1 to 7 characters, on
every path (HTTP errors, malformed JSON, malformed chunks, cut and broken streams, good answers);
then no piece of a secret of 8 characters or more is in the events, the SQLite rows, the log
records of any logger at DEBUG, the formatted traceback of the raised error or anything in its
chain, or the AG-UI output, nor in the streamed deltas joined.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import logging
import sqlite3
import string
import tempfile
import traceback
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from ag_ui.core import TextMessageContentEvent, ToolCallArgsEvent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk import LlmAgent, Runner, tool
from adk.agui import AguiTranslator, TranslateContext
from adk.errors import ModelError
from adk.events import LlmResponse, Message
from adk.models._redact import Redactor
from adk.models.base import LlmRequest
from adk.models.openai import OpenAIModel
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import set_testing
from tests.agui.support import serving
from tests.models.streaming_server import split

USER, PASSWORD = "ada", "pw-9f8e/7d6c5b4a"
WRITTEN = quote(PASSWORD, safe="")
"""The password as written in the URL: `pw-9f8e%2F7d6c5b4a`."""
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
"""What httpx sends for the URL's credentials: `Authorization: Basic <this>`."""
CREDENTIALS = [PASSWORD, WRITTEN, BASIC]
KEYS = ["sk-proj-Zq4TfW8xLm2Rb7Np0KcVs9Hd", "sk-test-4f3a9c1e7b2dQWERTY"]
STATUSES = [400, 401, 403, 404, 408, 422, 429, 500, 502, 503]
EVENT_STREAM = {"content-type": "text/event-stream"}


def pieces(secret: str) -> set[str]:
    return {secret[i : i + 8] for i in range(len(secret) - 7)}


def leaks(secrets: list[str], text: str) -> list[str]:
    """The pieces of 8 characters of `secrets` that are in `text`."""
    return sorted(p for s in secrets for p in pieces(s) if p in text)


# Generated keys mix an upper-case letter, a lower-case one and a digit in every 8 characters, as
# real keys do: no piece of one is ordinary text (an "invocati" would be masked in a field name).
blocks = st.tuples(
    *(st.sampled_from(chars) for chars in (string.ascii_uppercase, string.ascii_lowercase, string.digits))
)
keys = st.one_of(
    st.sampled_from(KEYS),
    st.lists(blocks, min_size=4, max_size=16).map(lambda bs: "sk-" + "".join(map("".join, bs))),
)
noise = st.text(string.ascii_letters + string.digits + " .:/'\"{}", max_size=12)


@st.composite
def echoes(draw: st.DrawFn, key: str) -> str:
    """The key or a piece of it (8 characters or more), maybe within other text."""
    start = draw(st.integers(0, len(key) - 8))
    end = draw(st.integers(start + 8, len(key)))
    return draw(noise) + key[start:end] + draw(noise)


def chunk(**fields: Any) -> dict[str, Any]:
    delta = fields.pop("delta", {"content": "ok"})
    choice = {"index": 0, "delta": delta, "finish_reason": fields.pop("finish_reason", None)}
    return {"id": "c1", "model": "m", "choices": [choice], **fields}


def sse(*events: dict[str, Any] | str, done: bool = True) -> bytes:
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    return "".join(lines + (["data: [DONE]\n\n"] if done else [])).encode()


class Breaking(httpx.AsyncByteStream):
    """A body that sends `data`, then fails as a dropped connection does, with `text` in the error."""

    def __init__(self, data: bytes, text: str) -> None:
        self.data, self.text = data, text

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data
        raise httpx.ReadError(f"connection reset: {self.text}")


def complete(message: Any = None, **fields: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": "ok"} if message is None else message
    choice = {"index": 0, "message": message, "finish_reason": fields.pop("finish_reason", "stop")}
    return {"id": "c1", "model": "m", "choices": [choice], **fields}


def call(name: Any = "lookup", arguments: Any = "{}", id: Any = "call_1") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


Answer = tuple[bool, Callable[[], httpx.Response]]
"""Whether the request streams, and the server's answer (made afresh for every attempt)."""


def answers(e: str) -> dict[str, Answer]:
    """Each way to put the echo `e` into an answer."""
    pieces, end = split(e), chunk(finish_reason="stop")

    def ok(body: dict[str, Any], **headers: str) -> Callable[[], httpx.Response]:
        return lambda: httpx.Response(200, json=body, headers=headers)

    def stream(*events: dict[str, Any] | str, done: bool = True) -> Callable[[], httpx.Response]:
        return lambda: httpx.Response(200, headers=EVENT_STREAM, content=sse(*events, done=done))

    def calls(**fields: Any) -> dict[str, Any]:
        return complete({"role": "assistant", "content": "", "tool_calls": [call(**fields)]})

    def http(status: int) -> Callable[[], httpx.Response]:
        body = {"error": {"message": f"Incorrect API key provided: {e}", "param": e}}
        return lambda: httpx.Response(status, json=body, headers={"x-echo": e, "retry-after": e})

    def broken() -> httpx.Response:
        return httpx.Response(200, headers=EVENT_STREAM, stream=Breaking(sse(chunk(id=e), done=False), e))

    def unreachable() -> httpx.Response:
        raise httpx.ConnectError(f"cannot reach {e}")

    return {
        # good answers that carry it
        "content": (False, ok(complete({"role": "assistant", "content": e}))),
        "id-model": (False, ok(complete(id=e, model=e))),
        "finish-reason": (False, ok(complete(finish_reason=e))),
        "tool-name": (False, ok(calls(name=e))),
        "tool-arguments": (False, ok(calls(arguments=e))),
        "tool-id": (False, ok(calls(id=e))),
        "header": (False, ok(complete(), **{"x-request-id": e})),
        "streamed-content": (True, stream(chunk(delta={"content": e}), chunk(finish_reason="stop"))),
        "streamed-id-model": (True, stream(chunk(id=e, model=e), chunk(finish_reason="stop"))),
        "streamed-tool": (
            True,
            stream(chunk(delta={"tool_calls": [{"index": 0, **call(e, e, e)}]}), chunk(finish_reason="x")),
        ),
        # pieces of 1 to 7 characters, each too short to be recognised alone
        "streamed-pieces": (True, stream(*(chunk(delta={"content": p}) for p in pieces), end)),
        "streamed-tool-pieces": (
            True,
            stream(
                chunk(delta={"tool_calls": [{"index": 0, **call(arguments="")}]}),
                *(chunk(delta={"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces),
                end,
            ),
        ),
        # errors whose text carries it
        **{f"http-{status}": (False, http(status)) for status in STATUSES},
        "http-text": (False, lambda: httpx.Response(502, text=f"<html>{e}</html>")),
        "not-json": (False, lambda: httpx.Response(200, text=e)),
        "wrong-content": (False, ok(complete({"content": [e]}))),
        "wrong-tool-name": (False, ok(calls(name=[e]))),
        "wrong-usage": (False, ok(complete(usage={"prompt_tokens": e}))),
        "wrong-choices": (False, ok({"choices": {e: 1}})),
        "unreachable": (False, unreachable),
        "chunk-not-json": (True, stream(chunk(), "{" + e)),
        "chunk-wrong-content": (True, stream(chunk(delta={"content": [e]}))),
        "chunk-wrong-finish": (True, stream(chunk(finish_reason=[e]))),
        "chunk-error-event": (True, stream(chunk(), {"error": {"message": e, "type": "server_error"}})),
        "stream-cut": (True, stream(chunk(delta={"content": e}), done=False)),
        "stream-broken": (True, broken),
    }


PLACES = sorted(answers("x"))


@tool
def lookup() -> str:
    """Look something up."""
    return "found"


@contextmanager
def debug_logs() -> Iterator[list[str]]:
    """Every record of every logger at DEBUG, formatted with its traceback."""
    lines: list[str] = []
    formatter = logging.Formatter("%(name)s %(message)s")

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(formatter.format(record))

    root = logging.getLogger()
    handler, level = Keep(logging.DEBUG), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def chain_texts(error: BaseException) -> list[str]:
    """The formatted traceback of `error`, and the text and attributes of all it was raised from."""
    texts = ["".join(traceback.format_exception(error))]
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        e = pending.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        texts += [str(e), repr(e), repr(e.args), repr(vars(e))]
        pending += [e.__cause__, e.__context__]
    return texts


async def outputs(key: str, place: str, echo: str, store_path: Path) -> list[str]:
    """Everything the run and a direct call leave behind, as text."""
    streamed, answer = answers(echo)[place]

    def server(request: httpx.Request) -> httpx.Response:
        return answer()

    texts: list[str] = []
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        model = OpenAIModel(
            "gpt-test", base_url=f"http://{USER}:{WRITTEN}@fake.test/v1", api_key=key, http_client=client
        )
        async with SqliteSessionService(store_path) as store:
            runner = Runner(
                LlmAgent("a", model=model, tools=[lookup], max_iterations=2), session_service=store
            )
            events = [e async for e in runner.run("u", "s", "hi", stream=streamed)]
        texts += [e.model_dump_json() for e in events] + streamed_text(events)
        with sqlite3.connect(store_path) as db:
            texts += list(db.iterdump())
        translator = AguiTranslator(TranslateContext(thread_id="s", run_id="r", invocation_id="r"))
        agui = await translator.start({})
        for event in events:
            agui += await translator.translate(event)
        agui += await translator.finish()
        texts += [e.model_dump_json() for e in agui]
        deltas = (e.delta for e in agui if isinstance(e, TextMessageContentEvent | ToolCallArgsEvent))
        texts.append("".join(deltas))
        responses: list[LlmResponse] = []
        try:
            async for response in model.generate(LlmRequest(messages=[Message.user("hi")], stream=streamed)):
                responses.append(response)
        except ModelError as error:
            texts += chain_texts(error)
        texts += [r.model_dump_json() for r in responses]
        texts += streamed_text(responses)
    return texts


def streamed_text(responses: Sequence[LlmResponse]) -> list[str]:
    """The partial responses' text joined, and their tool calls' arguments joined."""
    partial = [r.delta for r in responses if r.is_partial and r.delta is not None]
    arguments = (c.function.arguments for d in partial for c in d.tool_calls)
    return ["".join(d.content for d in partial), "".join(arguments)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=keys, place=st.sampled_from(PLACES), data=st.data())
def test_no_piece_of_a_secret_leaves_the_adapter(key: str, place: str, data: st.DataObject) -> None:
    forms = [key, PASSWORD, WRITTEN, f"{USER}:{PASSWORD}", BASIC, f"Basic {BASIC}"]
    echo = data.draw(st.sampled_from(forms).flatmap(echoes))
    with tempfile.TemporaryDirectory() as tmp, debug_logs() as logs, set_testing(True):
        texts = asyncio.run(outputs(key, place, echo, Path(tmp) / "s.sqlite3"))
    assert logs  # the SDK and httpx logged at DEBUG: the check below read their records
    assert leaks([key, *CREDENTIALS], "\n".join(texts + logs)) == []


def test_the_property_sees_a_leak() -> None:
    """The property's oracle: the text of an unmasked echo is caught."""
    assert leaks(KEYS[:1], f"x{KEYS[0][5:13]}y") == [KEYS[0][5:13]]


# --- a real server on 127.0.0.1: httpcore's own log lines --------------------------------------


def echoing_app(key: str) -> Starlette:
    async def chat(request: Request) -> Response:
        auth = request.headers.get("authorization", "")
        return Response(
            json.dumps({"error": {"message": f"bad key {auth} {key}"}}),
            status_code=500,
            headers={"x-echo": auth, "content-type": "application/json"},
        )

    return Starlette(routes=[Route("/agui/v1/chat/completions", chat, methods=["POST"])])


@pytest.mark.parametrize("own_client", [False, True], ids=["sdk-client", "httpx-client"])
async def test_a_loopback_server_echoing_the_key_leaves_no_trace_in_any_log(
    own_client: bool, testing: object
) -> None:
    key = KEYS[0]
    with serving(echoing_app(key)) as url, debug_logs() as logs:
        base_url = url.replace("http://", f"http://{USER}:{WRITTEN}@") + "/v1"
        client = httpx.AsyncClient() if own_client else None
        model = OpenAIModel("gpt-test", base_url=base_url, api_key=key, http_client=client)
        events = [e async for e in Runner(LlmAgent("a", model=model)).run("u", "s", "hi")]
        await model.aclose()
        if client is not None:
            await client.aclose()
    assert events[-1].error is not None and events[-1].error.type == "RetriesExhausted"
    assert any(line.startswith("httpcore") for line in logs)  # the transport's own records were read
    assert leaks([key, *CREDENTIALS], "\n".join(logs + [e.model_dump_json() for e in events])) == []


async def test_a_short_key_is_a_placeholder_and_short_credentials_are_masked_in_urls(testing: object) -> None:
    answer = complete({"role": "assistant", "content": "EMPTY means no key"})
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))
    with debug_logs() as logs:
        async with httpx.AsyncClient(transport=transport) as client:
            model = OpenAIModel(
                "m", base_url="http://ada:pw@fake.test/v1", api_key="EMPTY", http_client=client
            )
            responses = [r async for r in model.generate(LlmRequest(messages=[Message.user("hi")]))]

    assert responses[0].content == "EMPTY means no key"
    http_lines = [line for line in logs if line.startswith("httpx ")]
    assert http_lines == [
        'httpx HTTP Request: POST http://***fake.test/v1/chat/completions "HTTP/1.1 200 OK"'
    ]


def test_a_key_is_forgotten_by_the_logs_with_its_last_model(caplog: pytest.LogCaptureFixture) -> None:
    first, second = "sk-Aa1Bb2Cc3Dd4Ee5", "sk-Ff6Gg7Hh8Ii9Jj0"
    model = OpenAIModel("m", api_key=first)
    again = OpenAIModel("m", api_key=first)
    del model
    OpenAIModel("m", api_key=second)  # made and dropped at once
    with caplog.at_level(logging.INFO, logger="adk"):
        logging.getLogger("adk.test").info("keys %s %s", first, second)
        del again
        gc.collect()
        OpenAIModel("m", api_key="sk-Kk1Ll2Mm3Nn4Oo5")  # forgetting happens when a model is made
        logging.getLogger("adk.test").info("keys %s %s", first, second)

    assert caplog.messages == ["keys *** ***", f"keys {first} {second}"]


# --- the redactor --------------------------------------------------------------------------------


def test_the_redactor_masks_the_secret_and_every_piece_of_8_or_more() -> None:
    redact = Redactor(["sk-test-4f3a9c1e7b2dQWERTY", "pw"])

    assert redact("key sk-test-4f3a9c1e7b2dQWERTY!") == "key ***!"
    assert redact("tail ...9c1e7b2dQWERTY and head sk-test-4f") == "tail ...*** and head ***"
    assert redact("7 chars: QWERTY! and pw") == "7 chars: QWERTY! and ***"
    text = "nothing secret here"
    assert redact(text) is text


def test_a_redactor_without_secrets_changes_nothing() -> None:
    redact = Redactor(["", ""])

    assert not redact
    assert redact("sk-anything") == "sk-anything"
