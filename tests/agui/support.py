"""Helpers for the AG-UI tests: adk events to feed, AG-UI events as wire dicts with stable ids."""

from __future__ import annotations

import re
from typing import Any

from ag_ui.core import PROTOCOL_VERSION, BaseEvent

from adk.agui import TranslateContext
from adk.context import ToolContext
from adk.events import (
    Choice,
    ErrorInfo,
    Event,
    EventActions,
    LlmResponse,
    Message,
    ObjectType,
    ToolCall,
    ToolDeclaration,
)
from adk.tools import BaseTool

INV = "r1"
AUTHOR = "helper"

_MINTED = re.compile(r"^[0-9a-f]{32}$")


def wire(events: list[BaseEvent]) -> list[dict[str, Any]]:
    """The events as the client reads them, minted ids renamed `id1`, `id2`... in order of appearance."""
    names: dict[str, str] = {}

    def rename(value: Any) -> Any:
        if isinstance(value, str) and _MINTED.match(value):
            return names.setdefault(value, f"id{len(names) + 1}")
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value

    return [rename(e.model_dump(mode="json", by_alias=True)) for e in events]


def run_started(thread: str = "t1", run: str = INV) -> dict[str, Any]:
    return {"type": "RUN_STARTED", "threadId": thread, "runId": run, "protocolVersion": PROTOCOL_VERSION}


def run_finished(thread: str = "t1", run: str = INV) -> dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": thread, "runId": run}


def chunk(text: str, branch: str = "", author: str = AUTHOR) -> Event:
    return Event.new(
        INV,
        author,
        branch=branch,
        object=ObjectType.CHAT_COMPLETION_CHUNK,
        choices=[Choice(delta=Message.assistant(text))],
        is_partial=True,
    )


def complete(text: str = "", *calls: ToolCall, branch: str = "", author: str = AUTHOR) -> Event:
    response = LlmResponse.calls(*calls, content=text) if calls else LlmResponse.text(text)
    return Event.from_response(INV, author, response, branch=branch)


def tool_response(call_id: str, content: str, name: str = "weather") -> Event:
    message = Message.tool(content, tool_call_id=call_id, name=name)
    return Event.new(INV, AUTHOR, object=ObjectType.TOOL_RESPONSE, choices=[Choice(message=message)])


def discarded(branch: str = "") -> Event:
    return Event.new(INV, AUTHOR, branch=branch, object=ObjectType.ATTEMPT_DISCARDED, is_partial=True)


def state_update(**delta: Any) -> Event:
    return Event.new(
        INV, AUTHOR, object=ObjectType.STATE_UPDATE, actions=EventActions(state_delta=delta)
    )


def error(message: str = "boom", where: str | None = "model:scripted") -> Event:
    return Event.from_error(INV, AUTHOR, ErrorInfo(type="ServerError", message=message, where=where))


def completion() -> Event:
    return Event.new(INV, AUTHOR, object=ObjectType.RUNNER_COMPLETION, done=True)

CTX = TranslateContext(thread_id="t1", run_id=INV, invocation_id=INV)


class WeatherTool(BaseTool):
    """Reports sunny weather for `city` and remembers the city in session state."""

    name = "weather"

    @property
    def declaration(self) -> ToolDeclaration:
        schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        return ToolDeclaration(name=self.name, description="The weather in a city.", parameters=schema)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        ctx.state["last_city"] = args["city"]
        return {"city": args["city"], "sky": "sunny"}
