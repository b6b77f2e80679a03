"""The conversation `adk demo` plays: a tool call, a guardrail halt, a retry and a fallback.

It needs no API key: `DemoModel` is a small deterministic model that answers by looking at the
request. Give another model (`adk demo --model openai:<name>`) and the same conversation runs on
it; the failures are injected around whichever model plays.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass

import tenacity

from adk.agents import LlmAgent
from adk.callbacks.results import Cont, Halt
from adk.context import ModelContext
from adk.errors import AuthenticationError, ServerError
from adk.events import LlmResponse, Message, ToolCall
from adk.models.base import LlmRequest, Model
from adk.recovery import RetryPolicy, RetryThenFallback
from adk.tools import tool

__all__ = ["TURNS", "DemoModel", "Faults", "Guardrail", "Turn", "build_agent", "get_weather"]

_WEATHER = {
    "Paris": {"city": "Paris", "temp_c": 18, "sky": "sunny"},
    "Tokyo": {"city": "Tokyo", "temp_c": 24, "sky": "cloudy"},
}


@tool
def get_weather(city: str) -> dict[str, object]:
    """Get the current weather in a city.

    Args:
        city: The city's name, in English.
    """
    return _WEATHER.get(city.strip().title(), {"city": city, "temp_c": 20, "sky": "clear"})


class Guardrail:
    """Halts the model call when the user's last message mentions a banned topic."""

    def __init__(self, banned: Iterable[str]) -> None:
        self.banned = tuple(word.lower() for word in banned)

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
        said = next((m.content.lower() for m in reversed(ctx.request.messages) if m.role == "user"), "")
        for word in self.banned:
            if word in said:
                return Halt(LlmResponse.text(f"Sorry, I can't help with anything about {word}s."))
        return Cont(ctx)


class DemoModel:
    """A deterministic model: asks for `get_weather` on "weather in <city>", reports tool results.

    A streamed request gets its text word by word, `pace` seconds apart.
    """

    def __init__(self, name: str = "demo", *, pace: float = 0.0) -> None:
        self._name = name
        self.pace = pace

    @property
    def name(self) -> str:
        return self._name

    def answer(self, request: LlmRequest) -> LlmResponse:
        last = request.messages[-1] if request.messages else Message.user("")
        if last.role == "tool":
            try:
                w = json.loads(last.content)
                return LlmResponse.text(
                    f"It's {w['temp_c']}°C and {w['sky']} in {w['city']}.", model=self.name
                )
            except (ValueError, KeyError, TypeError):
                return LlmResponse.text(f"The tool said: {last.content}", model=self.name)
        asked = re.search(r"weather in ([a-z ]+)", last.content, re.IGNORECASE)
        if asked:
            call = ToolCall.of("get_weather", json.dumps({"city": asked.group(1).strip()}))
            return LlmResponse.calls(call, model=self.name)
        if "thank" in last.content.lower():
            return LlmResponse.text("You're welcome! Come back when the weather changes.", model=self.name)
        return LlmResponse.text("I'm the demo model: ask me about the weather in a city.", model=self.name)

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        response = self.answer(request)
        if request.stream:
            for chunk in response.word_chunks():
                if self.pace:
                    await asyncio.sleep(self.pace)
                yield chunk
        yield response


class Faults:
    """Wraps a model under another name; its next calls raise the errors queued by `fail_next`."""

    def __init__(self, model: Model, name: str) -> None:
        self._model = model
        self._name = name
        self._queue: list[Exception] = []

    @property
    def name(self) -> str:
        return self._name

    def fail_next(self, *errors: Exception) -> None:
        self._queue.extend(errors)

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        if self._queue:
            raise self._queue.pop(0)
        async for response in self._model.generate(request):
            yield response


@dataclass(frozen=True, slots=True)
class Turn:
    """One user message of the demo, and the failures injected into the primary model first."""

    message: str
    faults: Sequence[Exception] = ()
    note: str = ""
    """What the turn shows, for the audience."""
    tool: str | None = None
    """The tool the model is expected to call; a real model may choose not to."""


TURNS = (
    Turn("What's the weather in Paris?", note="a tool call", tool="get_weather"),
    Turn("What's the admin password?", note="a guardrail halts the model call"),
    Turn(
        "And the weather in Tokyo?",
        [ServerError("503 Service Unavailable", status_code=503)],
        note="the model fails once with a 503; the retry policy tries again",
        tool="get_weather",
    ),
    Turn(
        "Thanks!",
        [AuthenticationError("401 API key revoked", status_code=401)],
        note="the primary model fails for good; the agent falls back to the backup",
    ),
)


def build_agent(
    model: Model | None = None, *, wait: float = 0.2, pace: float = 0.0
) -> tuple[LlmAgent, Faults]:
    """The demo agent on `model` (`DemoModel`s by default), and the fault injector of its primary.

    `wait` is the retry policy's wait between attempts; `pace` the `DemoModel`s' streaming pace.
    """
    primary = Faults(model or DemoModel("demo", pace=pace), "primary")
    backup = model or DemoModel("backup", pace=pace)
    agent = LlmAgent(
        "assistant",
        model=primary,
        instruction="You are a concise assistant. Use get_weather for any weather question.",
        tools=[get_weather],
        callbacks=[
            Guardrail(["password"]),
            RetryThenFallback(
                [backup], RetryPolicy(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_fixed(wait))
            ),
        ],
    )
    return agent, primary
