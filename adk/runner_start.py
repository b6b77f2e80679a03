"""What a run starts from: a new message, answers to a paused invocation's calls, or the
session's last invocation if it was cut short (`runner.resume()`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adk.approvals import Answer, ToolResult, answer_to, check_answers, questions, waiting_calls
from adk.errors import ApprovalError
from adk.events import Message, ObjectType
from adk.sessions.base import Session

__all__ = ["ENDED", "answers_to_paused", "asked", "script_args", "unfinished", "user_message"]

ENDED = frozenset({ObjectType.RUNNER_COMPLETION, ObjectType.ERROR, ObjectType.RUNNER_PAUSED})
"""The objects of the event that ends an invocation: nothing after it is left to resume (a paused
one resumes only when its waiting calls are answered)."""


def unfinished(session: Session) -> tuple[str, Message] | None:
    """The id and user message of the session's last invocation, if it was cut short."""
    last = session.events[-1] if session.events else None
    if last is None or last.object in ENDED:
        return None
    return last.invocation_id, user_message(session, last.invocation_id)


def user_message(session: Session, invocation_id: str) -> Message:
    for event in session.events:
        if event.invocation_id == invocation_id and event.author == "user" and event.message:
            return event.message
    return Message.user("")


def answers_to_paused(
    session: Session, approvals: Mapping[str, Answer], results: Mapping[str, Any]
) -> tuple[str, dict[str, Answer]]:
    """The paused invocation of `session` and the answer to each of its waiting calls.

    Raises `ApprovalError`, naming the session and the calls, unless the answers cover exactly
    the calls that wait: approvals for those waiting for approval, results for pending ones.
    """
    where = f"session {session.id!r} of user {session.user_id!r}"
    last = session.events[-1] if session.events else None
    given = ", ".join(repr(i) for i in [*approvals, *results])
    if last is None or last.object != ObjectType.RUNNER_PAUSED:
        raise ApprovalError(f"{where} has no paused run: no call waits, so {given} cannot be answered")
    waiting = waiting_calls(session)
    check = check_answers(waiting, approvals, results)  # the rule AG-UI applies too
    for misplaced, what in ((check.misplaced_approvals, "approval"), (check.misplaced_results, "a result")):
        if misplaced:
            names = ", ".join(map(repr, waiting))
            raise ApprovalError(
                f"call {misplaced[0]!r} is not waiting for {what} in {where} (waiting: {names})"
            )
    answers: dict[str, Answer] = {}
    asks = questions(session, approvals)  # what the person was shown: an answer must fit it
    for call_id, answer in approvals.items():
        taken = answer_to(answer, asks.get(call_id))
        if isinstance(taken, str):
            raise ApprovalError(f"approvals[{call_id!r}] for {where} {taken}")
        answers[call_id] = taken
    answers.update((call_id, ToolResult(value)) for call_id, value in results.items())
    if check.missing:
        raise ApprovalError(
            f"{where} waits for answers to every paused call; missing: {', '.join(map(repr, check.missing))}"
        )
    return last.invocation_id, answers


def asked(
    message: str | Message | None,
    agent: str | None,
    approvals: Mapping[str, Answer] | None,
    tool_results: Mapping[str, Any] | None,
) -> tuple[Message | None, tuple[Mapping[str, Answer], Mapping[str, Any]] | None]:
    """What `runner.run` is asked: a new message, or answers to a paused run's calls (not both)."""
    if approvals is None and tool_results is None:
        if message is None:
            raise ValueError("runner.run: give a message, or approvals / tool_results to resume a paused run")
        return Message.user(message) if isinstance(message, str) else message, None
    if message is not None:
        raise ValueError("runner.run: give a message, or approvals / tool_results, not both")
    if agent is not None:
        raise ValueError(
            f"runner.run: agent={agent!r} names who takes a new message; answers resume the"
            " paused run where it stopped"
        )
    return None, (approvals or {}, tool_results or {})


def script_args(asked: tuple[str | Message, ...]) -> tuple[str, str, str | Message]:
    """`run_sync`'s arguments: a message alone (the default user and session), or all three."""
    match asked:
        case (message,):
            return "user", "default", message
        case (str() as user_id, str() as session_id, message):
            return user_id, session_id, message
        case _:
            raise TypeError(
                "run_sync takes a message, or user_id, session_id and message;"
                f" got {len(asked)} positional argument(s)"
            )
