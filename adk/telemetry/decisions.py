"""Callback decisions as `adk.decision` span events: what no GenAI convention names, and adk's own
value (a retry, a fallback, a halt, a replaced output, an approval, on the span of the call)."""

from __future__ import annotations

from typing import Any, assert_never

from opentelemetry.trace import Span

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
from adk.telemetry.names import ADK_HALTED, ADK_HALTED_BY, DECISION_EVENT

__all__ = ["record"]

_CALLBACK = "callback:"


def _who(by: str) -> dict[str, str]:
    """`adk.callback` and `adk.hook` of a `by` spelt `callback:<Name>.<hook>` (nothing for another `by`)."""
    if not by.startswith(_CALLBACK):
        return {}
    callback, _, hook = by.removeprefix(_CALLBACK).rpartition(".")
    return {"adk.callback": callback, "adk.hook": hook} if callback else {}


def record(span: Span, decision: Decision) -> None:
    """A decision as an `adk.decision` span event; a halt also marks the span `adk.halted`."""
    attributes: dict[str, Any] = {
        "adk.decision": decision.kind,
        "adk.by": decision.by,
        **_who(decision.by),
        "adk.target": decision.target,
    }
    match decision:
        case Halted():
            span.set_attributes({ADK_HALTED: True, ADK_HALTED_BY: decision.by})
        case Replaced():
            pass
        case Retried():
            attributes |= {
                "adk.attempt": decision.attempt,
                "adk.wait": decision.wait,
                "adk.error": decision.error,
            }
        case FellBack():
            attributes["adk.error"] = decision.error
            if decision.to is not None:
                attributes["adk.to"] = decision.to
        case Deferred() | Rejected():
            attributes |= {"adk.call_id": decision.call_id, "adk.reason": decision.reason}
        case Approved():
            attributes["adk.call_id"] = decision.call_id
        case Compacted():
            attributes |= {"adk.folded": decision.folded, "adk.tokens_saved": decision.tokens_saved}
        case Refused():
            attributes["adk.reason"] = decision.reason
        case Paced():
            attributes["adk.wait"] = decision.wait
        case BudgetWarning() | BudgetExceeded():
            attributes |= {
                "adk.budget": decision.budget,
                "adk.limit": decision.limit,
                "adk.spent": decision.spent,
            }
        case unreachable:
            assert_never(unreachable)
    span.add_event(DECISION_EVENT, attributes)
