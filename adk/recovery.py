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
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar, assert_never

import tenacity
from tenacity import RetryCallState
from tenacity.retry import retry_base
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from adk.callbacks.chain import run_on_error
from adk.callbacks.decisions import (
    Approved,
    Decision,
    Deferred,
    FellBack,
    Halted,
    Rejected,
    Replaced,
    Retried,
    carry,
)
from adk.callbacks.registry import Callbacks, HookName, decided_by
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
        self.slept = 0.0
        """Their sum: the retry clock runs ahead by it, so delay-based stops act as if they were slept."""
        self._previous = previous

    def __exit__(self, *exc: object) -> None:
        global _testing
        if self._previous is not None:
            _testing = self._previous


_testing = Testing(False, None, None)


def set_testing(testing: bool = True, *, attempts: int | None = None) -> Testing:
    """Turn retry waits off (and optionally cap attempts) for tests: nothing sleeps for real.

    The skipped waits are recorded in `.waits`, and the clock that policies' delay-based stops read
    advances by them. Also a context manager that restores the previous setting on exit:
    `with set_testing(True, attempts=1) as t: ...`.
    """
    global _testing
    _testing = Testing(testing, attempts if testing else None, _testing)
    return _testing


def _now() -> float:
    """The retry clock: monotonic time, plus the waits the testing switch skipped."""
    return time.monotonic() + _testing.slept


async def sleep(seconds: float) -> None:
    """Wait between attempts: asyncio's sleep, or, under `set_testing(True)`, none (recorded)."""
    testing = _testing
    if testing.enabled:
        testing.waits.append(seconds)
        testing.slept += seconds
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

    Each envelope keeps one tenacity `RetryCallState` per model and per policy that judges its
    failures, so `stop`, `wait` and `retry` see what they would see in tenacity itself.
    """

    stop: stop_base = field(default_factory=lambda: tenacity.stop_after_attempt(3))
    wait: wait_base = field(default_factory=lambda: tenacity.wait_exponential_jitter(multiplier=0.5, max=30))
    retry: retry_base = field(default_factory=lambda: tenacity.retry_if_exception(is_transient))
    honor_retry_after: bool = True
    """Wait at least the server's Retry-After (capped by `max_retry_after`)."""
    max_retry_after: float = 120.0

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
        attempts = _envelope.get()  # None outside an envelope: the failure is judged on its own
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


def _fresh_state(error: Exception, attempt: int) -> RetryCallState:
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]  # tenacity needs no Retrying
    state.attempt_number = attempt
    state.set_exception((type(error), error, error.__traceback__))
    return state


@functools.lru_cache(maxsize=64)
def policy_callbacks(policy: RetryPolicy) -> Callbacks:
    """`policy` as the callback that ends every error chain (resolved once per policy)."""
    return Callbacks.of([policy])


class _Track:
    """The attempts on one model (or on the tool) of an envelope, and each judging policy's state."""

    __slots__ = ("failed_at", "idle", "number", "start", "states", "target")

    def __init__(self, target: object, start: float) -> None:
        self.target = target
        """The model (None for a tool); held, since its id keys the track."""
        self.start = start
        self.number = 1
        self.idle = 0.0
        self.failed_at = start
        self.states: dict[int, tuple[object, RetryCallState]] = {}
        """Per policy (by id; the policy is held with it): its tenacity state."""

    def advance(self, wait: float) -> None:
        """The next attempt starts after `wait`: what tenacity does before it sleeps."""
        self.number += 1
        self.idle += wait
        for _, state in self.states.values():
            state.idle_for += wait
            state.prepare_for_next_attempt()


class Attempts:
    """The attempts of one envelope: whether another may start, how long to wait, what was decided.

    Most calls never fail: tenacity's states are built at the first failure, and `decisions` only
    when a callback decides something.
    """

    __slots__ = ("_start", "_track", "_tracks", "decisions", "policy")

    def __init__(self, policy: RetryPolicy, start: float | None = None) -> None:
        self.policy = policy
        """The policy whose `stop` bounds this envelope (the agent's or the runner's)."""
        # _now(), inlined: every envelope pays it; `start`, a `time.monotonic()` reading, when
        # the envelope began before them
        self._start = (time.monotonic() if start is None else start) + _testing.slept
        self._track: _Track | None = None
        self._tracks: dict[int, _Track] | None = None
        self.decisions: list[Decision] | None = None
        """What callbacks decided in this envelope, in order; None until one does."""

    @property
    def number(self) -> int:
        """The number of the attempt in progress on the model in play (1 for the first)."""
        track = self._track
        return 1 if track is None else track.number

    def decided(self, decision: Decision) -> None:
        if self.decisions is None:
            self.decisions = [decision]
        else:
            self.decisions.append(decision)

    def failed(self, target: object) -> None:
        """The attempt in progress on `target` (a model, or None for a tool) failed."""
        track = self._track
        if track is None:
            track = self._track = _Track(target, self._start)
        track.failed_at = _now()

    def state(self, policy: object, error: Exception) -> RetryCallState:
        """`policy`'s tenacity state for the failed attempt in progress, its outcome `error`."""
        track = self._failed()
        entry = track.states.get(id(policy))
        if entry is None:
            state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]  # needs no Retrying
            state.start_time = track.start
            state.attempt_number = track.number
            state.idle_for = track.idle
            track.states[id(policy)] = (policy, state)
        else:
            state = entry[1]
        outcome = state.outcome
        if outcome is None or outcome.exception() is not error:
            state.set_exception((type(error), error, error.__traceback__))
            state.outcome_timestamp = track.failed_at
        return state

    def retry(self, error: Exception, delay: float | None) -> float | None:
        """Whether the bound lets another attempt start, and the wait before it; None to stop.

        `delay` is the wait the answering callback chose; without one, the bounding policy's.
        """
        policy = self.policy
        state = self.state(policy, error)
        if delay is None:
            delay = policy._wait(state, error)
        state.upcoming_sleep = delay
        cap = _testing.attempts
        if (cap is not None and state.attempt_number >= cap) or policy.stop(state):
            return None
        self._failed().advance(delay)
        return delay

    def _failed(self) -> _Track:
        track = self._track
        if track is None:
            raise RuntimeError("no attempt of this envelope has failed yet")
        return track

    def switch(self, target: object, wait: float) -> None:
        """The next attempt goes to another model: its own bound, resumed if it was tried before."""
        tracks = self._tracks
        if tracks is None:
            current = self._failed()
            tracks = self._tracks = {id(current.target): current}
        track = tracks.get(id(target))
        if track is None:
            track = tracks[id(target)] = _Track(target, _now())
        else:
            track.advance(wait)
        self._track = track


_envelope: ContextVar[Attempts | None] = ContextVar("adk_envelope", default=None)
"""The envelope whose failure the `on_*_error` chain is judging: where policies find their state."""


def _target(ctx: ModelContext | ToolContext) -> str:
    return f"model:{ctx.model.name}" if isinstance(ctx, ModelContext) else f"tool:{ctx.tool.name}"


async def recover(
    hooks: Callbacks, hook: HookName, error: Exception, ctx: Ctx, attempts: Attempts
) -> Retry[Ctx] | Fallback[Any]:
    """Run the `on_*_error` chain for a failed attempt and hold a `Retry` to the policy's bound.

    Returns the `Fallback`, or a `Retry` whose context carries the next attempt's number and
    whose `delay` is the wait to observe; raises the final error otherwise. When the bound stops
    a retry, `RetriesExhausted` is offered to the chain once more, so that a fallback callback
    may still switch to another model (which has its own bound). Each decision is added to
    `attempts.decisions`; a final error carries them (`decisions.carried`).
    """
    model = getattr(ctx, "model", None)
    attempts.failed(model)
    token = _envelope.set(attempts)
    try:
        while True:
            deciders: list[object] = []
            decision = await run_on_error(hooks, hook, error, ctx, deciders=deciders)
            match decision:
                case Fallback():
                    by, target = decided_by(deciders[0], hook), _target(ctx)
                    _decided(attempts, FellBack(by, target, None, *_error(error)), ctx)
                    return decision
                case Retry(ctx=new, delay=delay):
                    by, target, to = decided_by(deciders[0], hook), _target(ctx), _target(new)
                    other = getattr(new, "model", None)
                    if other is not model:
                        attempts.switch(other, delay or 0.0)
                        _decided(attempts, FellBack(by, target, to, *_error(error)), ctx)
                        return Retry(dataclasses.replace(new, attempt=attempts.number), delay or 0.0)
                    wait = attempts.retry(error, delay)
                    if wait is not None:
                        n = attempts.number
                        made: Decision
                        if to == target:
                            made = Retried(by, target, n, wait, *_error(error))
                        else:  # another tool stands in
                            made = FellBack(by, target, to, *_error(error))
                        _decided(attempts, made, ctx)
                        return Retry(dataclasses.replace(new, attempt=n), wait)
                    if isinstance(error, RetriesExhausted):
                        raise carry(error, attempts.decisions)
                    error = locate(RetriesExhausted(attempts.number, error), where(error) or hook)
                case Raise(error=final):
                    raise carry(final, attempts.decisions)
                case unreachable:
                    assert_never(unreachable)
    finally:
        _envelope.reset(token)


def _error(error: BaseException) -> tuple[str, str]:
    return type(error).__name__, str(error)


def _decided(attempts: Attempts, decision: Decision, ctx: ModelContext | ToolContext) -> None:
    attempts.decided(decision)
    if log.isEnabledFor(logging.INFO):
        _log_decision(decision, ctx)


def _log_decision(decision: Decision, ctx: ModelContext | ToolContext) -> None:
    """Log a recovery decision at INFO; the details ride on the record as `record.adk`.

    `action` is `retry` (the same model or tool again, after `wait`), `switch` (another model or
    tool) or `fallback` (a result stands in for the failed call).
    """
    kind, _, name = decision.target.partition(":")
    more: dict[str, Any]
    match decision:
        case Retried(wait=wait, attempt=attempt):
            action, more = "retry", {"wait": wait}
            text = f"retrying {kind} {name!r} in {wait:.2f}s (attempt {attempt})"
        case FellBack(to=str(to)):
            action, more = "switch", {"to": to.partition(":")[2]}
            text = f"falling back from {kind} {name!r} to {more['to']!r}"
        case FellBack():
            action, more = "fallback", {}
            text = f"a fallback result stands in for {kind} {name!r}"
        case Halted() | Replaced() | Deferred() | Approved() | Rejected():
            return
        case unreachable:
            assert_never(unreachable)
    error = f"{decision.error}: {decision.message}"
    details: dict[str, Any] = {
        "action": action,
        "by": decision.by,
        "invocation": ctx.invocation_id,
        "agent": ctx.agent.name,
        kind: name,
        "attempt": ctx.attempt,
        "error": error,
        **more,
    }
    log.info("%s after %s", text, error, extra={"adk": details})


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
        if not isinstance(error, RetriesExhausted):
            wait = self.retry._judge(error, ctx)  # on `retry`'s own state, its wait
            if wait is not None:
                return Retry(ctx, wait)
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
