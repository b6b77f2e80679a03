"""MCP tools: an agent using the tools of an MCP server, governed by its callbacks like any tool.

`McpToolset.stdio(...)` starts examples/travel_mcp_server.py on first use and lists its tools;
the model calls them like local tools. A `before_tool` callback defers bookings for a person's
approval (`Defer`), so the MCP tool `book` runs only once approved; `async with` closes the
connection and stops the server. Run it: python examples/mcp_agent.py, or
adk run examples/mcp_agent.py -m "Weather in Paris?" (needs `adk-callbacks[mcp]`)
"""

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from adk import (
    Approve,
    Cont,
    Defer,
    Event,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    ObjectType,
    Runner,
    ToolContext,
)
from adk.callbacks import Deferred
from adk.events import ToolCall
from adk.mcp import McpToolset
from adk.testing import ScriptedModel

SERVER = Path(__file__).with_name("travel_mcp_server.py")


class BookingsNeedApproval:
    """A booking (an MCP tool like any other) waits for a person; forecasts run at once."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Defer:
        return Defer("bookings need a person's approval") if ctx.tool.name == "book" else Cont(ctx)


def ask(tool: str, city: str) -> LlmResponse:
    return LlmResponse.calls(ToolCall.of(tool, f'{{"city": "{city}"}}', id=f"call-{tool}"))


def report(request: LlmRequest) -> str:
    return f"Travel server said: {request.messages[-1].content}"


def planner() -> LlmAgent:
    """The agent; its MCP server starts when it first lists its tools, and stops when the runner closes."""
    model = ScriptedModel([ask("forecast", "Paris"), report, ask("book", "Paris"), report])
    travel = McpToolset.stdio(sys.executable, str(SERVER), name="travel")
    return LlmAgent("planner", model=model, tools=[travel], callbacks=[BookingsNeedApproval()])


agent = planner()  # what `adk run` and `adk web` open


async def main() -> list[str]:
    said: list[str] = []

    async def show(events: AsyncIterator[Event]) -> None:
        async for event in events:
            for decision in event.decisions:
                if isinstance(decision, Deferred):
                    said.append(f"waits: {decision.call_id} {decision.arguments} ({decision.reason})")
            if event.author == "planner" and event.object == ObjectType.CHAT_COMPLETION and event.content:
                said.append(f"assistant: {event.content}")

    async with Runner(planner()) as runner:
        await show(runner.run("u", "s", "What's the weather in Paris tomorrow?"))
        await show(runner.run("u", "s", "Book me a trip there."))
        await show(runner.run("u", "s", approvals={"call-book": Approve()}))
    for line in said:
        print(line)
    return said


if __name__ == "__main__":
    asyncio.run(main())
