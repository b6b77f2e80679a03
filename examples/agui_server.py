"""Serve an agent over AG-UI: run `python -m examples.agui_server`, then point an AG-UI client
(CopilotKit, or `@ag-ui/client`'s `HttpAgent`) at http://127.0.0.1:8000/.

Needs the `agui` extra. The model is a stand-in that needs no network (it calls the weather tool
when asked about the weather, then reports what it found); give the agent a real model instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator

from ag_ui.core import BaseEvent, RunErrorEvent

from adk.agents import LlmAgent
from adk.agui import TranslateContext, serve
from adk.context import ToolContext
from adk.events import LlmResponse, ToolCall
from adk.models.base import LlmRequest
from adk.tools import tool


@tool
def get_weather(city: str, ctx: ToolContext) -> dict[str, str]:
    """Get the weather in a city."""
    ctx.state["last_city"] = city  # goes to the client as a STATE_DELTA
    return {"city": city, "sky": "sunny"}


class StandInModel:
    """Answers from the last message: a tool call for a weather question, else a plain reply."""

    name = "stand-in"

    async def generate(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        last = request.messages[-1]
        if last.role == "tool":
            response = LlmResponse.text(f"Here is the weather: {last.content}")
        elif "weather" in last.content.lower():
            city = last.content.rstrip("?!. ").rsplit(" ", 1)[-1]
            call = ToolCall.of("get_weather", json.dumps({"city": city}))
            response = LlmResponse.calls(call, content="Let me check.")
        else:
            response = LlmResponse.text(f"Ask me about the weather somewhere. You said: {last.content}")
        if request.stream:  # stream the text and the arguments word by word, then the complete response
            for chunk in response.word_chunks():
                yield chunk
        yield response


class HideErrorDetails:
    """An `after_translate` hook: clients get a plain message, not the server's error details."""

    def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> BaseEvent | None:
        if isinstance(event, RunErrorEvent):
            return RunErrorEvent(message=f"Run {ctx.run_id} failed; please try again.", code=event.code)
        return None


agent = LlmAgent(
    "weather",
    model=StandInModel(),
    instruction="Answer questions about the weather with the get_weather tool.",
    tools=[get_weather],
)

if __name__ == "__main__":
    serve(agent, translate_callbacks=[HideErrorDetails])
