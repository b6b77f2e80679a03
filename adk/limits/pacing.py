"""`RateLimit`: model calls paced to requests and tokens per minute, shared by every run that uses it.

A call reserves its request at once and waits (asynchronously, through adk.recovery's `sleep`, so
the testing switch skips and records the waits) until it falls within the rate; tokens are
charged when the response reports them, and a call waits while the tokens of the last minute are
over their rate. A server's 429 with Retry-After holds every call back until then, not only the
run that got it. The state lives on the instance: give one instance to every runner (or agent)
that shares the provider's limits.
"""

from __future__ import annotations

from collections.abc import Callable

from adk.callbacks.decisions import Paced
from adk.callbacks.registry import decided_by
from adk.callbacks.results import Cont, Raise
from adk.context import ModelContext
from adk.errors import RateLimitError
from adk.events import LlmResponse
from adk.recovery.attempts import judging, now, sleep

__all__ = ["RateLimit"]


def _above_zero(value: object, argument: str) -> float:
    """`value`, checked where the `RateLimit` is made: a number above 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"RateLimit: {argument} must be a number above 0, got {value!r}")
    return float(value)


def _rate(value: object, argument: str) -> float | None:
    return None if value is None else _above_zero(value, argument)


class RateLimit:
    """Pace model calls to `requests_per_minute` and `tokens_per_minute`, waiting at most `max_wait`.

    A call that would wait longer than `max_wait` seconds is not made: `before_model` raises a
    `RateLimitError` (the run's error names this callback). Each wait is recorded on the call's
    response as a `Paced` decision. Register it first, so that later callbacks see paced calls.
    """

    def __init__(
        self,
        *,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        max_wait: float = 60.0,
        clock: Callable[[], float] = now,
    ) -> None:
        self.requests_per_minute = _rate(requests_per_minute, "requests_per_minute")
        self.tokens_per_minute = _rate(tokens_per_minute, "tokens_per_minute")
        self.max_wait = _above_zero(max_wait, "max_wait")
        self._clock = clock
        """The retry clock by default: the waits the testing switch skips count as slept."""
        self._next_request = 0.0
        """When (on the retry clock) the next request may go: each reservation moves it on."""
        self._tokens = 0.0
        """Tokens charged and not yet replenished (a leaky bucket that drains at the rate)."""
        self._tokens_at = 0.0
        self._held_until = 0.0
        """A server's Retry-After, for every call."""

    def wait(self) -> float:
        """How long a call made now would wait; it reserves nothing."""
        return self._wait(self._clock())[0]

    def _wait(self, at: float) -> tuple[float, float]:
        """The wait before a call made at `at`, and when its request would go."""
        start = max(at, self._held_until)
        if self.requests_per_minute is not None:
            start = max(start, self._next_request)
        tokens = self.tokens_per_minute
        if tokens is not None:
            over = self._drained(at, tokens) - tokens
            if over > 0:
                start = max(start, at + over * 60.0 / tokens)
        return start - at, start

    def _drained(self, at: float, rate: float) -> float:
        """The tokens still counted at `at`: what was charged, drained at `rate` a minute since."""
        left = max(0.0, self._tokens - (at - self._tokens_at) * rate / 60.0)
        self._tokens, self._tokens_at = left, at
        return left

    async def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        at = self._clock()
        wait, start = self._wait(at)
        if wait > self.max_wait:
            raise RateLimitError(
                f"no capacity for model {ctx.model.name!r} within max_wait={self.max_wait:g} s"
                f" (the next in {wait:.2f} s)",
                retry_after=wait,
            )
        if self.requests_per_minute is not None:  # reserved now: concurrent calls queue behind it
            self._next_request = start + 60.0 / self.requests_per_minute
        if wait > 0:
            attempts = judging.get()
            if attempts is not None:
                attempts.decided(Paced(decided_by(self, "before_model"), f"model:{ctx.model.name}", wait))
            await sleep(wait)
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        usage, rate = response.usage, self.tokens_per_minute
        if rate is not None and usage is not None:
            self._tokens = self._drained(self._clock(), rate) + usage.total_tokens
        return response

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        """A 429's Retry-After holds every call back; the error goes on to the other callbacks."""
        retry_after = getattr(error, "retry_after", None)
        if isinstance(error, RateLimitError) and isinstance(retry_after, int | float) and retry_after > 0:
            self._held_until = max(self._held_until, self._clock() + float(retry_after))
        return Raise(error)
