"""`AuditLog`: a ready-made callback that logs every hook call on the `adk.audit` logger.

Register it first, on the `Runner`, to see every call before another callback changes or halts
it. One INFO record per hook call, as `key=value` fields (the same fields ride on the record as
`record.adk`, for structured handlers):

    invocation=… agent=assistant hook=before_model model=gpt attempt=1 outcome=call
    invocation=… agent=assistant hook=on_model_error model=gpt attempt=1 outcome=error:RateLimitError
    invocation=… agent=assistant hook=after_model model=gpt attempt=2 outcome=tool_calls:get_weather
    invocation=… agent=assistant hook=before_tool tool=get_weather tool_call_id=c1 attempt=1 outcome=call

Outcomes: `start` / `end` (agent), `call` (before a model or tool call), `text` or
`tool_calls:<names>` (a model's response), `result` (a tool's), `error:<type>` (a failed attempt;
only the type, since messages may carry personal data).

What callbacks decided is read from the run's events (`Invocation.observe`): one more record per
decision, naming the callback and hook that took it:

    invocation=… agent=a decision=halted by=callback:Guard.before_model target=model:gpt
    invocation=… agent=a decision=retried by=callback:RetryPolicy.on_model_error target=model:gpt
      attempt=2 wait=0.5 error=RateLimitError                                  (one line)
    invocation=… agent=a decision=fell_back by=callback:FallbackModels.on_model_error
      target=model:gpt to=model:backup error=AuthenticationError               (one line)
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, assert_never

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
)
from adk.callbacks.results import Cont, Raise
from adk.context import AgentContext, ModelContext, ToolContext

if TYPE_CHECKING:
    from adk.context import Invocation
    from adk.events import Event, LlmResponse, Message

__all__ = ["AuditLog"]


class AuditLog:
    """Logs each hook call: invocation id, agent, hook, model or tool, attempt and outcome."""

    def __init__(self, logger: logging.Logger | None = None, level: int = logging.INFO) -> None:
        self.logger = logger or logging.getLogger(__name__)  # adk.audit
        self.level = level
        self._key = f"adk.audit.{id(self)}"

    def _watch(self, invocation: Invocation) -> None:
        """Read the decisions of `invocation`'s events, once per run."""
        if invocation.get_state(self._key) is None:
            invocation.set_state(self._key, True)
            invocation.observe(self._event)

    def _event(self, event: Event) -> None:
        if not event.decisions or not self.logger.isEnabledFor(self.level):
            return
        for decision in event.fresh_decisions():
            fields: dict[str, Any] = {
                "invocation": event.invocation_id,
                "agent": event.author,
                "decision": decision.kind,
                "by": decision.by,
                "target": decision.target,
            }
            fields |= _fields(decision)
            self._emit(fields)

    def _log(self, ctx: AgentContext | ModelContext | ToolContext, hook: str, outcome: str) -> None:
        if not self.logger.isEnabledFor(self.level):
            return
        fields: dict[str, Any] = {"invocation": ctx.invocation_id, "agent": ctx.agent.name, "hook": hook}
        if isinstance(ctx, ModelContext):
            fields["model"] = ctx.model.name
            fields["attempt"] = ctx.attempt
        elif isinstance(ctx, ToolContext):
            fields["tool"] = ctx.tool.name
            fields["tool_call_id"] = ctx.tool_call_id
            fields["attempt"] = ctx.attempt
        fields["outcome"] = outcome
        self._emit(fields)

    def _emit(self, fields: dict[str, Any]) -> None:
        self.logger.log(self.level, " ".join(f"{k}={v}" for k, v in fields.items()), extra={"adk": fields})

    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        self._watch(ctx.invocation)
        self._log(ctx, "before_agent", "start")
        return Cont(ctx)

    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        self._log(ctx, "after_agent", "end")
        return output

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        self._log(ctx, "before_model", "call")
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        calls = response.tool_calls
        outcome = "tool_calls:" + ",".join(c.function.name for c in calls) if calls else "text"
        self._log(ctx, "after_model", outcome)
        return response

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        self._log(ctx, "on_model_error", f"error:{type(error).__name__}")
        return Raise(error)

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self._log(ctx, "before_tool", "call")
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        self._log(ctx, "after_tool", "result")
        return result

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Raise:
        self._log(ctx, "on_tool_error", f"error:{type(error).__name__}")
        return Raise(error)


def _fields(decision: Decision) -> dict[str, Any]:
    """What a decision adds to its log record beyond its kind, callback and target."""
    match decision:
        case Retried():
            return {"attempt": decision.attempt, "wait": decision.wait, "error": decision.error}
        case FellBack():
            return {"error": decision.error} | ({"to": decision.to} if decision.to is not None else {})
        case Deferred() | Rejected():
            return {"call_id": decision.call_id, "reason": decision.reason}
        case Approved():
            return {"call_id": decision.call_id}
        case Compacted():
            return {"folded": decision.folded, "tokens_saved": decision.tokens_saved}
        case Refused():
            return {"reason": decision.reason}
        case Paced():
            return {"wait": decision.wait}
        case BudgetWarning() | BudgetExceeded():
            return {"budget": decision.budget, "limit": decision.limit, "spent": decision.spent}
        case Halted() | Replaced():
            return {}
        case unreachable:
            assert_never(unreachable)
