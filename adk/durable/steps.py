"""Model attempts and tool calls as DBOS steps: wrappers around an agent's `Model` and tools.

The core stays untouched: `model.generate(request)` and `tool.run(args, ctx)` are what the step
driver calls, so wrapping them makes each model attempt and each tool call a checkpointed step,
while the `before_*` / `after_*` hooks around them stay outside the step (docs/durable.md).
Outside a DBOS workflow a step simply runs, so a wrapped agent also runs under a plain `Runner`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from adk.agents.base import BaseAgent
from adk.agents.llm import LlmAgent
from adk.agents.tool import AgentTool
from adk.agents.transfer import TransferTool
from adk.context import ToolContext
from adk.durable.checkpoint import step, step_options
from adk.durable.hooks import durable_callbacks
from adk.durable.partials import live_chunks
from adk.errors import ToolInterruptedError
from adk.events import LlmResponse, ToolDeclaration, new_id
from adk.models.base import LlmRequest, Model
from adk.tools import BaseTool

__all__ = ["DurableModel", "DurableTool", "ToolInterruptedError", "make_durable"]


@dataclass(frozen=True, slots=True)
class _Done:
    """A tool call's checkpoint: its value, and whether it escalated or ended the invocation."""

    value: Any
    escalated: bool
    ended: bool


@dataclass(frozen=True, slots=True)
class _Interrupted:
    """The checkpointed outcome of a cut call that is not run again (it pickles, unlike a closure)."""


class DurableModel:
    """A `Model` whose every `generate` call (one attempt) is a DBOS step.

    The step collects the attempt's chunks and checkpoints them; on recovery the recorded chunks
    (or the recorded error) come back and the model is not called again. In a workflow, a
    streamed attempt's chunks come as the model makes them (its step runs in a task of its own,
    at a step id reserved in order); elsewhere they arrive together, when the attempt completes.
    """

    def __init__(self, model: Model) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return self.model.name

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        from dbos import DBOS

        name = f"adk.model:{self.model.name}"
        if not (request.stream and DBOS.workflow_id is not None):
            chunks: list[LlmResponse] = await step(name, self._attempt, request)
            for chunk in chunks:
                yield chunk
            return
        live: asyncio.Queue[LlmResponse] = asyncio.Queue()
        reserved = DBOS.reserve_step()
        running = asyncio.ensure_future(reserved.run_async(step_options(name), self._attempt, request, live))
        async for chunk in live_chunks(running, live):
            yield chunk

    async def _attempt(
        self, request: LlmRequest, live: asyncio.Queue[LlmResponse] | None = None
    ) -> list[LlmResponse]:
        chunks = []
        async for chunk in self.model.generate(request):
            chunks.append(chunk)
            if live is not None:
                live.put_nowait(chunk)
        return chunks


class DurableTool(BaseTool):
    """A tool whose every call is a DBOS step (after a `started` mark, itself a step).

    A completed call's result is checkpointed and never run again. A call cut mid-body (its mark
    recorded, its result not) runs again only if the tool is idempotent; else it raises
    `ToolInterruptedError`, which the model sees as the call's error (docs/recovery.md's rule).
    """

    def __init__(self, tool: BaseTool) -> None:
        self.tool = tool
        self.name = tool.name
        self.description = tool.description
        self.idempotent = tool.idempotent
        self.max_retries = tool.max_retries
        self.requires_approval = tool.requires_approval

    @property
    def declaration(self) -> ToolDeclaration:
        return self.tool.declaration

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.tool.validate(args)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        nonce = new_id()
        started = await step(f"adk.tool.start:{self.name}", _same, nonce)
        cut = started != nonce  # recorded by an earlier execution that never recorded the result

        async def body() -> _Done | _Interrupted:
            if cut and not self.idempotent:
                return _Interrupted()
            invocation = ctx.invocation
            escalated, ended = invocation.escalated, invocation.ended
            value = await self.tool.run(args, ctx)
            return _Done(value, invocation.escalated and not escalated, invocation.ended and not ended)

        outcome = await step(f"adk.tool:{self.name}", body)
        if isinstance(outcome, _Interrupted):
            raise ToolInterruptedError(
                f"the call to tool {self.name!r} was interrupted (its worker stopped) before its result"
                " was recorded; its effect is unknown: it may or may not have happened"
            )
        if outcome.escalated:  # a recorded call's effects on the run, made again (state comes with its event)
            ctx.escalate()
        if outcome.ended:
            ctx.end_invocation()
        return outcome.value


async def _same(nonce: str) -> str:
    return nonce


def make_durable(agent: BaseAgent) -> BaseAgent:
    """Wrap, in place, the model and tools of every `LlmAgent` in `agent`'s tree (an agent
    tool's agent included), and every agent's callbacks (their answers recorded: hooks.py);
    transfers and agent tools stay as they are: they change the run's context, which a
    checkpoint does not hold. Wrapping twice does nothing more."""
    agent.callbacks = durable_callbacks(agent.callbacks)
    if isinstance(agent, LlmAgent):
        if not isinstance(agent.model, DurableModel):
            agent.model = DurableModel(agent.model)
        for name, tool in list(agent.tools.items()):
            if isinstance(tool, AgentTool):
                make_durable(tool.agent)
            elif not isinstance(tool, DurableTool | TransferTool):
                agent.tools[name] = DurableTool(tool)
    for child in agent.sub_agents:
        make_durable(child)
    return agent
