"""Model attempts and tool calls as DBOS steps: a durable run's `Checkpoints`.

The core makes every model attempt and every tool call through the run's `Checkpoints`
(adk.agents.checkpoints), whichever model (a fallback, a hook's switch) or tool (an MCP server's,
one of an agent tool's agent), so a durable run sets `DurableSteps` for its workflow and each
becomes a checkpointed step, with no wrapper around any model or tool. The `before_*` / `after_*`
hooks around them stay outside the step (their answers are steps of their own: hooks.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from adk.agents.base import BaseAgent
from adk.agents.model_call import chunks_within, close_stream
from adk.agents.tool import AgentTool
from adk.context import ToolContext
from adk.durable.checkpoint import reserved, step, step_options
from adk.durable.hooks import durable_callbacks
from adk.durable.partials import live_chunks
from adk.errors import ToolInterruptedError
from adk.events import Event, LlmResponse, new_id
from adk.limits.timeouts import tool_bounded
from adk.models.base import LlmRequest, Model
from adk.tools import BaseTool

if TYPE_CHECKING:
    from adk.durable.replay import ReplayStore

__all__ = ["DurableSteps", "ToolInterruptedError", "make_durable"]


@dataclass(frozen=True, slots=True)
class _Done:
    """A tool call's checkpoint: its value, and whether it escalated or ended the invocation."""

    value: Any
    escalated: bool
    ended: bool


@dataclass(frozen=True, slots=True)
class _Interrupted:
    """The checkpointed outcome of a cut call that is not run again (it pickles, unlike a closure)."""


class DurableSteps:
    """The `Checkpoints` of a durable run's workflow over `store` (its `ReplayStore`).

    An attempt is the step `adk.model:<model>`: it collects the model's chunks and checkpoints
    them (or its error); on recovery they come back and the model is not called again. In a
    workflow, a streamed attempt's chunks come as the model makes them (its step runs in a task of
    its own, at the number reserved for it); elsewhere they arrive together, when it completes. A
    tool call is the step `adk.tool:<tool>`, after a start mark `adk.tool.start:<tool>`: a
    completed call's result is never made again; a call cut mid-body (its mark recorded, its
    result not) runs again only if the tool is idempotent, else it raises `ToolInterruptedError`
    (docs/recovery.md's rule). A tool that is not `checkpointed` (an agent tool, a transfer) runs
    again on recovery.
    """

    def __init__(self, store: ReplayStore) -> None:
        self.store = store

    async def generate(
        self, model: Model, request: LlmRequest, limit: float | None
    ) -> AsyncIterator[LlmResponse]:
        from dbos import DBOS

        name = f"adk.model:{model.name}"
        if not (request.stream and DBOS.workflow_id is not None and DBOS.step_id is None):
            chunks: list[LlmResponse] = await step(name, _attempt, model, request, limit)
            for chunk in chunks:
                yield chunk
            return
        live: asyncio.Queue[LlmResponse] = asyncio.Queue()
        reservation, name = await reserved(name)
        running = asyncio.ensure_future(
            reservation.run_async(step_options(name), _attempt, model, request, limit, live)
        )
        async for chunk in live_chunks(running, live):
            yield chunk

    async def run_tool(self, tool: BaseTool, args: dict[str, Any], ctx: ToolContext) -> Any:
        if not tool.checkpointed:
            return await tool_bounded(tool.run(args, ctx), tool.name, tool.timeout)
        nonce = new_id()
        started = await step(f"adk.tool.start:{tool.name}", _same, nonce)
        cut = started != nonce  # recorded by an earlier execution that never recorded the result

        async def body() -> _Done | _Interrupted:
            if cut and not tool.idempotent:
                return _Interrupted()
            invocation = ctx.invocation
            escalated, ended = invocation.escalated, invocation.ended
            value = await tool_bounded(tool.run(args, ctx), tool.name, tool.timeout)
            return _Done(value, invocation.escalated and not escalated, invocation.ended and not ended)

        outcome = await step(f"adk.tool:{tool.name}", body)
        if isinstance(outcome, _Interrupted):
            raise ToolInterruptedError(
                f"the call to tool {tool.name!r} was interrupted (its worker stopped) before its result"
                " was recorded; its effect is unknown: it may or may not have happened"
            )
        if outcome.escalated:  # a recorded call's effects on the run, made again (state comes with its event)
            ctx.escalate()
        if outcome.ended:
            ctx.end_invocation()
        return outcome.value

    async def handing(self, event: Event) -> None:
        await self.store.handing(event)


async def _attempt(
    model: Model, request: LlmRequest, limit: float | None, live: asyncio.Queue[LlmResponse] | None = None
) -> list[LlmResponse]:
    """One attempt's chunks, each within `limit` seconds (its error is the step's, recorded too),
    each also put in `live` as it comes, if given."""
    stream = model.generate(request)
    chunks: list[LlmResponse] = []
    try:
        async for chunk in chunks_within(stream, model.name, limit):
            chunks.append(chunk)
            if live is not None:
                live.put_nowait(chunk)
        return chunks
    finally:
        await close_stream(stream)


async def _same(nonce: str) -> str:
    return nonce


def make_durable(agent: BaseAgent) -> BaseAgent:
    """Record, in place, the answers of the deciding hooks of every agent in `agent`'s tree (an
    agent tool's agent included): hooks.py. Its models and tools need nothing: `DurableSteps`
    makes their calls steps. Doing it twice does nothing more."""
    agent.callbacks = durable_callbacks(agent.callbacks)
    for tool in getattr(agent, "tools", {}).values():
        if isinstance(tool, AgentTool):
            make_durable(tool.agent)
    for child in agent.sub_agents:
        make_durable(child)
    return agent
