"""`RateLimit`: model calls paced to requests and tokens per minute, shared by every run that uses it.

A call reserves its request at once and waits (asynchronously, through adk.recovery's `sleep`, so
the testing switch skips and records the waits) until it falls within the rate; tokens are
charged when the response reports them, and a call waits while the tokens of the last minute are
over their rate. A server's 429 with Retry-After holds every call back until then, not only the
run that got it. The state lives on the instance: give one instance to every runner (or agent)
that shares the provider's limits; given `store=`, it lives in the store, shared by every worker
process that uses it (changed in one atomic read-modify-write per call).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar, TypeVar

from adk.callbacks.decisions import Paced
from adk.callbacks.registry import decided_by
from adk.callbacks.results import Cont, Raise
from adk.context import ModelContext
from adk.errors import RateLimitError
from adk.events import LlmResponse
from adk.recovery.attempts import judging, now, sleep, wall_now
from adk.sessions.budgets import SharedLimits

__all__ = ["RateLimit"]

R = TypeVar("R")


def _above_zero(value: object, argument: str) -> float:
    """`value`, checked where the `RateLimit` is made: a finite number above 0 (an infinite
    `max_wait` would wait out any Retry-After)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"RateLimit: {argument} must be a number above 0, got {value!r}")
    return float(value)


def _rate(value: object, argument: str) -> float | None:
    return None if value is None else _above_zero(value, argument)


class RateLimit:
    """Pace model calls to `requests_per_minute` and `tokens_per_minute`, waiting at most `max_wait`.

    A call that would wait longer than `max_wait` seconds is not made: `before_model` raises a
    `RateLimitError` (the run's error names this callback). A server's Retry-After holds calls
    back for at most `max_retry_after` seconds (as `RetryPolicy` caps it): one answer of a
    misbehaving server or proxy cannot stop every worker for a day. Each wait is recorded on the
    call's response as a `Paced` decision. Register it first, so that later callbacks see paced calls.
    With `store=`, the pace is shared by every worker process using that store (under `name`),
    and the clock is the wall clock (`adk.recovery.attempts.wall_now`) unless `clock=` is given.
    """

    adds_decisions: ClassVar[bool] = True
    """Its hooks add decisions to the call's `Attempts` (`judging`): the envelope sets it for them."""

    def __init__(
        self,
        *,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        max_wait: float = 60.0,
        max_retry_after: float = 120.0,
        clock: Callable[[], float] | None = None,
        store: SharedLimits | None = None,
        name: str = "rate",
    ) -> None:
        self.requests_per_minute = _rate(requests_per_minute, "requests_per_minute")
        self.tokens_per_minute = _rate(tokens_per_minute, "tokens_per_minute")
        self.max_wait = _above_zero(max_wait, "max_wait")
        self.max_retry_after = _above_zero(max_retry_after, "max_retry_after")
        if store is not None and not isinstance(store, SharedLimits):
            raise ValueError(
                "RateLimit: store must be a session store that keeps shared limits "
                f"(InMemorySessionService, SqliteSessionService, PostgresSessionService), got {store!r}"
            )
        self.store = store
        self._key = f"adk:pace:{name}"
        self._clock = clock or (now if store is None else wall_now)
        """The retry clock by default: the waits the testing switch skips count as slept."""
        self._state: dict[str, float] = {}
        """Without a store, the pace: `next` (when the next request may go: each reservation
        moves it on), `tokens` and `tokens_at` (tokens charged and not yet replenished, a leaky
        bucket that drains at the rate), `held` (a server's Retry-After, for every call)."""

    async def _change(self, change: Callable[[dict[str, float]], R]) -> R:
        """Apply `change` to the pace: this instance's, or the store's, atomically."""
        if self.store is None:
            return change(self._state)
        return await self.store.update_shared(self._key, change)

    def wait(self) -> float:
        """How long a call made now would wait (without a store); it reserves nothing."""
        return self._wait(dict(self._state), self._clock())[0]

    def _wait(self, state: dict[str, float], at: float) -> tuple[float, float]:
        """The wait before a call made at `at`, and when its request would go."""
        start = max(at, state.get("held", 0.0))
        if self.requests_per_minute is not None:
            start = max(start, state.get("next", 0.0))
        tokens = self.tokens_per_minute
        if tokens is not None:
            over = _drained(state, at, tokens) - tokens
            if over > 0:
                start = max(start, at + over * 60.0 / tokens)
        return start - at, start

    def _reserve(self, state: dict[str, float]) -> float:
        """Take the next request's place, unless it would wait past `max_wait`: its wait."""
        wait, start = self._wait(state, self._clock())
        if wait <= self.max_wait and self.requests_per_minute is not None:
            state["next"] = start + 60.0 / self.requests_per_minute  # concurrent calls queue behind it
        return wait

    async def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        wait = await self._change(self._reserve)
        if wait > self.max_wait:
            raise RateLimitError(
                f"no capacity for model {ctx.model.name!r} within max_wait={self.max_wait:g} s"
                f" (the next in {wait:.2f} s)",
                retry_after=wait,
            )
        if wait > 0:
            attempts = judging.get()
            if attempts is not None:
                attempts.decided(Paced(decided_by(self, "before_model"), f"model:{ctx.model.name}", wait))
            await sleep(wait)
        return Cont(ctx)

    async def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        usage, rate = response.usage, self.tokens_per_minute
        if rate is not None and usage is not None:
            at, spent = self._clock(), usage.total_tokens

            def charge(state: dict[str, float]) -> None:
                state["tokens"] = _drained(state, at, rate) + spent

            await self._change(charge)
        return response

    async def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        """A 429's Retry-After holds every call back; the error goes on to the other callbacks."""
        retry_after = getattr(error, "retry_after", None)
        if isinstance(error, RateLimitError) and isinstance(retry_after, int | float) and retry_after > 0:
            until = self._clock() + min(float(retry_after), self.max_retry_after)

            def hold(state: dict[str, float]) -> None:
                state["held"] = max(state.get("held", 0.0), until)

            await self._change(hold)
        return Raise(error)


def _drained(state: dict[str, float], at: float, rate: float) -> float:
    """The tokens still counted at `at`: what was charged, drained at `rate` a minute since."""
    left = max(0.0, state.get("tokens", 0.0) - (at - state.get("tokens_at", at)) * rate / 60.0)
    state["tokens"], state["tokens_at"] = left, at
    return left
