"""The model protocol: one async call that yields a response, streamed or not."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from adk.events import Data, LlmResponse, Message, ToolDeclaration, _new

__all__ = ["LlmRequest", "Model"]


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


def _request(
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
    return request


@runtime_checkable
class Model(Protocol):
    """A model: `generate` yields, for a streamed request, partial chunks then the full response.

    Partial chunks have `is_partial=True` and a `delta`; the last response is complete
    (`is_partial=False`, `done=True`, a full `message`). A non-streamed request yields exactly one
    complete response. Failures are raised as exceptions, which `on_model_error` then sees.
    """

    @property
    def name(self) -> str: ...

    def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]: ...
