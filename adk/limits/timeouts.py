"""Nothing hangs: the checks and the bounds behind `timeout=` on tools, model attempts and runs.

Imports only `adk.errors`, so that every floor (tools, recovery, agents, runner) may use it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import TypeVar

from adk.errors import ModelTimeoutError, RunTimeout, ToolTimeoutError, locate

__all__ = ["deadline", "model_bounded", "positive", "run_bounded", "tool_bounded", "within"]

T = TypeVar("T")


def positive(value: object, argument: str) -> float | None:
    """`value`, checked where the object is made: None (no limit) or a finite number above 0
    (infinity is no limit: None says that)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"{argument} must be a number of seconds above 0, got {value!r}")
    return float(value)


async def within(step: Awaitable[T], bound: asyncio.Timeout, expired: Callable[[], Exception]) -> T:
    """`step`, cancelled when `bound` expires: then the error `expired` makes. A `TimeoutError`
    the step raised itself goes on as it was."""
    try:
        async with bound:
            return await step
    except TimeoutError:
        if bound.expired():
            raise expired() from None
        raise


def tool_bounded(call: Awaitable[T], tool: str, limit: float | None) -> Awaitable[T]:
    """`call` (a tool's body), cancelled after `limit` seconds, if given: then a `ToolTimeoutError`."""
    if limit is None:
        return call
    return within(call, asyncio.timeout(limit), lambda: ToolTimeoutError(tool, limit))


def model_bounded(attempt: Awaitable[T], model: str, limit: float) -> Awaitable[T]:
    """A model attempt (or the wait for a stream's next chunk), cancelled after `limit` seconds:
    then a `ModelTimeoutError`, transient."""
    why = f"model {model!r} did not answer within the attempt timeout of {limit:g} s"
    return within(attempt, asyncio.timeout(limit), lambda: ModelTimeoutError(why))


def run_bounded(step: Awaitable[T], deadline: float, limit: float) -> Awaitable[T]:
    """`step` of a run, cancelled at `deadline` (the loop's clock): then a `RunTimeout` (where "run")."""
    return within(step, asyncio.timeout_at(deadline), lambda: locate(RunTimeout(limit), "run"))


def deadline(timeout: float) -> tuple[float, float]:
    """The loop-clock time a run started now with `timeout` must end by, and the timeout."""
    return (asyncio.get_running_loop().time() + timeout, timeout)
