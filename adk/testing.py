"""Testing helpers that ship with adk, so users test their own agents without a network.

`ScriptedModel` replays scripted steps and records every request it received.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from pydantic_core import to_json

from adk.agents.output import output_response
from adk.errors import ScriptError
from adk.events import LlmResponse, ToolCall
from adk.models.base import LlmRequest
from adk.recovery import set_testing

__all__ = [
    "ScriptError",
    "ScriptedModel",
    "Step",
    "Stream",
    "call_tool",
    "output_response",
    "set_testing",
    "transfer_to",
]


@dataclass(frozen=True, slots=True)
class Stream:
    """A scripted call that streams `chunks` as partial output, then raises `error` or completes."""

    chunks: Sequence[str]
    error: Exception | None = None


Step: TypeAlias = (
    "LlmResponse | str | BaseException | Stream"
    " | Callable[[LlmRequest], LlmResponse | str | Awaitable[LlmResponse | str]]"
)
"""One scripted model call: a response, a text answer, an exception to raise, a `Stream`, or a
function of the request that returns a response or text."""


def call_tool(name: str, /, *, call_id: str | None = None, **arguments: Any) -> LlmResponse:
    """A scripted answer that calls tool `name` with `arguments` (a fresh call id unless given)."""
    return LlmResponse.calls(ToolCall.of(name, to_json(arguments).decode(), id=call_id))


def transfer_to(agent_name: str, *, call_id: str | None = None) -> LlmResponse:
    """A scripted answer that transfers the conversation to `agent_name`."""
    return call_tool("transfer_to_agent", call_id=call_id, agent_name=agent_name)


class ScriptedModel:
    """A model that answers from a script, one step per call, and records the requests.

    For a streamed request an answer goes out as partial chunks first, its text and then its
    tool calls' arguments word by word, then complete.
    """

    def __init__(
        self,
        steps: Iterable[Step],
        *,
        name: str = "scripted",
        context_window: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self._steps = list(steps)
        self._name = name
        self.context_window = context_window
        """The context it says it has, in tokens (as `OpenAIModel(context_window=)`), if any."""
        self.max_tokens = max_tokens
        """The most it says a call produces when the request sets none (as
        `OpenAIModel(max_tokens=)`), if it says: what a `Budget` reserves."""
        self.requests: list[LlmRequest] = []
        """Every request received, in order."""

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        """How many scripted steps have not been used yet."""
        return len(self._steps) - len(self.requests)

    def assert_done(self) -> None:
        """Fail unless every scripted step was used."""
        if self.remaining:
            raise ScriptError(
                f"ScriptedModel {self._name!r} was called {len(self.requests)} time(s) "
                f"but {len(self._steps)} step(s) were scripted"
            )

    async def generate(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        n = len(self.requests)
        self.requests.append(request)
        if n >= len(self._steps):
            raise ScriptError(
                f"ScriptedModel {self._name!r} was called {n + 1} time(s) but only "
                f"{len(self._steps)} step(s) were scripted; last request's messages: "
                f"{[m.content for m in request.messages][-3:]}"
            )
        step = self._steps[n]
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, Stream):
            for text in step.chunks:
                yield LlmResponse.chunk(text, model=self._name)
            if step.error is not None:
                raise step.error
            yield LlmResponse.text("".join(step.chunks), model=self._name)  # streamed already: not again
            return
        answer = step(request) if callable(step) and not isinstance(step, LlmResponse) else step
        if inspect.isawaitable(answer):
            answer = await answer
        response = LlmResponse.text(answer, model=self._name) if isinstance(answer, str) else answer
        if request.stream and not response.is_partial:
            for chunk in response.word_chunks():
                yield chunk
        yield response
