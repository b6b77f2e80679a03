"""Microseconds per hook call of the chain helpers, beside a hand-written loop doing the same work.

The hand-written loop is the floor (docs/runtime.md): call the hook, check that the result is a
`Cont` of a context of the type given (for `run_after`: that the output is an `LlmResponse`, as
`after_model` must return), thread the value on; the async variant awaits each hook. Both are
awaited once per chain run, in the same event loop, so the fixed cost of a coroutine call is in
both. Rows marked `list` pass the plain list of instances, as the README's Elixir-style call does:
resolved on every call, from what was learnt of their class the first time. Run from the project
root: `python -m benchmarks.chain`."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from adk.callbacks import Callbacks, Cont, run_after, run_before
from adk.events import LlmResponse

SIZES = (1, 3, 10)
HOOK_CALLS = 200_000
"""Hook calls timed per row, for adk and for the floor; chains of n callbacks run HOOK_CALLS // n times."""
TRIALS = 100


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
    kind = type(ctx)
    for fn in fns:
        result = fn(ctx)
        if type(result) is not Cont or type(result.ctx) is not kind:
            return result
        ctx = result.ctx
    return Cont(ctx)


async def floor_before_async(fns: tuple[Callable[[Any], Any], ...], ctx: object) -> object:
    kind = type(ctx)
    for fn in fns:
        result = await fn(ctx)
        if type(result) is not Cont or type(result.ctx) is not kind:
            return result
        ctx = result.ctx
    return Cont(ctx)


async def floor_after_sync(fns: tuple[Callable[[Any, Any], Any], ...], value: object, ctx: object) -> object:
    for fn in fns:
        value = fn(value, ctx)
        if type(value) is not LlmResponse:
            raise TypeError(value)
    return value


async def floor_after_async(fns: tuple[Callable[[Any, Any], Any], ...], value: object, ctx: object) -> object:
    for fn in fns:
        value = await fn(value, ctx)
        if type(value) is not LlmResponse:
            raise TypeError(value)
    return value


def best_of(
    adk_call: Callable[[], Coroutine[Any, Any, object]],
    floor_call: Callable[[], Coroutine[Any, Any, object]],
    runs: int,
) -> tuple[float, float]:
    """Seconds for `runs` awaits of each, the best of TRIALS short timings taken in turn.

    Short timings interleaved, and the best of each kept: on a busy machine some of them run
    undisturbed, and a slow spell slows both alike.
    """
    per_trial = max(1, runs // TRIALS)

    async def timed(make: Callable[[], Coroutine[Any, Any, object]]) -> float:
        start = time.perf_counter()
        for _ in range(per_trial):
            await make()
        return time.perf_counter() - start

    async def trials() -> tuple[float, float]:
        adk = floor = float("inf")
        for _ in range(TRIALS):
            adk = min(adk, await timed(adk_call))
            floor = min(floor, await timed(floor_call))
        return adk, floor

    adk, floor = asyncio.run(trials())
    return adk / per_trial * runs, floor / per_trial * runs


def main() -> None:
    ctx = object()
    response = LlmResponse.text("hi")  # what after_model must return: the chain checks it
    print(f"{'helper':<13}{'hooks':<7}{'chain':>6}{'adk µs/hook':>13}{'floor µs/hook':>15}{'ratio':>8}")
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
                    partial(run_after, callbacks, "after_model", response, ctx),
                    partial(floor_after, afters, response, ctx),
                ),
                (
                    "before list",
                    partial(run_before, instances, "before_model", ctx),
                    partial(floor_before, befores, ctx),
                ),
                (
                    "after list",
                    partial(run_after, instances, "after_model", response, ctx),
                    partial(floor_after, afters, response, ctx),
                ),
            )
            runs = HOOK_CALLS // n
            for name, adk_call, floor_call in rows:
                adk_s, floor_s = best_of(adk_call, floor_call, runs)
                adk_us, floor_us = adk_s / (runs * n) * 1e6, floor_s / (runs * n) * 1e6
                ratios.append(adk_us / floor_us)
                print(f"{name:<13}{kind:<7}{n:>6}{adk_us:>13.3f}{floor_us:>15.3f}{adk_us / floor_us:>7.2f}x")
    print(f"worst ratio {max(ratios):.2f}x, median {statistics.median(ratios):.2f}x (target: at most 1.5x)")


if __name__ == "__main__":
    main()
