"""The times of one run's model and tool calls, for the page's timeline.

`RunTimes` is one run's callback (`create_app(run_callbacks=...)`), so that nothing it keeps
outlives the run, however it ends. It adds to the run's `adk.event`s (the page's copy of each
event, never the stored one) when each call started and how long it took, measured by its hooks:

- a model's response (`chat.completion`): `started` (epoch seconds, at `before_model`),
  `latency` (seconds to `after_model`, retries and fallbacks included) and `failed_at` (when
  each failed attempt ended: the timestamps of the call's `attempt.failed` events, which are
  told live as decisions but not sent whole);
- a tool's result (`tool.response`): `started` (at `before_tool`) and `latency` (to `after_tool`).

A call another callback halted before this one saw it carries neither: the page then places it
between the events' own timestamps.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from adk.callbacks.results import Cont
from adk.context import ModelContext, ToolContext
from adk.events import Event, LlmResponse, ObjectType

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

    from adk.agui import TranslateContext

__all__ = ["RunTimes"]


class RunTimes:
    """Times each model call (per branch: one branch's calls follow one another) and each tool
    call (per call id) of one run, and adds the times to the events that end them."""

    def __init__(self) -> None:
        self._started: dict[str, tuple[float, float]] = {}
        """Per branch (a model call) or `tool:<call id>`: the wall-clock and monotonic start."""
        self._took: dict[str, tuple[float, float]] = {}
        """Per branch or `tool:<call id>`: when the finished call started, and its seconds."""
        self._failed: dict[str, list[float]] = {}
        """Per branch: when each failed attempt of its model call ended."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        self._start(ctx.branch)
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self._stop(ctx.branch)
        return response

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self._start(f"tool:{ctx.tool_call_id}")
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        self._stop(f"tool:{ctx.tool_call_id}")
        return result

    def _start(self, key: str) -> None:
        self._started[key] = (time.time(), time.perf_counter())

    def _stop(self, key: str) -> None:
        started = self._started.pop(key, None)
        if started is not None:
            self._took[key] = (started[0], time.perf_counter() - started[1])

    def before_translate(self, event: Event, ctx: TranslateContext) -> None:
        if event.object == ObjectType.ATTEMPT_FAILED:
            self._failed.setdefault(event.branch, []).append(event.timestamp)

    def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> BaseEvent | None:
        from ag_ui.core import CustomEvent

        if not isinstance(event, CustomEvent) or event.name != "adk.event":
            return None
        value: dict[str, Any] = event.value
        if value["object"] == ObjectType.CHAT_COMPLETION and value["author"] != "user":
            key = value["branch"]
        elif value["object"] == ObjectType.TOOL_RESPONSE and value["choices"]:
            key = f"tool:{value['choices'][0]['message']['tool_call_id']}"
        else:
            return None
        took = self._took.pop(key, None)
        failed = self._failed.pop(key, None)
        if took is None:
            return None
        times = {"started": took[0], "latency": took[1]}
        return CustomEvent(name="adk.event", value={**value, **times, "failed_at": failed or []})
