"""Retries and fallbacks: tenacity policies, and the ready-made recovery callbacks.

A model call or a tool call is one envelope: `before_*` once, attempts inside, `after_*` once on
the final outcome. When an attempt fails, the `on_*_error` chain decides; a `Retry` is honoured
only while the agent's `RetryPolicy` lets another attempt start (its tenacity `stop`), after its
`wait`, the `Retry.delay` or the server's Retry-After. The policy is also a callback, standing at
the end of the chain, that asks for a `Retry` on the errors its tenacity `retry` predicate accepts
(transient errors, by default), so any user callback that answers first wins.

Here, `recover`: a failed attempt judged by the chain, held to the bound, each decision logged
(on this package's logger, `adk.recovery`). Beside it: `attempts` (an envelope's attempts, the
retry clock, the testing switch), `policy` (`RetryPolicy`, `is_transient`), `callbacks` (the
ready-made recovery callbacks), `breaker` (`CircuitBreaker`).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, TypeVar, assert_never

from adk.callbacks.chain import run_on_error
from adk.callbacks.decisions import (
    Approved,
    BudgetExceeded,
    BudgetWarning,
    Compacted,
    Decision,
    Deferred,
    FellBack,
    Halted,
    Paced,
    Refused,
    Rejected,
    Replaced,
    Retried,
    carry,
)
from adk.callbacks.registry import Callbacks, HookName, decided_by
from adk.callbacks.results import Fallback, Raise, Retry
from adk.context import ModelContext, ToolContext
from adk.errors import CircuitOpenError, RetriesExhausted, locate, where
from adk.recovery.attempts import Attempts, Testing, judging, set_testing, sleep
from adk.recovery.breaker import CircuitBreaker
from adk.recovery.callbacks import FallbackModels, FixedFallback, RetryThenFallback
from adk.recovery.policy import RetryPolicy, is_transient, policy_callbacks

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
    token = judging.set(attempts)
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
        judging.reset(token)


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
        case (
            Halted()
            | Replaced()
            | Deferred()
            | Approved()
            | Rejected()
            | Compacted()
            | Refused()
            | Paced()
            | BudgetWarning()
            | BudgetExceeded()
        ):
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
