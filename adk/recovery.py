"""Retries and fallbacks: tenacity policies, and the ready-made recovery callbacks.

A model call or a tool call is one envelope: `before_*` once, attempts inside, `after_*` once on
the final outcome. When an attempt fails, the `on_*_error` chain decides; a `Retry` is honoured
only while the agent's `RetryPolicy` lets another attempt start (its tenacity `stop`), after its
`wait`, the `Retry.delay` or the server's Retry-After. The policy is also a callback, standing at
the end of the chain, that asks for a `Retry` on the errors its tenacity `retry` predicate accepts
(transient errors, by default), so any user callback that answers first wins.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import tenacity
from tenacity import RetryCallState
from tenacity.retry import retry_base
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from adk.callbacks.results import Raise, Retry
from adk.context import ModelContext, ToolContext
from adk.errors import ModelError

__all__ = ["RetryPolicy", "is_transient", "set_testing", "sleep"]


def is_transient(error: BaseException) -> bool:
    """Whether retrying may help: rate limits, 5xx, timeouts, connection errors, cut streams."""
    if isinstance(error, ModelError):
        return error.transient
    return isinstance(error, TimeoutError | ConnectionError)


@dataclass
class _Testing:
    no_wait: bool = False
    attempts: int | None = None
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)


_testing = _Testing()


async def sleep(seconds: float) -> None:
    """Wait between attempts; no wait at all under `set_testing(True)`."""
    if _testing.no_wait or seconds <= 0:
        await asyncio.sleep(0)  # still a cancellation point, like a real wait
        return
    await _testing.sleep(seconds)


class _TestingSwitch(contextlib.AbstractContextManager[None]):
    def __init__(self, previous: tuple[bool, int | None]) -> None:
        self._previous = previous

    def __exit__(self, *exc: object) -> None:
        _testing.no_wait, _testing.attempts = self._previous


def set_testing(testing: bool = True, *, attempts: int | None = None) -> _TestingSwitch:
    """Turn retry waits off (and optionally cap attempts) for tests.

    Also a context manager that restores the previous setting on exit:
    `with set_testing(True, attempts=1): ...`.
    """
    previous = (_testing.no_wait, _testing.attempts)
    _testing.no_wait, _testing.attempts = testing, attempts if testing else None
    return _TestingSwitch(previous)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how soon to retry, in tenacity's own vocabulary.

    `stop` bounds the attempts of one envelope, `wait` spaces them, and `retry` selects the
    errors this policy, as the last callback of the chain, retries on its own. Use
    `retry=tenacity.retry_never` to leave retrying to your callbacks (still bounded by `stop`).
    Tools are retried by the policy only when marked idempotent.
    """

    stop: stop_base = field(default_factory=lambda: tenacity.stop_after_attempt(3))
    wait: wait_base = field(default_factory=lambda: tenacity.wait_exponential_jitter(initial=0.5, max=30))
    retry: retry_base = field(default_factory=lambda: tenacity.retry_if_exception(is_transient))
    honor_retry_after: bool = True
    """Wait at least the server's Retry-After (capped by `max_retry_after`)."""
    max_retry_after: float = 120.0

    def _wants(self, error: Exception, attempt: int) -> bool:
        state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]  # tenacity needs no Retrying
        state.attempt_number = attempt
        state.set_exception((type(error), error, error.__traceback__))
        return bool(self.retry(state))

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        return Retry(ctx) if self._wants(error, ctx.attempt) else Raise(error)

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext] | Raise:
        if ctx.tool.idempotent and self._wants(error, ctx.attempt):
            return Retry(ctx)
        return Raise(error)

    def attempts(self) -> Attempts:
        """Start counting the attempts of one envelope."""
        return Attempts(self)


class Attempts:
    """The attempts of one envelope: whether another may start, and how long to wait first."""

    __slots__ = ("_policy", "_state")

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy
        self._state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]  # tenacity needs no Retrying

    @property
    def number(self) -> int:
        """The number of the attempt in progress (1 for the first)."""
        return self._state.attempt_number

    def failed(self, error: Exception, delay: float | None = None) -> float | None:
        """Record the failure of the current attempt; the wait before the next, or None to stop."""
        state = self._state
        state.set_exception((type(error), error, error.__traceback__))
        cap = _testing.attempts
        if self._policy.stop(state) or (cap is not None and state.attempt_number >= cap):
            return None
        if delay is None:
            delay = self._policy.wait(state)
            retry_after = getattr(error, "retry_after", None)
            if self._policy.honor_retry_after and isinstance(retry_after, int | float):
                delay = max(delay, min(float(retry_after), self._policy.max_retry_after))
        state.idle_for += delay
        state.attempt_number += 1
        state.outcome = None
        return delay
