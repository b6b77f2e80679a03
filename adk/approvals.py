"""Answers to a paused run: `Approve` / `Reject` a deferred call, or give a pending tool its result.

A tool call waits when a `before_tool` hook returns `Defer(reason)`, when its tool is marked
`requires_approval`, or when the tool returns a `Pending` handle. The run then ends with one
waiting event per call (`tool.approval_request` or `tool.pending`, the call id in
`long_running_tool_ids`) and a `runner.paused` event; `runner.run(user_id, session_id,
approvals=..., tool_results=...)` resumes the same invocation, in any process (docs/approvals.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from adk.events import ObjectType

if TYPE_CHECKING:
    from adk.sessions.base import Session

__all__ = [
    "Answer",
    "AnswerCheck",
    "Approve",
    "Pending",
    "Reject",
    "ToolResult",
    "check_answers",
    "waiting_calls",
]


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the deferred call: its `before_tool` chain again (a `Defer` now goes on), then the tool."""


@dataclass(frozen=True, slots=True)
class Reject:
    """Do not run the deferred call: the model receives `Rejected: <reason>` as the tool's result."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Pending:
    """Returned by a long-running tool: the run pauses until `tool_results` gives the call its result.

    `note` is for the tool's own bookkeeping and its tests (a job id, say); it is not stored:
    the call is known by its id (`ctx.tool_call_id`), which the `tool.pending` event names.
    """

    note: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result a pending call finally has (what `tool_results={call_id: value}` gives it)."""

    value: Any


Answer: TypeAlias = Approve | Reject | ToolResult
"""What a waiting call is answered with."""


_WAITING = frozenset({ObjectType.APPROVAL_REQUEST, ObjectType.CLIENT_PENDING, ObjectType.TOOL_PENDING})


def waiting_calls(session: Session) -> dict[str, tuple[str, str]]:
    """The calls the session's paused run waits for: call id -> (its waiting event's object, tool).

    The object says whose answer it waits for: a person's approval (`tool.approval_request`), the
    client's result (`tool.client_pending`), or the application's (`tool.pending`). A call
    answered at an earlier pause of the same invocation (its result stored) waits no more. Empty
    when the session's last run did not pause.
    """
    last = session.events[-1] if session.events else None
    if last is None or last.object != ObjectType.RUNNER_PAUSED:
        return {}
    events = [e for e in session.events if e.invocation_id == last.invocation_id]
    tools = {c.id: c.function.name for e in events for c in e.tool_calls}
    answered = {m.tool_call_id for e in events if (m := e.message) is not None and m.role == "tool"}
    return {
        i: (e.object, tools.get(i, ""))
        for e in events
        if e.object in _WAITING
        for i in e.long_running_tool_ids
        if i not in answered
    }


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """How a resume's answers meet the calls a paused run waits for (`check_answers`)."""

    misplaced_approvals: tuple[str, ...]
    """The calls given an approval that wait for none, in the order given."""
    misplaced_results: tuple[str, ...]
    """The calls given a result that wait for none from whoever answers, in the order given."""
    missing: tuple[str, ...]
    """The waiting calls no answer covers, in the order they wait."""


def check_answers(
    waiting: Mapping[str, tuple[str, str]],
    approvals: Collection[str],
    results: Collection[str],
    *,
    client: bool = False,
) -> AnswerCheck:
    """Which of the calls answered (`approvals`, `results`: call ids) wait for that answer, and
    which of the `waiting` calls (as `waiting_calls` gives them) no answer covers.

    The one rule the runner and AG-UI apply: an approval answers a call waiting for approval; a
    result answers a pending call, the application's (`tool.pending`) or the client's
    (`tool.client_pending`), but a `client` answers only the calls of its own tools. A paused run
    resumes only when every call it waits for is answered.
    """
    accepted = _FROM_CLIENT if client else _RESULTS
    return AnswerCheck(
        tuple(i for i in approvals if waiting.get(i, _NONE)[0] != ObjectType.APPROVAL_REQUEST),
        tuple(i for i in results if waiting.get(i, _NONE)[0] not in accepted),
        tuple(i for i in waiting if i not in approvals and i not in results),
    )


_RESULTS = frozenset({ObjectType.TOOL_PENDING, ObjectType.CLIENT_PENDING})
_FROM_CLIENT = frozenset({ObjectType.CLIENT_PENDING})
_NONE = ("", "")
