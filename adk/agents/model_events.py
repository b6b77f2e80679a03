"""The events of a model call (adk.agents.model_call): a streamed chunk's, the final response's
with the decisions that shaped it, and what a failed attempt tells consumers at once."""

from __future__ import annotations

from adk.callbacks.decisions import Decision
from adk.compaction import take_compactions
from adk.context import AgentContext, ModelContext
from adk.errors import ResponseRejected, where
from adk.events import ErrorInfo, Event, LlmResponse, ObjectType
from adk.recovery import Attempts

__all__ = ["after_failure", "attempt_failed", "discarded", "partial_event", "response_event"]


def partial_event(author: str, ctx: AgentContext, chunk: LlmResponse) -> Event:
    """The event of a streamed chunk."""
    partial = Event.from_response(ctx.invocation_id, author, chunk)
    partial.branch = ctx.branch
    return partial


def response_event(author: str, ctx: AgentContext, response: LlmResponse, attempts: Attempts | None) -> Event:
    """The event of a model call's final response, with the decisions that shaped it (none
    without `attempts`: a call without model hooks whose first attempt succeeded)."""
    event = Event.from_response(ctx.invocation.invocation_id, author, response)
    event.branch = ctx.branch
    event.is_partial = False
    if attempts is not None and attempts.decisions is not None:  # set only when there are some
        event.decisions = tuple(attempts.decisions)
    return event


def attempt_failed(author: str, ctx: AgentContext, error: Exception, attempts: Attempts) -> Event:
    """Tells consumers at once how a failed attempt was recovered (the response repeats it)."""
    decisions = attempts.decisions
    told = 2 if type(error) is ResponseRejected else 1  # its `Refused` too
    made = () if decisions is None else tuple(decisions[-told:])
    return _told(author, ctx, ObjectType.ATTEMPT_FAILED, ErrorInfo.of(error, where(error)), made)


def after_failure(author: str, ctx: AgentContext, mctx: ModelContext, streamed: bool) -> list[Event]:
    """What follows a failed attempt's `attempt.failed`: the roll-back of its partial output, if
    it streamed; the compaction a recovery callback folded the request with (adk.compaction)."""
    events = [discarded(author, ctx, mctx)] if streamed else []
    return events + (take_compactions(ctx.invocation, ctx.branch) or [])


def discarded(author: str, ctx: AgentContext, mctx: ModelContext) -> Event:
    """Tells consumers to roll back the partial output of a failed streamed attempt."""
    name = mctx.model.name
    message = f"attempt {mctx.attempt} on model {name!r} failed after partial output"
    error = ErrorInfo(type="AttemptDiscarded", message=message, where=f"model:{name}")
    return _told(author, ctx, ObjectType.ATTEMPT_DISCARDED, error, ())


def _told(
    author: str, ctx: AgentContext, kind: str, error: ErrorInfo, decisions: tuple[Decision, ...]
) -> Event:
    """A partial event that tells consumers of a failed attempt as it happens (never stored)."""
    return Event.new(
        ctx.invocation_id,
        author,
        branch=ctx.branch,
        object=kind,
        is_partial=True,
        error=error,
        decisions=decisions,
    )
