"""MCP tool calls held open while their runs wait for a person's reply to the server's question.

With `McpToolset(elicitation=True)`, a server's `elicitation/create` during a call pauses the run:
the call's `run` returns the question (`adk.approvals.Ask`, which the run shows as an approval
request) while the MCP request stays open, awaiting the reply. `runner.run(approvals={id:
Reply(values)})` resumes the run; the call's `before_tool` chain runs again, and the tool gives the
reply to the open request, then waits on for the call's result (or the server's next question).

The open calls are the toolset's (its connection's), by the call's `idempotency_key` (user,
session, invocation, call id): only the run that paused can pick its call up, and only in this
process, while the connection lives (docs/decisions.md). `close()` ends them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from adk.approvals import Ask
from adk.context import ToolContext
from adk.errors import McpToolError
from adk.mcp_content import McpResult
from adk.mcp_requests import InCall, Requests

__all__ = ["Held"]


class Held:
    """The calls of one toolset held open while their runs wait for a person's reply."""

    def __init__(self, server: str, requests: Requests) -> None:
        self.server = server
        self.requests = requests
        self._calls: dict[str, tuple[InCall, asyncio.Task[McpResult]]] = {}

    async def call(
        self, ctx: ToolContext, start: Callable[[InCall], Coroutine[Any, Any, McpResult]]
    ) -> McpResult | Ask:
        """The result of the call of `ctx` (started by `start`), or the question it now waits on;
        a call resuming with the person's reply (`ctx.reply`) picks up the one held for it."""
        reply = ctx.reply
        if reply is None:
            call = self.requests.enter(ctx)
            task = asyncio.get_running_loop().create_task(start(call))
        else:
            held = self._calls.pop(ctx.idempotency_key, None)
            if held is None:
                raise McpToolError(
                    f"MCP server {self.server!r}: call {ctx.tool_call_id!r} has no question open to reply to:"
                    " it was held open by the process that asked, which has ended or closed the connection;"
                    " whether the call took effect is unknown"
                )
            call, task = held
            call.moved(ctx)
            call.answer(reply)
        return await self._until_asked(call, task, ctx.idempotency_key)

    async def _until_asked(self, call: InCall, task: asyncio.Task[McpResult], key: str) -> McpResult | Ask:
        try:
            await asyncio.wait((task, call.asked), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the call was cut short (a timeout, the run ended): so is the request
            await _ended(task)
            self.requests.leave(call)
            raise
        if not task.done():
            self._calls[key] = (call, task)
            # ended while held (the server gave up waiting, or the connection closed): no more a
            # call of the connection's, whose requests would be refused as another's
            task.add_done_callback(lambda _: self.requests.leave(call))
            return call.asked.result()
        self.requests.leave(call)
        return task.result()

    async def close(self) -> None:
        """End every held call (the connection is closing)."""
        calls, self._calls = self._calls, {}
        for call, task in calls.values():
            await _ended(task)
            self.requests.leave(call)


async def _ended(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
