"""`Compact`: a `before_model` callback that keeps a long conversation within the model's context.

Before a call whose `ctx.request.estimated_tokens` passes its threshold (`threshold_tokens`, or
the agent's `max_context_tokens`), it folds the turns older than the last `keep_last`: into a
summary written by its own model (`summarize`), or out (dropped); with `drop_tool_results`, it
first tries replacing their tool results by a placeholder. A fold is stored: a `compaction` event
(carrying its `Compacted` decision) goes into the session before the call's response, and
`Session.history` reads from it on, so later turns, other workers, a resume and `adk web` see the
same history. On a `ContextOverflowError` it folds whatever is older than the current turn and
retries once. Rules and examples: docs/context.md.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Sequence

from adk.callbacks.decisions import Compacted, Decision
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks, decided_by
from adk.callbacks.results import Cont, Raise, Retry
from adk.context import Invocation, ModelContext
from adk.errors import ContextOverflowError
from adk.events import Event, Message, ObjectType, new_choice, new_event
from adk.models.base import LlmRequest, Model
from adk.recovery import Attempts, RetryPolicy, policy_callbacks
from adk.recovery.overflow import (
    context_limit,
    context_window,
    kept_from,
    overflowed_before,
    settle,
    shortened,
)
from adk.recovery.policy import DEFAULT_POLICY

__all__ = ["DROPPED", "SUMMARY", "Compact", "check_context", "stored", "take_compactions"]

log = logging.getLogger(__name__)

DROPPED = "[this tool result was dropped to save context]"
"""What an old tool result is replaced with (`drop_tool_results`)."""
SUMMARY = "Summary of the earlier conversation:\n"
"""How the summary message begins (a user message, the history's first)."""
_INSTRUCTION = (
    "Summarise the conversation below for the assistant who will continue it: keep every fact, "
    "name, number, decision and open question it needs; leave out pleasantries. Answer with the summary only."
)
_PENDING = "adk.compaction:"
"""The invocation-state key (plus the branch) of the compaction events waiting to be stored."""
_FAILED = "adk.compaction.failed:"
"""The invocation-state key (plus the branch) of the summary model's failure in the call under way."""


class Compact:
    """Fold the older turns of the conversation before a model call that would pass the threshold.

    `keep_last` whole turns before the current one stay as they are; the current turn always
    does. `summarize` is the model that writes the summary (None: older turns are dropped); its
    call is an envelope of its own: `callbacks` are its model hooks (before_model, after_model,
    on_model_error), and `retry_policy` bounds its attempts (default: the agent's, else the
    run's). `threshold_tokens` defaults to the agent's `max_context_tokens`, else the model's
    `context_window`; without any, compaction starts only on a `ContextOverflowError`.
    """

    def __init__(
        self,
        keep_last: int = 2,
        summarize: Model | None = None,
        drop_tool_results: bool = False,
        threshold_tokens: int | None = None,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        if keep_last < 0:
            raise ValueError(f"Compact: keep_last must be 0 or more, got {keep_last}")
        if threshold_tokens is not None and threshold_tokens <= 0:
            raise ValueError(f"Compact: threshold_tokens must be more than 0, got {threshold_tokens}")
        self.keep_last = keep_last
        self.summarize = summarize
        self.drop_tool_results = drop_tool_results
        self.threshold_tokens = threshold_tokens
        self.callbacks = Callbacks.of(callbacks)
        """The summary model's own hooks (not the agent's, nor the runner's: a `Compact` among
        those would fold the summary's own request)."""
        self.retry_policy = retry_policy
        self._hooks: tuple[RetryPolicy, Callbacks] | None = None
        """The last policy and the summary call's chain made for it (callbacks + policy)."""

    def __repr__(self) -> str:
        return (
            f"Compact(keep_last={self.keep_last}, summarize={self.summarize!r},"
            f" drop_tool_results={self.drop_tool_results}, threshold_tokens={self.threshold_tokens})"
        )

    async def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        request = stored(ctx)
        threshold = self.threshold_tokens or context_limit(ctx)
        if threshold is not None and request.estimated_tokens > threshold:
            request = await self._compact(ctx, request, threshold)
        return Cont(ctx) if request is ctx.request else Cont(dataclasses.replace(ctx, request=request))

    async def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        """A request the model refused for its length: fold everything older than the current
        turn, and retry once; if the summary model failed, the overflow stands, naming both."""
        if not isinstance(error, ContextOverflowError) or overflowed_before():
            return Raise(error)
        request = ctx.request
        failed = _failure(ctx)
        if failed is None:
            request = await self._compact(ctx, request, 0)
            failed = _failure(ctx)
        if failed is not None:
            both = ContextOverflowError(
                f"{error}; and compaction could not shorten it: the summary model failed:"
                f" {type(failed).__name__}: {failed}",
                status_code=error.status_code,
            )
            both.__cause__, both.__context__ = failed, error
            return Raise(settle(both))
        if request is ctx.request:
            return Raise(error)
        return Retry(dataclasses.replace(ctx, request=request), delay=0.0)

    async def _compact(self, ctx: ModelContext, request: LlmRequest, threshold: int) -> LlmRequest:
        """`request` with its older turns folded, the fold stored; or, if that was enough, their
        tool results dropped (not stored: the same old turns always drop the same way)."""
        messages = request.messages
        keep = kept_from(messages, self.keep_last if threshold else 0)
        if keep == 0:
            return request
        old, kept = messages[:keep], messages[keep:]
        if self.drop_tool_results:
            dropped = [_dropped(m) if m.role == "tool" else m for m in old]
            lighter = shortened(request, dropped + kept)
            if threshold and lighter.estimated_tokens <= threshold:
                return lighter
        summary: list[Message] = []
        written: Sequence[Decision] = ()
        if self.summarize is not None:
            try:
                text, written = await self._summary(ctx, self.summarize, old)
                summary = [Message.user(SUMMARY + text)]
            except Exception as failed:  # the request goes on as it is; an overflow names this
                log.warning("Compact: the summary model failed (%s); the request goes on unshortened", failed)
                ctx.invocation.set_state(_FAILED + ctx.branch, failed)
                return request
        folded = shortened(request, summary + kept)
        saved = request.estimated_tokens - folded.estimated_tokens
        by = decided_by(self, "before_model" if threshold else "on_model_error")
        decision = Compacted(by, f"model:{ctx.model.name}", len(old), saved)
        _store(ctx, decision, written, summary, kept[0])
        return folded

    async def _summary(
        self, ctx: ModelContext, model: Model, messages: list[Message]
    ) -> tuple[str, Sequence[Decision]]:
        """The summary `model` writes of `messages`, through the summary's own hooks and retries;
        and what they decided on the way (stored with the `Compacted` decision)."""
        transcript = "\n".join(_line(m) for m in messages)
        request = LlmRequest(instruction=_INSTRUCTION, messages=[Message.user(transcript)])
        policy = self.retry_policy or getattr(ctx.agent, "retry_policy", None)
        policy = policy or ctx.invocation.retry_policy or DEFAULT_POLICY
        hooks = self._chain(policy)
        attempts = Attempts(policy)
        sctx = ModelContext(ctx.invocation, ctx.agent, ctx.branch, request, model)
        text = (await ctx.agent.call_aside(hooks, sctx, attempts)).content.strip()
        if not text:
            raise ValueError(f"the summary model {model.name!r} answered with no text")
        return text, attempts.decisions or ()

    def _chain(self, policy: RetryPolicy) -> Callbacks:
        """The summary call's chain: its own callbacks, then the policy's (made once per policy)."""
        made = self._hooks
        if made is None or made[0] is not policy:
            made = self._hooks = (policy, self.callbacks + policy_callbacks(policy))
        return made[1]


def check_context(
    agent: str, max_context_tokens: int | None, callbacks: Sequence[object], model: Model
) -> int | None:
    """An agent's `max_context_tokens`, checked: more than 0, and no less than the threshold of a
    `Compact` among its `callbacks` (one past the context would start too late); without it, the
    model's `context_window` is held to the same."""
    if max_context_tokens is not None and max_context_tokens <= 0:
        raise ValueError(f"agent {agent!r}: max_context_tokens must be more than 0, got {max_context_tokens}")
    window = context_window(model)
    limit, said = (
        (max_context_tokens, f"max_context_tokens={max_context_tokens}")
        if max_context_tokens is not None
        else (window, f"model {model.name!r} context_window={window}")
    )
    for callback in callbacks:
        if limit is not None and isinstance(callback, Compact) and (callback.threshold_tokens or 0) > limit:
            raise ValueError(f"agent {agent!r}: {callback!r} starts past the model's context ({said})")
    return max_context_tokens


def _dropped(message: Message) -> Message:
    return Message.tool(DROPPED, tool_call_id=message.tool_call_id or "", name=message.name or "")


def _line(message: Message) -> str:
    calls = "".join(f" [calls {c.function.name}({c.function.arguments})]" for c in message.tool_calls)
    who = f"tool {message.name}" if message.role == "tool" else message.role
    return f"{who}: {message.content}{calls}"


def _failure(ctx: ModelContext) -> Exception | None:
    """The summary model's failure in this model call, if it failed (taken: asked once)."""
    key = _FAILED + ctx.branch
    failed: Exception | None = ctx.invocation.get_state(key)
    if failed is not None:
        ctx.invocation.delete_state(key)
    return failed


def stored(ctx: ModelContext) -> LlmRequest:
    """`ctx.request` as the session's last compaction on its branch left the history: a run's
    request made before that compaction still holds the messages it folded."""
    request = ctx.request
    session = ctx.invocation.session
    history = session.history(ctx.branch)
    compaction = session.histories[ctx.branch].compaction
    messages = request.messages
    if compaction is None or not history or (messages and messages[0] is history[0]):
        return request
    summary = [c.message for c in compaction.choices if c.message is not None]
    if len(history) <= len(summary):
        return request
    first = history[len(summary)]
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is first:
            return shortened(request, summary + messages[i:])
    return request


def _store(
    ctx: ModelContext,
    decision: Compacted,
    written: Sequence[Decision],
    summary: list[Message],
    first: Message,
) -> None:
    """Put the compaction event where the model call stores it before its response; the history
    then goes on from the event whose message is `first` (the first message kept). Its decisions:
    those of the summary's call (`written`), then `decision`."""
    events = ctx.invocation.session.events
    kept = next((e.id for e in reversed(events) if any(c.message is first for c in e.choices)), "")
    if not kept:  # not in the session (an agent tool's history): this call's request only
        return
    event = new_event(ctx.invocation_id, ctx.agent.name, ObjectType.COMPACTION, ctx.branch)
    event.choices = [new_choice(m) for m in summary]
    event.decisions = (*written, dataclasses.replace(decision, kept_from=kept))
    key = _PENDING + ctx.branch
    pending: list[Event] = ctx.invocation.get_state(key) or []
    ctx.invocation.set_state(key, [*pending, event])


def take_compactions(invocation: Invocation, branch: str) -> list[Event] | None:
    """The compaction events a `Compact` made for the model call on `branch`, to be stored before
    its response (adk/agents/model_call.py); None when there are none."""
    if not invocation._values:  # no state at all, so none pending: no key to build
        return None
    key = _PENDING + branch
    pending: list[Event] | None = invocation.get_state(key)
    if pending:
        invocation.delete_state(key)
    return pending or None
