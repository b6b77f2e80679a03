"""What a callback decided, as data on the events it shaped: stored, and round-tripped through JSON.

Every decision names the callback and hook that took it (`by`, spelt as an error's `where`:
`callback:Guard.before_model`, made by `registry.decided_by`) and the call it was about
(`target`: `model:<name>`, `tool:<name>` or `agent:<name>`). Displays, tracing, audit logs and
AG-UI read these from events.

| decision | when |
|---|---|
| `Halted` | a `before_*` hook returned `Halt`: its value stands in for the call |
| `Replaced` | an `after_*` hook returned another object than the one it was given |
| `Retried` | an `on_*_error` hook's `Retry` was honoured: `attempt` of `target` after `wait` seconds |
| `FellBack` | an `on_*_error` hook fell back: to another model or tool (`to`), or to a value (`to` is None) |
| `Deferred` | a `before_tool` hook returned `Defer` (or the tool requires approval): the call waits |
| `Approved` | the application approved a waiting call (`runner.run(approvals=...)`): it ran |
| `Rejected` | the application rejected a waiting call: the model got the rejection as its result |
| `Compacted` | a `Compact` folded the older turns of a conversation before a model call (docs/context.md) |
| `Paced` | a `RateLimit` made the call wait `wait` seconds for capacity (or a server's Retry-After) |
| `Refused` | an `after_model` hook raised `ResponseRejected`: the model's answer was not used, for `reason` |
| `BudgetWarning` | a `Budget` (adk.limits) spent `warn_at` of a limit, or counted a reservation as spent |
| `BudgetExceeded` | a `Budget` refused a call it could not afford: `limit`, `allowed`, `spent` |
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

__all__ = [
    "APPROVALS",
    "Approved",
    "BudgetExceeded",
    "BudgetWarning",
    "Compacted",
    "Decision",
    "Deferred",
    "FellBack",
    "Halted",
    "Paced",
    "Refused",
    "Rejected",
    "Replaced",
    "Retried",
    "carried",
    "carry",
]

E = TypeVar("E", bound=BaseException)


@dataclass(frozen=True, slots=True)
class Halted:
    """A `before_*` hook answered instead of the call (`Halt`)."""

    by: str
    target: str
    kind: Literal["halted"] = "halted"


@dataclass(frozen=True, slots=True)
class Replaced:
    """An `after_*` hook returned another output than the one it was given."""

    by: str
    target: str
    kind: Literal["replaced"] = "replaced"


@dataclass(frozen=True, slots=True)
class Retried:
    """A `Retry` was honoured: attempt number `attempt` of `target` followed, after `wait` seconds."""

    by: str
    target: str
    attempt: int
    wait: float
    error: str
    """The type of the error recovered from."""
    message: str = ""
    """That error's message."""
    kind: Literal["retried"] = "retried"


@dataclass(frozen=True, slots=True)
class FellBack:
    """`target` failed and something else stood in: the model or tool `to`, or a value (`to` None)."""

    by: str
    target: str
    to: str | None
    error: str
    """The type of the error recovered from."""
    message: str = ""
    """That error's message."""
    kind: Literal["fell_back"] = "fell_back"


@dataclass(frozen=True, slots=True)
class Deferred:
    """The call `call_id` to `target` with `arguments` waits for a person's approval, for `reason`
    (or, with a `schema`, for their reply to the question `reason`).

    `by` is the callback's hook, `tool:<name>` for a tool marked `requires_approval`, or
    `mcp:<server>` for an MCP server's question.
    """

    by: str
    target: str
    call_id: str
    arguments: dict[str, Any]
    reason: str
    schema: dict[str, Any] | None = None
    """For a question (an MCP server's elicitation, `adk.approvals.Ask`): the JSON schema of the
    reply the person gives (`Reply`), `reason` being the question; None for an approval."""
    kind: Literal["deferred"] = "deferred"


APPROVALS = "approvals"
"""The `by` of an `Approved` or `Rejected` decision: the answer given to `runner.run(approvals=...)`."""


@dataclass(frozen=True, slots=True)
class Approved:
    """The waiting call `call_id` to `target` was approved (`by` is `approvals`): it ran."""

    by: str
    target: str
    call_id: str
    kind: Literal["approved"] = "approved"


@dataclass(frozen=True, slots=True)
class Rejected:
    """The waiting call `call_id` to `target` was rejected for `reason`: it did not run."""

    by: str
    target: str
    call_id: str
    reason: str
    kind: Literal["rejected"] = "rejected"


@dataclass(frozen=True, slots=True)
class Compacted:
    """The first `folded` messages of the history before a call to `target` were folded (into a
    summary, or dropped), saving `tokens_saved` tokens; the history goes on from the event
    `kept_from` (none: from the compaction on). Carried by the `compaction` event that stores it."""

    by: str
    target: str
    folded: int
    tokens_saved: int
    kept_from: str = ""
    kind: Literal["compacted"] = "compacted"


@dataclass(frozen=True, slots=True)
class Refused:
    """The answer of `target` (a model) came, and the `after_model` hook `by` refused it for
    `reason` (`ResponseRejected`): `on_model_error` judged it like a failed call."""

    by: str
    target: str
    reason: str
    kind: Literal["refused"] = "refused"


@dataclass(frozen=True, slots=True)
class Paced:
    """`by` (a `RateLimit`) made the call to `target` wait `wait` seconds before it was sent."""

    by: str
    target: str
    wait: float
    kind: Literal["paced"] = "paced"


@dataclass(frozen=True, slots=True)
class BudgetWarning:
    """The budget `budget` has spent `spent` of its limit `limit` (`allowed`): at least its
    `warn_at`, or (with a `note`) a model reported no usage and its reservation counts as spent."""

    by: str
    target: str
    budget: str
    limit: str
    allowed: float
    spent: float
    note: str = ""
    kind: Literal["budget_warning"] = "budget_warning"


@dataclass(frozen=True, slots=True)
class BudgetExceeded:
    """The budget `budget` refused the call to `target`: its limit `limit` (`allowed`) had `spent`
    spent or reserved, and the call could not be afforded at all."""

    by: str
    target: str
    budget: str
    limit: str
    allowed: float
    spent: float
    kind: Literal["budget_exceeded"] = "budget_exceeded"


Decision: TypeAlias = (
    Halted
    | Replaced
    | Retried
    | FellBack
    | Deferred
    | Approved
    | Rejected
    | Compacted
    | Refused
    | Paced
    | BudgetWarning
    | BudgetExceeded
)
"""One callback decision; `kind` tells which (and tags it in JSON, where it picks the class)."""


def carry(error: E, decisions: Sequence[Decision] | None) -> E:
    """Mark `error`, which ends its envelope, with the decisions taken there (for its error event)."""
    error._adk_decisions = tuple(decisions or ())  # type: ignore[attr-defined]  # a private mark
    return error


def carried(error: BaseException) -> tuple[Decision, ...]:
    """The decisions `carry` marked `error` with; none if it was not marked."""
    marked = getattr(error, "_adk_decisions", ())
    return marked if isinstance(marked, tuple) else ()
