"""Type-checked only (mypy --strict), never run: what `@tool` and `FunctionTool` preserve."""

from collections.abc import Callable, Coroutine
from typing import Any, assert_type

from adk.context import ToolContext
from adk.tools import BaseTool, FunctionTool, tool


@tool
def get_weather(city: str, days: int = 1) -> str:
    """Get the weather."""
    return city


@tool(idempotent=True, max_retries=3)
async def lookup(key: str, ctx: ToolContext) -> int:
    return len(key)


def plain(a: int) -> float:
    return a / 2


weather_tool: FunctionTool[[str, int], str] = get_weather
lookup_tool: FunctionTool[[str, ToolContext], Coroutine[Any, Any, int]] = lookup
half: FunctionTool[[int], float] = FunctionTool(plain, name="half")
weather_fn: Callable[[str, int], str] = get_weather.fn
assert_type(get_weather("Paris"), str)
assert_type(get_weather(city="Paris", days=2), str)
assert_type(FunctionTool(plain)(1), float)

tools: list[BaseTool] = [get_weather, lookup, FunctionTool(plain)]

get_weather(3)  # type: ignore[arg-type]
get_weather("Paris", days="3")  # type: ignore[arg-type]
get_weather("Paris", when="now")  # type: ignore[call-arg]
wrong: FunctionTool[[int], str] = get_weather  # type: ignore[assignment]
tool(name=3)  # type: ignore[call-overload]
FunctionTool(plain, idempotent="yes")  # type: ignore[arg-type]
