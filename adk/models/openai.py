"""`OpenAIModel`: chat completions from OpenAI or any compatible server (vLLM, llama.cpp, Ollama, LiteLLM).

Built on the openai SDK with its own retries off: failures become `adk.errors.ModelError`s, which
the recovery callbacks retry or fall back from. The key and any credentials in the base URL never
leave the adapter: every error is made by `_fail`, which masks them (see `_redact`), and so is
every text taken from the server's answers; the log records of adk and the HTTP stack are masked
as they are made.
"""

from __future__ import annotations

import base64
import email.utils
import math
import os
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

import httpx
import openai

from adk.errors import (
    AuthenticationError,
    BadRequestError,
    ContextOverflowError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from adk.events import LlmResponse, Message
from adk.limits.timeouts import positive
from adk.models._answers import StreamedAnswer, complete_answer
from adk.models._redact import PIECE, Redactor, redact_logs
from adk.models.base import LlmRequest

__all__ = ["OpenAIModel"]

_PATH = "/chat/completions"
_MALFORMED = (LookupError, TypeError, AttributeError, ValueError)
"""What reading a response that is not shaped like a chat completion raises."""
_PLACEHOLDER_KEY = "unused"
"""Sent when a `base_url` is given without a key: local servers ignore it, the SDK insists on one."""
_REQUEST, _RESPONSE, _STREAM = "request", "response", "stream"
"""What was under way when an error arose: sending, reading a complete answer, reading a stream."""


class OpenAIModel:
    """A model reached through the chat-completions API.

    `api_key` and `base_url` default to `OPENAI_API_KEY` and `OPENAI_BASE_URL`, as in the SDK.
    The request settings are defaults: a field set on the `LlmRequest` wins; `max_tokens` is also
    what a `Budget` reserves for a call whose request sets none (and never raises). `schema_format` says
    how a JSON schema asked for in `response_format` goes out: as OpenAI's `json_schema`, or as
    `json_object` with the schema beside it, the form llama-cpp-python's server takes (it refuses
    `json_schema`). `max_tokens_as="max_completion_tokens"` sends `max_tokens` under that name, the
    only one OpenAI's reasoning models take (and a `Budget` sets it on every call). `stream_usage` asks
    streams for token counts (`stream_options`); turn it off for a server that rejects the option.
    `timeout` (120 s, not the SDK's 600 s) bounds each request's wait for the server (a
    `ModelTimeoutError`, transient); `RetryPolicy(attempt_timeout=)` bounds a whole attempt.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 120.0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        schema_format: Literal["json_schema", "json_object"] = "json_schema",
        max_tokens_as: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        stream_usage: bool = True,
        context_window: int | None = None,
    ) -> None:
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None:
            if base_url is None:
                raise AuthenticationError(
                    f"no API key for model {model!r}: pass api_key= or set OPENAI_API_KEY "
                    "(or give a base_url for a server that needs no key)"
                )
            api_key = _PLACEHOLDER_KEY
        self._model = model
        self.context_window = _window(model, context_window)
        """The model's context in tokens, if given: what requests are held to when the agent sets
        no `max_context_tokens` (docs/context.md)."""
        self.max_tokens = max_tokens  # a call's most when its request sets none: a Budget reserves it
        self._secret = None if api_key == _PLACEHOLDER_KEY else api_key
        """The key, or None for the placeholder, which is no secret."""
        self._owns_client = http_client is None
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=positive(timeout, f"OpenAIModel({model!r}): timeout"),
            max_retries=0,  # tenacity, through the recovery callbacks, is the only retry layer
            # The SDK accepts an httpx client although newer versions annotate another HTTP library.
            http_client=http_client,  # type: ignore[arg-type,unused-ignore]
        )
        url = httpx.URL(str(self._client.base_url))
        # For messages and reprs: without any credentials written into the URL.
        self._base_url = str(url.copy_with(userinfo=b"")).rstrip("/")
        self._redact = _redactor(self._secret, url)
        """Masks the key and the URL's credentials in everything taken from the server and in errors."""
        if self._redact:
            redact_logs(self, self._redact)
        given = (
            ("temperature", temperature),
            ("max_tokens", max_tokens),
            ("response_format", response_format),
        )
        self._settings = {name: value for name, value in given if value is not None}
        self._tool_choice = tool_choice
        self._stream_options = {"include_usage": True} if stream_usage else None
        self._schema_as_json_object = schema_format == "json_object"
        self._max_tokens_as = max_tokens_as

    @property
    def name(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"OpenAIModel({self._model!r}, base_url={self._base_url!r})"

    async def aclose(self) -> None:
        """Close the connections this model opened; an `http_client` passed in stays its owner's to close."""
        if self._owns_client:
            await self._client.close()

    def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        """Yield the response: for a streamed request, partial chunks (text, pieces of tool-call
        arguments) first, then the complete one."""
        body = self._body(request)
        return self._stream(body) if request.stream else self._complete(body)

    def _body(self, request: LlmRequest) -> dict[str, Any]:
        """The chat-completions request body for `request`."""
        messages: list[dict[str, Any]] = []
        if request.instruction:
            messages.append({"role": "system", "content": request.instruction})
        messages.extend(_message(m) for m in request.messages)
        body: dict[str, Any] = {
            "model": request.model or self._model,
            "messages": messages,
            "stream": request.stream,
        }
        body.update(self._settings)
        for name in ("temperature", "max_tokens", "response_format"):
            value = getattr(request, name)
            if value is not None:
                body[name] = value
        if self._max_tokens_as != "max_tokens" and "max_tokens" in body:
            body[self._max_tokens_as] = body.pop("max_tokens")
        if self._schema_as_json_object:
            asked = body.get("response_format")
            if isinstance(asked, dict) and asked.get("type") == "json_schema":
                body["response_format"] = {"type": "json_object", "schema": asked["json_schema"]["schema"]}
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
            # Only with tools: servers reject a tool_choice that has nothing to choose from.
            tool_choice = request.tool_choice if request.tool_choice is not None else self._tool_choice
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        if request.stream and self._stream_options is not None:
            body["stream_options"] = self._stream_options
        return body

    async def _complete(self, body: dict[str, Any]) -> AsyncIterator[LlmResponse]:
        stage = _REQUEST
        try:
            data: Any = await self._client.post(_PATH, body=body, cast_to=object)
            stage = _RESPONSE
            response = complete_answer(data, body["model"], self._redact)
        except Exception as e:
            failure = self._error(e, stage)
        else:
            yield response
            return
        raise failure  # outside the handler, so that the raw error is not its __context__

    async def _stream(self, body: dict[str, Any]) -> AsyncIterator[LlmResponse]:
        stage = _REQUEST
        answer = StreamedAnswer(body["model"], self._redact)
        try:
            stream = await self._client.post(
                _PATH, body=body, cast_to=object, stream=True, stream_cls=openai.AsyncStream[object]
            )
            stage = _STREAM
            async with stream:  # closes the response however the loop ends
                chunk: Any
                async for chunk in stream:
                    for partial in answer.add(chunk):
                        yield partial
            if answer.finish_reason is None:
                problem = f"the stream ended without a finish reason after {answer.chunks} chunk(s)"
                raise self._fail(StreamInterruptedError, problem)
            for partial in answer.tails():
                yield partial
            response = answer.response()
        except Exception as e:
            failure = self._error(e, stage, answer.chunks)
        else:
            yield response
            return
        raise failure  # outside the handler, so that the raw error is not its __context__

    def _where(self) -> str:
        return f"model {self._model!r} at {self._base_url}"

    def _fail(
        self,
        kind: type[ModelError],
        problem: str,
        cause: BaseException | None = None,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> ModelError:
        """The one place the adapter's errors are made: their text masked, their cause a masked copy.

        The cause's chain is replaced by stand-ins: the SDK's exceptions hold the raw request (its
        Authorization header) and response, and pydantic's hold the values they refused.
        """
        error = kind(
            self._redact(f"{self._where()}: {problem}"), status_code=status_code, retry_after=retry_after
        )
        if cause is not None:
            error.__cause__ = _stand_ins(cause, self._redact)
        return error

    def _error(self, error: Exception, stage: str, chunks: int = 0) -> ModelError:
        """The adk error for `error`, raised while `stage` (sending, reading the answer, streaming)."""
        fail = self._fail
        if isinstance(error, ModelError):  # made by _fail already
            return error
        if stage == _STREAM:
            if isinstance(error, openai.APITimeoutError | httpx.TimeoutException):
                return fail(ModelTimeoutError, f"the stream timed out after {chunks} chunk(s)", error)
            # openai < 2 lets httpx's errors out of the stream unwrapped
            if isinstance(error, openai.APIConnectionError | httpx.TransportError):
                return fail(StreamInterruptedError, f"the stream broke after {chunks} chunk(s)", error)
        if isinstance(error, _MALFORMED):
            what = "chunk" if stage == _STREAM else "response"
            return fail(ServerError, f"malformed {what}: {error!r}", error)
        if not isinstance(error, openai.OpenAIError):
            return fail(ModelError, f"unexpected {type(error).__name__}: {error}", error)
        if isinstance(error, openai.APITimeoutError):
            return fail(ModelTimeoutError, "the request timed out", error)
        if isinstance(error, openai.APIConnectionError):
            return fail(ModelConnectionError, f"could not connect: {error.__cause__ or error}", error)
        if not isinstance(error, openai.APIStatusError):
            if isinstance(error, openai.APIError):  # an error event inside a stream
                return fail(ServerError, f"the server reported an error: {_detail(error)}", error)
            return fail(ModelError, str(error), error)
        return self._status_error(error)

    def _status_error(self, error: openai.APIStatusError) -> ModelError:
        """The adk error for an HTTP error status the server answered with."""
        status = error.status_code
        detail = _detail(error)
        kind: type[ModelError] = BadRequestError
        text = f"the request was rejected (HTTP {status}): {detail}"
        retry_after = None
        if status == 401:
            problem = (
                "requires an API key and none was given" if self._secret is None else "refused the API key"
            )
            # The server's own text is left out: it may quote part of the key.
            kind, text = (
                AuthenticationError,
                f"the server {problem} (HTTP 401); pass api_key= or set OPENAI_API_KEY",
            )
        elif status == 403:
            kind, text = AuthenticationError, f"the API key is not allowed to do this (HTTP 403): {detail}"
        elif status == 429:
            retry_after = _retry_after(error.response.headers)
            hint = "" if retry_after is None else f", retry after {retry_after:g}s"
            kind, text = RateLimitError, f"rate limited (HTTP 429{hint}): {detail}"
        elif status == 408:
            kind, text = ModelTimeoutError, f"the server timed out (HTTP 408): {detail}"
        elif status >= 500:
            kind, text = ServerError, f"server error (HTTP {status}): {detail}"
        elif _overflows(error, detail):
            kind, text = (
                ContextOverflowError,
                f"the request is longer than the model's context (HTTP {status}): {detail}",
            )
        return self._fail(kind, text, error, status_code=status, retry_after=retry_after)


def _redactor(key: str | None, url: httpx.URL) -> Redactor:
    """The key and the base URL's credentials, in every form they travel in or a server may echo.

    httpx sends `user:password` of a URL as `Authorization: Basic base64(user:password)` (in place
    of the SDK's Bearer key). Masked with their pieces: the key; the password (the user name if
    there is none: a token written as `https://TOKEN@host`), decoded and percent-encoded as in the
    URL; the Basic token. Masked whole only, as their pieces hold the user's name: `user:password@`
    as in the URL, and `user:password` decoded. A key or password shorter than `PIECE` is not
    masked alone: masked everywhere it would mangle ordinary words, and a key that short is a
    placeholder anyway (vLLM's "EMPTY", Ollama's "ollama").
    """
    secrets: list[str] = [key or ""]
    wholes: list[str] = []
    if url.userinfo:
        written = url.userinfo.decode("ascii", "replace")
        user, _, password = written.partition(":")
        plain = f"{url.username}:{url.password}"
        secrets += (url.password or url.username, password or user)
        secrets.append(base64.b64encode(plain.encode()).decode("ascii"))
        wholes += (written + "@", plain if len(plain) >= PIECE else "")
    return Redactor([s for s in secrets if len(s) >= PIECE], wholes)


class _Redacted(Exception):
    """Stands in for an exception in an adk error's chain: its type's name and its text, masked."""


def _stand_ins(error: BaseException, redact: Redactor) -> _Redacted:
    """Masked stand-ins for `error` and what it was raised from, chained the same way.

    Each keeps the original's traceback, so a printed error still shows where it arose.
    """
    first = last = _stand_in(error, redact)
    seen = {id(error)}
    current = _origin(error)
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        stand_in = _stand_in(current, redact)
        last.__cause__ = stand_in
        last = stand_in
        current = _origin(current)
    return first


def _stand_in(error: BaseException, redact: Redactor) -> _Redacted:
    kind = type(error)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return _Redacted(redact(f"{name}: {error}")).with_traceback(error.__traceback__)


def _origin(error: BaseException) -> BaseException | None:
    """What `error` was raised from, as a printed traceback shows it."""
    return error.__cause__ or (None if error.__suppress_context__ else error.__context__)


_OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
"""The error codes and types of a request too long for the model: OpenAI's (vLLM's), llama.cpp's."""
_OVERFLOW_TEXTS = (
    "exceeds the available context size",  # llama.cpp's server
    "exceed context window",  # llama-cpp-python's: "Requested tokens (n) exceed context window of m"
    "maximum context length",  # OpenAI's and vLLM's: "This model's maximum context length is n tokens"
)


def _overflows(error: openai.APIStatusError, detail: str) -> bool:
    """Whether a refused request was refused for its length: by the error's code or type, else by
    the server's words (servers that give neither code)."""
    body = error.body
    if isinstance(body, Mapping) and (
        body.get("code") in _OVERFLOW_CODES or body.get("type") in _OVERFLOW_CODES
    ):
        return True
    text = detail.lower()
    return any(words in text for words in _OVERFLOW_TEXTS)


def _detail(error: openai.APIError) -> str:
    """The server's explanation of `error` (the caller masks it)."""
    body = error.body
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        return str(body["message"])
    return error.message if body is None else str(body)


def _message(message: Message) -> dict[str, Any]:
    """An adk message as a chat-completions message."""
    match message.role:
        case "tool":
            return {"role": "tool", "content": message.content, "tool_call_id": message.tool_call_id or ""}
        case "assistant" if message.tool_calls:
            return {
                "role": "assistant",
                "content": message.content,  # "" rather than None: some servers reject None here
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in message.tool_calls
                ],
            }
        case _:
            return {"role": message.role, "content": message.content}


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait the server asks for: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date."""
    if (millis := _seconds(headers.get("retry-after-ms"))) is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    if (seconds := _seconds(value)) is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _seconds(value: str | None) -> float | None:
    """`value` as a finite, non-negative number, or None."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return max(number, 0.0) if math.isfinite(number) else None


def _window(model: str, context_window: int | None) -> int | None:
    """`context_window`, checked: more than 0 if given."""
    if context_window is not None and context_window <= 0:
        raise ValueError(f"OpenAIModel({model!r}): context_window must be more than 0, got {context_window}")
    return context_window
