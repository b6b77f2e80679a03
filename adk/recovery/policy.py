"""`RetryPolicy`: how often and how soon to retry, in tenacity's vocabulary, and the errors it retries.

The policy is also a callback, standing at the end of every `on_*_error` chain, that asks for a
`Retry` on the errors its tenacity `retry` predicate accepts (transient errors, by default).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import tenacity
from tenacity import RetryCallState
from tenacity.retry import retry_base
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from adk.callbacks.registry import Callbacks
from adk.callbacks.results import Raise, Retry
from adk.context import ModelContext, ToolContext
from adk.errors import ModelError
from adk.limits.timeouts import positive
from adk.recovery.attempts import Attempts, judging
from adk.recovery.overflow import DROP_OLDEST_TURNS

__all__ = ["DEFAULT_POLICY", "RetryPolicy", "is_transient", "policy_callbacks"]


def is_transient(error: BaseException) -> bool:
    """Whether retrying may help: rate limits, 5xx, timeouts, connection errors, cut streams."""
    if isinstance(error, ModelError):
        return error.transient
    return isinstance(error, TimeoutError | ConnectionError)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how soon to retry, in tenacity's own vocabulary.

    `stop` bounds the attempts of one envelope, `wait` spaces them, and `retry` selects the
    errors this policy, as the last callback of the chain, retries on its own. Use
    `retry=tenacity.retry_never` to leave retrying to your callbacks (still bounded by `stop`).
    Tools are retried by the policy only when marked idempotent.

    Each envelope keeps one tenacity `RetryCallState` per model and per policy that judges its
    failures, so `stop`, `wait` and `retry` see what they would see in tenacity itself.
    """

    stop: stop_base = field(default_factory=lambda: tenacity.stop_after_attempt(3))
    wait: wait_base = field(default_factory=lambda: tenacity.wait_exponential_jitter(multiplier=0.5, max=30))
    retry: retry_base = field(default_factory=lambda: tenacity.retry_if_exception(is_transient))
    honor_retry_after: bool = True
    """Wait at least the server's Retry-After (capped by `max_retry_after`)."""
    max_retry_after: float = 120.0
    attempt_timeout: float | None = None
    """Seconds one model attempt may take to answer (and a stream between two chunks); past it
    the attempt is cancelled with a `ModelTimeoutError`, transient. None: the model's own limit."""

    def __post_init__(self) -> None:
        limit = positive(self.attempt_timeout, "RetryPolicy: attempt_timeout")
        object.__setattr__(self, "attempt_timeout", limit)  # frozen: set once, as made

    def _wait(self, state: RetryCallState, error: BaseException) -> float:
        delay = float(self.wait(state))
        retry_after = getattr(error, "retry_after", None)
        if self.honor_retry_after and isinstance(retry_after, int | float):
            delay = max(delay, min(float(retry_after), self.max_retry_after))
        return delay

    def _judge(self, error: Exception, ctx: ModelContext | ToolContext) -> float | None:
        """As tenacity would, on this policy's own state: the wait before another attempt, or None.

        The policy that bounds the envelope leaves its `stop` to the bound, which offers
        `RetriesExhausted` to the chain; any other policy declines once its own `stop` says so.
        """
        attempts = judging.get()  # None outside an envelope: the failure is judged on its own
        state = _fresh_state(error, ctx.attempt) if attempts is None else attempts.state(self, error)
        if not self.retry(state):
            return None
        wait = state.upcoming_sleep = self._wait(state, error)
        if (attempts is None or attempts.policy is not self) and self.stop(state):
            return None
        return wait

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        wait = self._judge(error, ctx)
        return Raise(error) if wait is None else Retry(ctx, wait)

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext] | Raise:
        wait = self._judge(error, ctx) if ctx.tool.idempotent else None
        return Raise(error) if wait is None else Retry(ctx, wait)

    def attempts(self) -> Attempts:
        """Start counting the attempts of one envelope, bounded by this policy."""
        return Attempts(self)


DEFAULT_POLICY = RetryPolicy()
"""The policy of a run whose agent and runner give none (an `Invocation` made without one): it is
frozen and keeps no state, so one serves every such run."""


def _fresh_state(error: Exception, attempt: int) -> RetryCallState:
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]  # tenacity needs no Retrying
    state.attempt_number = attempt
    state.set_exception((type(error), error, error.__traceback__))
    return state


@functools.lru_cache(maxsize=64)
def policy_callbacks(policy: RetryPolicy) -> Callbacks:
    """`policy` as the callback that ends every error chain (resolved once per policy), after the
    default recovery of a request too long for the model (`DropOldestTurns`)."""
    return Callbacks.of([DROP_OLDEST_TURNS, policy])
