"""Answers to a paused run: `Approve` / `Reject` a deferred call, `Reply` to a call's question, or
give a pending tool its result.

A tool call waits when a `before_tool` hook returns `Defer(reason)`, when its tool is marked
`requires_approval`, when the tool returns a `Pending` handle, or when it returns `Ask` (a
question for the person: an MCP server's elicitation). The run then ends with one
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
    "Ask",
    "Pending",
    "Reject",
    "Reply",
    "ToolResult",
    "answer_to",
    "check_answers",
    "questions",
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
class Ask:
    """Returned by a tool whose call needs a person's reply (an MCP server's elicitation): the run
    pauses with an approval request showing `message` and the reply's JSON `schema`, asked `by`
    (`mcp:<server>`), until `approvals={call_id: Reply(values)}` (or `Reject`) answers it."""

    message: str
    schema: dict[str, Any]
    by: str


@dataclass(frozen=True, slots=True)
class Reply:
    """The person's reply to a call's question (`Ask`): `values`, as its schema asks; None declines
    (what `Reject(reason)` of a question becomes). The call's `before_tool` chain runs again, then
    the tool goes on with the reply (`ToolContext.reply`)."""

    values: dict[str, Any] | None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result a pending call finally has (what `tool_results={call_id: value}` gives it)."""

    value: Any


Answer: TypeAlias = Approve | Reject | Reply | ToolResult
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


def questions(session: Session, waiting: Collection[str]) -> dict[str, dict[str, Any]]:
    """The schema of the reply each `waiting` call's latest approval request asks for, for the
    calls that ask a question (`Ask`) rather than for an approval."""
    from adk.callbacks.decisions import Deferred

    asked: dict[str, dict[str, Any]] = {}
    for event in reversed(session.events):
        if event.object != ObjectType.APPROVAL_REQUEST:
            continue
        for d in event.decisions:
            if type(d) is Deferred and d.call_id in waiting and d.call_id not in asked:
                asked[d.call_id] = d.schema if d.schema is not None else {}
    return {call_id: schema for call_id, schema in asked.items() if schema}


def answer_to(answer: object, schema: dict[str, Any] | None) -> Answer | str:
    """`answer` as the waiting call it is given to takes it, or why it cannot (one line, to follow
    the call's name).

    A call waiting for approval takes `Approve` or `Reject`; a call asking a question (its
    reply's `schema`, as shown to the person) takes a `Reply` whose values the schema accepts,
    or `Reject`, which declines it.
    """
    name = type(answer).__name__
    if schema is None:
        if type(answer) is Approve or type(answer) is Reject:
            return answer
        return f"must be Approve() or Reject(reason), not {name}"
    if type(answer) is Reject:
        return Reply(None, answer.reason)
    if type(answer) is not Reply or answer.values is None:
        return f"asks a question: it must be Reply(values) or Reject(reason), not {name}"
    wrong = _unfit(answer.values, schema)
    return answer if wrong is None else f"does not fit the question's schema: {wrong}"


def _unfit(values: object, schema: dict[str, Any]) -> str | None:
    """Why `values` do not fit the JSON `schema` (the first error, in one line), or None."""
    try:
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    except ImportError:  # a question comes from an MCP server, whose extra brings jsonschema
        return "jsonschema is needed to check it (pip install 'adk-callbacks[mcp]')"
    errors = sorted(Draft202012Validator(schema).iter_errors(values), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    first = errors[0]
    at = "/".join(str(p) for p in first.absolute_path)
    return f"{at}: {first.message}" if at else first.message
