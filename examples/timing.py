"""Timing tool calls with invocation state, keyed by tool call id.

The tool calls of one model response run concurrently, so a single "started at" slot would be
overwritten by the next call: each call keeps its start under its own tool call id.
Run it: python examples/timing.py, or adk run examples/timing.py -m "Weather?"
"""

import asyncio
import time
from typing import Any

from adk import Cont, LlmAgent, LlmResponse, Runner, ToolContext
from adk.events import ToolCall
from adk.testing import ScriptedModel

PAUSE = {"paris": 0.2, "tokyo": 0.1}  # seconds each lookup takes


async def weather(city: str) -> str:
    """The weather in a city."""
    await asyncio.sleep(PAUSE[city])
    return f"sunny in {city}"


class Timing:
    """Measures each tool call; the start time lives in invocation state under the call's id."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        ctx.invocation.set_state(f"started:{ctx.tool_call_id}", time.perf_counter())
        self.log.append(f"start {ctx.tool_call_id}")
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        started = ctx.invocation.get_state(f"started:{ctx.tool_call_id}")
        ctx.invocation.delete_state(f"started:{ctx.tool_call_id}")
        elapsed = time.perf_counter() - started
        self.log.append(f"end {ctx.tool_call_id}")
        print(f"{ctx.tool.name}({ctx.args['city']}) [{ctx.tool_call_id}] took {elapsed * 1000:.0f} ms")
        return result


def forecaster(timing: Timing) -> Runner:
    """A runner whose every tool call `timing` measures, around an agent asking for two at once."""
    calls = LlmResponse.calls(
        ToolCall.of("weather", '{"city": "paris"}', id="call_paris"),
        ToolCall.of("weather", '{"city": "tokyo"}', id="call_tokyo"),
    )
    agent = LlmAgent("forecaster", model=ScriptedModel([calls, "Sunny everywhere."]), tools=[weather])
    return Runner(agent, callbacks=[timing])


runner = forecaster(Timing())  # what `adk run` and `adk web` open


async def main() -> Timing:
    timing = Timing()
    async for event in forecaster(timing).run("user", "session", "Weather in Paris and Tokyo?"):
        if event.object == "chat.completion" and event.author != "user" and event.content:
            print(f"{event.author}: {event.content}")
    return timing


if __name__ == "__main__":
    asyncio.run(main())
