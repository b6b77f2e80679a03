"""A request too long for the model: where its turns begin, and the default recovery, which drops
the oldest whole turns and retries, halving them again at each refusal (docs/context.md).

A turn begins at a user message and runs to the next: a tool call and its result are always in the
same turn, so cutting at turns never separates them. The system instruction is not a message, and
is never cut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from adk.callbacks.results import Raise, Retry
from adk.context import ModelContext
from adk.errors import ContextOverflowError
from adk.events import Message
from adk.models.base import LlmRequest
from adk.recovery.attempts import judging

__all__ = [
    "DropOldestTurns",
    "context_limit",
    "context_window",
    "kept_from",
    "overflowed_before",
    "settle",
    "shortened",
    "turn_starts",
]


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Where each turn of `messages` begins: the index of each user message."""
    return [i for i, message in enumerate(messages) if message.role == "user"]


def kept_from(messages: Sequence[Message], keep_last: int) -> int:
    """Where the last `keep_last` whole turns before the current one begin (the current turn, from
    the last user message on, is always kept); 0 when nothing older is left to fold."""
    starts = turn_starts(messages)
    if not starts:
        return 0
    return starts[max(len(starts) - 1 - keep_last, 0)]


def shortened(request: LlmRequest, messages: list[Message]) -> LlmRequest:
    """`request` with `messages`: the model's past counts no longer apply to it."""
    return request.model_copy(update={"messages": messages, "usage_anchor": None})


def context_limit(ctx: ModelContext) -> int | None:
    """The agent's `max_context_tokens`, if it has one; else the context of the model called
    (its `context_window`, if it says), so a fallback model's own counts."""
    limit = getattr(ctx.agent, "max_context_tokens", None)
    if limit is None:
        limit = context_window(ctx.model)
    return limit if isinstance(limit, int) else None


def context_window(model: object) -> int | None:
    """What a model says its context is (an optional `context_window` attribute), if it says."""
    window = getattr(model, "context_window", None)
    return window if isinstance(window, int) and not isinstance(window, bool) and window > 0 else None


def settle(error: ContextOverflowError) -> ContextOverflowError:
    """Mark an overflow a callback has answered for good (a `Compact` whose summary model failed):
    `DropOldestTurns` leaves it to stand."""
    error._adk_settled = True  # type: ignore[attr-defined]  # a private mark, as errors.locate's
    return error


def overflowed_before() -> bool:
    """Whether the envelope being judged was already retried after a `ContextOverflowError`."""
    attempts = judging.get()
    decisions = attempts.decisions if attempts is not None else None
    return any(d.kind == "retried" and d.error == ContextOverflowError.__name__ for d in decisions or ())


@dataclass(frozen=True, slots=True)
class DropOldestTurns:
    """The default recovery of a `ContextOverflowError`: drop the oldest whole turns before the
    current one and retry, within the retry policy's bound. The first time, with the agent's
    `max_context_tokens` (or the model's `context_window`), as many as the estimate needs to fit
    it; without, the older half. Each further refusal of the same call halves the older turns
    left, until the model takes the request or only the current turn is left (then it stands).

    It stands before the policy at the end of every chain, so a `Compact` (or any callback that
    answers an overflow, e.g. a fallback to a model with a longer context) answers first. The
    turns are dropped from this call's request only: a `Compact` stores what it folds.
    """

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        if not isinstance(error, ContextOverflowError) or getattr(error, "_adk_settled", False):
            return Raise(error)
        messages = ctx.request.messages
        starts = [i for i in turn_starts(messages) if i > 0]  # a cut falls where a turn begins
        if not starts:
            return Raise(error)
        cut = starts[(len(starts) - 1) // 2]  # the older half
        limit = context_limit(ctx)
        if limit is not None and not overflowed_before():  # else the estimate was short: halve
            fits = (s for s in starts if shortened(ctx.request, messages[s:]).estimated_tokens <= limit)
            cut = next(fits, starts[-1])
        request = shortened(ctx.request, messages[cut:])
        return Retry(dataclasses.replace(ctx, request=request), delay=0.0)


DROP_OLDEST_TURNS = DropOldestTurns()
"""The one instance the default chains end with (it keeps no state)."""
