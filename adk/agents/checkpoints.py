"""The core's one seam for durable runs: every model attempt and every tool call passes here.

Whichever model an attempt goes to (the agent's, a hook's `Retry` to another, a `FallbackModels`'
or `CircuitBreaker`'s, a summary's, an MCP server's sampling) and whichever tool a call runs (a
function, an MCP server's, a client's), `model_call.attempt` opens its stream with `generate`
and `tool_call` runs the body with `run_tool`. A plain run has no `Checkpoints` (a ContextVar
read each); a durable run (adk/durable/steps.py) sets one for its workflow, making each a step.

Concurrent code of a run (a `ParallelAgent`'s children, the calls of one response) runs on a
*lane* of its own (`forked`): a durable run tells the steps of concurrent lanes apart by it,
whatever order they start in. A lane hands each complete event it made on to the run through
`handing`, where a recovered durable run keeps the order the events were stored in.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from adk.context import ToolContext
    from adk.events import Event, LlmResponse
    from adk.models.base import LlmRequest, Model
    from adk.tools import BaseTool

__all__ = ["Checkpoints", "checkpoints", "current_lane", "forked", "handing"]


class Checkpoints(Protocol):
    """How a run makes its attempts and tool calls, and orders what concurrent lanes hand on."""

    def generate(self, model: Model, request: LlmRequest, limit: float | None) -> AsyncIterator[LlmResponse]:
        """One attempt's stream; `limit`: each chunk must come within it (a `ModelTimeoutError`)."""
        ...

    async def run_tool(self, tool: BaseTool, args: dict[str, Any], ctx: ToolContext) -> Any:
        """One execution of a tool's body, held to the tool's `timeout`."""
        ...

    async def handing(self, event: Event) -> None:
        """Return once the lane running may hand `event` (complete) on to the run."""
        ...


checkpoints: contextvars.ContextVar[Checkpoints | None] = contextvars.ContextVar(
    "adk_checkpoints", default=None
)
"""The run's `Checkpoints`: set by a durable run for its workflow, None in a plain run."""

_lane: contextvars.ContextVar[str] = contextvars.ContextVar("adk_lane", default="")


def current_lane() -> str:
    """The lane the running code is on: "" for a run's own, else `/<child>` or `/<call index>`
    for each fork it runs under (`/research/1`: the second call of a response of the
    `ParallelAgent` child `research`)."""
    return _lane.get()


def forked(segment: str) -> contextvars.Context | None:
    """The context for a task that runs concurrently with its siblings, on the lane `segment`
    adds (a child agent's name, a call's index); None in a plain run (the task's own copy)."""
    if checkpoints.get() is None:
        return None
    context = contextvars.copy_context()
    context.run(_lane.set, f"{_lane.get()}/{segment}")
    return context


async def handing(event: Event) -> None:
    """Return once the running lane may hand `event` on (at once in a plain run)."""
    made = checkpoints.get()
    if made is not None:
        await made.handing(event)
