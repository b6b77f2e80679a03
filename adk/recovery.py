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
import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, assert_never

import tenacity
from tenacity import RetryCallState
from tenacity.retry import retry_base
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from adk.callbacks.chain import run_on_error
from adk.callbacks.registry import Callbacks, HookName
from adk.callbacks.results import Cont, Fallback, Raise, Retry
from adk.context import ModelContext, ToolContext
from adk.errors import CircuitOpenError, ModelError, RetriesExhausted, locate, where
from adk.events import LlmResponse
from adk.models.base import Model

__all__ = [
    "Attempts",
    "CircuitBreaker",
    "CircuitOpenError",
    "FallbackModels",
    "FixedFallback",
    "RetryPolicy",
    "RetryThenFallback",
    "Testing",
    "is_transient",
    "policy_callbacks",
    "recover",
    "set_testing",
    "sleep",
]

Ctx = TypeVar("Ctx", ModelContext, ToolContext)

log = logging.getLogger(__name__)


def is_transient(error: BaseException) -> bool:
    """Whether retrying may help: rate limits, 5xx, timeouts, connection errors, cut streams."""
    if isinstance(error, ModelError):
        return error.transient
    return isinstance(error, TimeoutError | ConnectionError)


class Testing(contextlib.AbstractContextManager["Testing"]):
    """The state of the testing switch; as a context manager, it restores the previous one on exit."""

    __test__ = False  # not a pytest test class, though users import it into test modules

    def __init__(self, enabled: bool, attempts: int | None, previous: Testing | None) -> None:
        self.enabled = enabled
        self.attempts = attempts
        """Cap on the attempts of any envelope, whatever the policies say."""
        self.waits: list[float] = []
        """The waits that were asked for and skipped, in order (for assertions)."""
        self._previous = previous

    def __exit__(self, *exc: object) -> None:
        global _testing
        if self._previous is not None:
            _testing = self._previous


_testing = Testing(False, None, None)


def set_testing(testing: bool = True, *, attempts: int | None = None) -> Testing:
    """Turn retry waits off (and optionally cap attempts) for tests: nothing sleeps for real.

    The skipped waits are recorded in `.waits`. Also a context manager that restores the previous
    setting on exit: `with set_testing(True, attempts=1) as t: ...`.
    """
    global _testing
    _testing = Testing(testing, attempts if testing else None, _testing)
    return _testing


async def sleep(seconds: float) -> None:
    """Wait between attempts: asyncio's sleep, or, under `set_testing(True)`, none (recorded)."""
    if _testing.enabled:
        _testing.waits.append(seconds)
        await asyncio.sleep(0)  # still a cancellation point, like a real wait
    else:
        await asyncio.sleep(seconds)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how soon to retry, in tenacity's own vocabulary.

    `stop` bounds the attempts of one envelope, `wait` spaces them, and `retry` selects the
    errors this policy, as the last callback of the chain, retries on its own. Use
    `retry=tenacity.retry_never` to leave retrying to your callbacks (still bounded by `stop`).
    Tools are retried by the policy only when marked idempotent.
    """

    stop: stop_base = field(default_factory=lambda: tenacity.stop_after_attempt(3))
    wait: wait_base = field(default_factory=lambda: tenacity.wait_exponential_jitter(multiplier=0.5, max=30))
    retry: retry_base = field(default_factory=lambda: tenacity.retry_if_exception(is_transient))
    honor_retry_after: bool = True
    """Wait at least the server's Retry-After (capped by `max_retry_after`)."""
    max_retry_after: float = 120.0

    def _wants(self, error: Exception, attempt: int) -> bool:
        return bool(self.retry(_failed_state(error, attempt)))

    def _stops(self, error: Exception, attempt: int) -> bool:
        return bool(self.stop(_failed_state(error, attempt)))

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        return Retry(ctx) if self._wants(error, ctx.attempt) else Raise(error)

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext] | Raise:
        if ctx.tool.idempotent and self._wants(error, ctx.attempt):
            return Retry(ctx)
        return Raise(error)

    def attempts(self) -> Attempts:
        """Start counting the attempts of one envelope."""
        return Attempts(self)


def _fresh_state() -> RetryCallState:
    return RetryCallState(None, None, (), {})  # type: ignore[arg-type]  # tenacity needs no Retrying


@functools.lru_cache(maxsize=64)
def policy_callbacks(policy: RetryPolicy) -> Callbacks:
    """`policy` as the callback that ends every error chain (resolved once per policy)."""
    return Callbacks.of([policy])


def _failed_state(error: Exception, attempt: int) -> RetryCallState:
    state = _fresh_state()
    state.attempt_number = attempt
    state.set_exception((type(error), error, error.__traceback__))
    return state


class Attempts:
    """The attempts of one envelope: whether another may start, and how long to wait first."""

    __slots__ = ("_policy", "_start", "_state")

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy
        # tenacity's state is built at the first failure: most calls never fail, and it is not cheap.
        self._start = time.monotonic()
        self._state: RetryCallState | None = None

    @property
    def number(self) -> int:
        """The number of the attempt in progress (1 for the first)."""
        return 1 if self._state is None else self._state.attempt_number

    def failed(self, error: Exception, delay: float | None = None) -> float | None:
        """Record the failure of the current attempt; the wait before the next, or None to stop."""
        state = self._state
        if state is None:
            state = self._state = _fresh_state()
            state.start_time = self._start
        state.set_exception((type(error), error, error.__traceback__))
        cap = _testing.attempts
        if (cap is not None and state.attempt_number >= cap) or self._policy.stop(state):
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

    def restart(self) -> None:
        """Count afresh: the retry goes to another model, which gets its own bound."""
        self._start = time.monotonic()
        self._state = None


async def recover(
    hooks: Callbacks, hook: HookName, error: Exception, ctx: Ctx, attempts: Attempts
) -> Retry[Ctx] | Fallback[Any]:
    """Run the `on_*_error` chain for a failed attempt and hold a `Retry` to the policy's bound.

    Returns the `Fallback`, or a `Retry` whose context carries the next attempt's number and
    whose `delay` is the wait to observe; raises the final error otherwise. When the bound stops
    a retry, `RetriesExhausted` is offered to the chain once more, so that a fallback callback
    may still switch to another model (which starts a fresh bound).
    """
    while True:
        decision = await run_on_error(hooks, hook, error, ctx)
        match decision:
            case Fallback():
                _log_decision("fallback", error, ctx)
                return decision
            case Retry(ctx=new, delay=delay):
                # A retry on another model (a fallback) starts a fresh bound for that model.
                if getattr(new, "model", None) is not getattr(ctx, "model", None):
                    attempts.restart()
                    _log_decision("switch", error, ctx, new, delay or 0.0)
                    return Retry(dataclasses.replace(new, attempt=1), delay or 0.0)
                wait = attempts.failed(error, delay)
                if wait is not None:
                    _log_decision("retry", error, ctx, new, wait)
                    return Retry(dataclasses.replace(new, attempt=attempts.number), wait)
                if isinstance(error, RetriesExhausted):
                    raise error
                error = locate(RetriesExhausted(attempts.number, error), where(error) or hook)
            case Raise(error=final):
                raise final
            case unreachable:
                assert_never(unreachable)


def _log_decision(
    action: str,
    error: Exception,
    ctx: ModelContext | ToolContext,
    new: ModelContext | ToolContext | None = None,
    wait: float = 0.0,
) -> None:
    """Log a recovery decision at INFO; the details ride on the record as `record.adk`.

    `action` is `retry` (the same model or tool again, after `wait`), `switch` (another model)
    or `fallback` (a result stands in for the failed call).
    """
    if not log.isEnabledFor(logging.INFO):
        return
    kind, name = ("model", ctx.model.name) if isinstance(ctx, ModelContext) else ("tool", ctx.tool.name)
    details: dict[str, Any] = {
        "action": action,
        "invocation": ctx.invocation_id,
        "agent": ctx.agent.name,
        kind: name,
        "attempt": ctx.attempt,
        "error": f"{type(error).__name__}: {error}",
    }
    match action:
        case "retry":
            details["wait"] = wait
            message = f"retrying {kind} {name!r} in {wait:.2f}s (attempt {ctx.attempt + 1})"
        case "switch" if isinstance(new, ModelContext):
            details["to"] = new.model.name
            message = f"falling back from model {name!r} to {new.model.name!r}"
        case _:
            message = f"a fallback result stands in for {kind} {name!r}"
    log.info("%s after %s", message, details["error"], extra={"adk": details})


def _next_model(models: Sequence[Model], error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
    """A retry at once on the model after `ctx.model` in `models`, or `Raise` when there is none."""
    index = next((i + 1 for i, model in enumerate(models) if model is ctx.model), 0)
    if index >= len(models):
        return Raise(error)
    return Retry(dataclasses.replace(ctx, model=models[index]), delay=0.0)


@dataclass(frozen=True, slots=True)
class FallbackModels:
    """On any model error, retry at once with the next of `models` (in order), each with its own bound."""

    models: Sequence[Model]

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        return _next_model(self.models, error, ctx)


@dataclass(frozen=True, slots=True)
class RetryThenFallback:
    """Retry each model as `retry` says (Retry-After honoured), then move on to the next of `models`.

    E.g. `RetryThenFallback([b, c], RetryPolicy(stop=stop_after_attempt(3)))` on an agent whose
    model is `a`: up to three attempts on `a`, then on `b`, then on `c`.
    """

    models: Sequence[Model]
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        retryable = not isinstance(error, RetriesExhausted) and self.retry._wants(error, ctx.attempt)
        if retryable and not self.retry._stops(error, ctx.attempt):
            return Retry(ctx)
        return _next_model(self.models, error, ctx)


@dataclass(frozen=True, slots=True)
class FixedFallback:
    """On a model error that `when` accepts (any, by default), answer with a fixed response."""

    response: LlmResponse | str
    when: Callable[[Exception], bool] = lambda error: True

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Fallback[LlmResponse] | Raise:
        if not self.when(error):
            return Raise(error)
        response = self.response
        return Fallback(LlmResponse.text(response) if isinstance(response, str) else response)


class CircuitBreaker:
    """Skip a model after `failures` consecutive failed calls, for `cooldown` seconds.

    While a model's circuit is open, `before_model` sends the request to the next model of
    `fallbacks` whose circuit is closed (or raises `CircuitOpenError` if there is none). After the
    cool-down one call is let through: success closes the circuit, failure opens it again.
    Place it before other recovery callbacks so that it sees every failure.
    """

    def __init__(
        self,
        *,
        failures: int = 5,
        cooldown: float = 30.0,
        fallbacks: Sequence[Model] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures = failures
        self.cooldown = cooldown
        self.fallbacks = list(fallbacks)
        self._clock = clock
        self._count: dict[str, int] = {}
        self._opened: dict[str, float] = {}

    def is_open(self, model: Model) -> bool:
        opened = self._opened.get(model.name)
        return opened is not None and self._clock() - opened < self.cooldown

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        if not self.is_open(ctx.model):
            return Cont(ctx)
        for model in self.fallbacks:
            if not self.is_open(model):
                return Cont(dataclasses.replace(ctx, model=model))
        raise CircuitOpenError(f"circuit open for model {ctx.model.name!r} and every fallback")

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self._count.pop(ctx.model.name, None)
        self._opened.pop(ctx.model.name, None)
        return response

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        name = ctx.model.name
        count = self._count[name] = self._count.get(name, 0) + 1
        if count >= self.failures:
            self._opened[name] = self._clock()
        return Raise(error)
