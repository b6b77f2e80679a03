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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

__all__ = ["Decision", "Deferred", "FellBack", "Halted", "Replaced", "Retried", "carried", "carry"]

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
    """The call `call_id` to `target` with `arguments` waits for a person's approval, for `reason`.

    `by` is the callback's hook, or `tool:<name>` for a tool marked `requires_approval`.
    """

    by: str
    target: str
    call_id: str
    arguments: dict[str, Any]
    reason: str
    kind: Literal["deferred"] = "deferred"


Decision: TypeAlias = Halted | Replaced | Retried | FellBack | Deferred
"""One callback decision; `kind` tells which (and tags it in JSON, where it picks the class)."""


def carry(error: E, decisions: Sequence[Decision] | None) -> E:
    """Mark `error`, which ends its envelope, with the decisions taken there (for its error event)."""
    error._adk_decisions = tuple(decisions or ())  # type: ignore[attr-defined]  # a private mark
    return error


def carried(error: BaseException) -> tuple[Decision, ...]:
    """The decisions `carry` marked `error` with; none if it was not marked."""
    marked = getattr(error, "_adk_decisions", ())
    return marked if isinstance(marked, tuple) else ()
