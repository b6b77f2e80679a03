"""Microseconds per hook call of the chain helpers, beside a hand-written loop doing the same work.

The hand-written loop is the floor (DESIGN §7): call the hook, check that the result is a `Cont`
(for `run_after`: take the output), thread the value on; the async variant awaits each hook.
Both are awaited once per chain run, in the same event loop, so the fixed cost of a coroutine
call is in both. Run from the project root: `python -m benchmarks.chain`.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from adk.callbacks import Callbacks, Cont, run_after, run_before

SIZES = (1, 3, 10)
HOOK_CALLS = 200_000
"""Hook calls per timing; chains of n callbacks run HOOK_CALLS // n times."""
REPEATS = 7


class SyncNoop:
    def before_model(self, ctx: object) -> Cont[object]:
        return Cont(ctx)

    def after_model(self, response: object, ctx: object) -> object:
        return response


class AsyncNoop:
    async def before_model(self, ctx: object) -> Cont[object]:
        return Cont(ctx)

    async def after_model(self, response: object, ctx: object) -> object:
        return response


async def floor_before_sync(fns: tuple[Callable[[Any], Any], ...], ctx: object) -> object:
    for fn in fns:
        result = fn(ctx)
        if type(result) is not Cont:
            return result
        ctx = result.ctx
    return Cont(ctx)


async def floor_before_async(fns: tuple[Callable[[Any], Any], ...], ctx: object) -> object:
    for fn in fns:
        result = await fn(ctx)
        if type(result) is not Cont:
            return result
        ctx = result.ctx
    return Cont(ctx)


async def floor_after_sync(fns: tuple[Callable[[Any, Any], Any], ...], value: object, ctx: object) -> object:
    for fn in fns:
        value = fn(value, ctx)
    return value


async def floor_after_async(fns: tuple[Callable[[Any, Any], Any], ...], value: object, ctx: object) -> object:
    for fn in fns:
        value = await fn(value, ctx)
    return value


def seconds(make: Callable[[], Coroutine[Any, Any, object]], runs: int) -> float:
    """Seconds for `runs` awaits of `make()`, all inside one event loop."""

    async def loop() -> float:
        start = time.perf_counter()
        for _ in range(runs):
            await make()
        return time.perf_counter() - start

    return asyncio.run(loop())


def best_of(
    adk_call: Callable[[], Coroutine[Any, Any, object]],
    floor_call: Callable[[], Coroutine[Any, Any, object]],
    runs: int,
) -> tuple[float, float]:
    """Best of REPEATS for each, the two timed in turn so that a busy machine slows both alike."""
    adk, floor = [], []
    for _ in range(REPEATS):
        adk.append(seconds(adk_call, runs))
        floor.append(seconds(floor_call, runs))
    return min(adk), min(floor)


def main() -> None:
    ctx = object()
    print(f"{'helper':<11}{'hooks':<7}{'chain':>6}{'adk µs/hook':>13}{'floor µs/hook':>15}{'ratio':>8}")
    ratios: list[float] = []
    for kind, cls in (("sync", SyncNoop), ("async", AsyncNoop)):
        for n in SIZES:
            instances = [cls() for _ in range(n)]
            callbacks = Callbacks.of(instances)
            befores = tuple(o.before_model for o in instances)
            afters = tuple(o.after_model for o in instances)
            floor_before = floor_before_sync if kind == "sync" else floor_before_async
            floor_after = floor_after_sync if kind == "sync" else floor_after_async
            rows = (
                (
                    "run_before",
                    partial(run_before, callbacks, "before_model", ctx),
                    partial(floor_before, befores, ctx),
                ),
                (
                    "run_after",
                    partial(run_after, callbacks, "after_model", ctx, ctx),
                    partial(floor_after, afters, ctx, ctx),
                ),
            )
            runs = HOOK_CALLS // n
            for name, adk_call, floor_call in rows:
                adk_s, floor_s = best_of(adk_call, floor_call, runs)
                adk_us, floor_us = adk_s / (runs * n) * 1e6, floor_s / (runs * n) * 1e6
                ratios.append(adk_us / floor_us)
                print(f"{name:<11}{kind:<7}{n:>6}{adk_us:>13.3f}{floor_us:>15.3f}{adk_us / floor_us:>7.2f}x")
    print(f"worst ratio {max(ratios):.2f}x, median {statistics.median(ratios):.2f}x (target: at most 1.5x)")


if __name__ == "__main__":
    main()
