"""The model protocol: one async call that yields a response, streamed or not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from adk.data import Data
from adk.events import LlmResponse, Message, ToolDeclaration

__all__ = [
    "CHARS_PER_TOKEN",
    "Declared",
    "LlmRequest",
    "Model",
    "estimate_tokens",
    "new_request",
    "tool_chars",
    "with_max_tokens",
]

CHARS_PER_TOKEN = 4
"""The character rule: a token is about four characters of English text or JSON (OpenAI's rule of
thumb); each message costs `MESSAGE_TOKENS` more for its role and separators."""
MESSAGE_TOKENS = 4

_new = object.__new__


@dataclass(slots=True, kw_only=True)
class LlmRequest(Data):
    """What is sent to a model. A `before_model` hook may return a changed copy in its context."""

    model: str = ""
    """The model name to ask for; empty means the model's own default."""
    instruction: str = ""
    """The system instruction, sent before `messages`."""
    messages: list[Message] = field(default_factory=list)
    tools: list[ToolDeclaration] = field(default_factory=list)
    stream: bool = False
    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    usage_anchor: tuple[int, Message] | None = None
    """What the model reported for one of its past responses in `messages`: the tokens of the
    request it answered plus its answer's (prompt + completion), and that answer's message. Set
    by the agent from the session (`Session.history`); `estimated_tokens` counts up to it as reported."""

    @property
    def estimated_tokens(self) -> int:
        """How many tokens this request costs the model's context: what the model reported up to
        `usage_anchor`'s message, and, for the messages after it (or all, without one), the
        instruction and the tools, the character rule (`CHARS_PER_TOKEN`)."""
        anchor = self.usage_anchor
        messages = self.messages
        if anchor is not None:
            tokens, message = anchor
            for i in range(len(messages) - 1, -1, -1):
                if messages[i] is message:
                    return tokens + estimate_tokens(messages[i + 1 :])
        return estimate_tokens(messages, self.instruction, self.tools)


def estimate_tokens(
    messages: Sequence[Message], instruction: str = "", tools: Sequence[ToolDeclaration] = ()
) -> int:
    """The character rule's count of `messages`, an `instruction` and `tools`' declarations: their
    characters over `CHARS_PER_TOKEN`, rounded up, plus `MESSAGE_TOKENS` a message."""
    chars = len(instruction) + (tools.chars if type(tools) is Declared else tool_chars(tools))
    for message in messages:
        chars += len(message.content)
        if message.tool_calls:  # most messages have none: no iterator made for them
            for call in message.tool_calls:
                chars += len(call.function.name) + len(call.function.arguments)
    count = len(messages) + 1 if instruction else len(messages)
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN + MESSAGE_TOKENS * count


def tool_chars(tools: Iterable[ToolDeclaration]) -> int:
    """The characters of `tools`' declarations that the character rule counts: name, description
    and JSON schema."""
    return sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in tools)


class Declared(list[ToolDeclaration]):
    """An agent's tool declarations, their characters counted once (`tool_chars`): a request whose
    `tools` is this list is estimated without reading every schema again on every call. A hook
    that gives a request other tools gives it a new list, which is counted afresh."""

    __slots__ = ("chars",)

    def __init__(self, tools: Iterable[ToolDeclaration] = ()) -> None:
        super().__init__(tools)
        self.chars = tool_chars(self)


def new_request(
    instruction: str,
    messages: list[Message],
    tools: list[ToolDeclaration],
    stream: bool,
    response_format: dict[str, Any] | None,
) -> LlmRequest:
    """An `LlmRequest` of the framework's, set through its slots: its `__init__`, given keywords
    and calling a factory per default, costs three times as much (every model call makes one)."""
    request = _new(LlmRequest)
    request.model = ""
    request.instruction = instruction
    request.messages = messages
    request.tools = tools
    request.stream = stream
    request.temperature = None
    request.max_tokens = None
    request.tool_choice = None
    request.response_format = response_format
    request.usage_anchor = None
    return request


def with_max_tokens(request: LlmRequest, max_tokens: int | None) -> LlmRequest:
    """`request` with `max_tokens` (itself if it has them): a copy set slot by slot, a fifth of
    what `dataclasses.replace` costs (tests/limits check that it keeps every other field)."""
    if max_tokens == request.max_tokens:
        return request
    sent: LlmRequest = _new(LlmRequest)
    sent.model = request.model
    sent.instruction = request.instruction
    sent.messages = request.messages
    sent.tools = request.tools
    sent.stream = request.stream
    sent.temperature = request.temperature
    sent.max_tokens = max_tokens
    sent.tool_choice = request.tool_choice
    sent.response_format = request.response_format
    sent.usage_anchor = request.usage_anchor
    return sent


@runtime_checkable
class Model(Protocol):
    """A model: `generate` yields, for a streamed request, partial chunks then the full response.

    Partial chunks have `is_partial=True` and a `delta`; the last response is complete
    (`is_partial=False`, `done=True`, a full `message`). A non-streamed request yields exactly one
    complete response. Failures are raised as exceptions, which `on_model_error` then sees.

    A model may also say how long its context is, in tokens: an optional `context_window`
    attribute (`OpenAIModel(context_window=)`), read where an agent sets no `max_context_tokens`
    (docs/context.md), and the most a call of it produces when its request sets none: an optional
    `max_tokens` attribute (`OpenAIModel(max_tokens=)`), which a `Budget` reserves and never
    raises (docs/limits.md). Neither is part of the protocol: a model without them is a model.
    """

    @property
    def name(self) -> str: ...

    def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]: ...
