"""A person's answer, over A2A, to the calls a paused run waits for: read from the client's next
message on an `input-required` task, and the calls described for the status that asks for it.

The answer is one of (docs/a2a.md):
- a text part `approve`, or `reject` / `reject: <reason>`: the same answer to every waiting call;
- a data part `{"approvals": {"<call id>": {"approved": true} | {"approved": false, "reason": "..."}}}`,
  which must answer every waiting call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from adk.approvals import Answer, Approve, Reject
from adk.callbacks.decisions import Deferred
from adk.callbacks.registry import short_repr
from adk.errors import ApprovalError
from adk.events import Event

__all__ = ["ANSWER_HELP", "Asked", "asked_calls", "parse_answers"]

ANSWER_HELP = (
    'answer with the text "approve" or "reject: <reason>" (every waiting call), or a data part'
    ' {"approvals": {"<call id>": {"approved": true} | {"approved": false, "reason": "..."}}}'
)


@dataclass(frozen=True, slots=True)
class Asked:
    """A call that waits for a person's approval, as the `input-required` status describes it."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    reason: str

    def as_data(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "reason": self.reason,
        }

    def line(self) -> str:
        return f"{self.tool}({short_repr(self.arguments)}) [call {self.call_id}]: {self.reason}"


def asked_calls(event: Event) -> list[Asked]:
    """The calls a `tool.approval_request` event asks approval for, from its `Deferred` decisions."""
    waiting = set(event.long_running_tool_ids)
    return [
        Asked(d.call_id, d.target.removeprefix("tool:"), dict(d.arguments), d.reason)
        for d in event.decisions
        if type(d) is Deferred and d.call_id in waiting
    ]


def parse_answers(texts: Sequence[str], data: Sequence[Any], waiting: Sequence[str]) -> dict[str, Answer]:
    """The answer each of the `waiting` call ids gets from a message's text and data parts.

    Raises `ApprovalError` (one line) for anything else: no answer, both kinds, an unknown call, a call left
    unanswered, a malformed entry.
    """
    entries = [d["approvals"] for d in data if isinstance(d, Mapping) and "approvals" in d]
    text = " ".join(t.strip() for t in texts if t.strip())
    if (entries and text) or len(entries) > 1:
        raise ApprovalError(f"the message holds more than one answer; {ANSWER_HELP}")
    if entries:
        answers = _per_call(entries[0])
    elif text:
        answer = _text_answer(text)
        answers = dict.fromkeys(waiting, answer)
    else:
        raise ApprovalError(f"the task waits for approval; {ANSWER_HELP}")
    unknown = [i for i in answers if i not in waiting]
    if unknown:
        raise ApprovalError(
            f"approvals.{unknown[0]}: no call of this task waits for approval under that id"
            f" (waiting: {', '.join(waiting)})"
        )
    missing = [i for i in waiting if i not in answers]
    if missing:
        raise ApprovalError(f"approvals: no answer for the waiting call(s) {', '.join(missing)}")
    return answers


def _text_answer(text: str) -> Answer:
    word, colon, reason = text.partition(":")
    match word.strip().lower():
        case "approve" if not colon:
            return Approve()
        case "reject":
            return Reject(reason.strip())
        case _:
            raise ApprovalError(f"{short_repr(text)} is not an answer; {ANSWER_HELP}")


def _per_call(entries: Any) -> dict[str, Answer]:
    if not isinstance(entries, Mapping):
        raise ApprovalError(f"approvals must be an object of call ids, not {short_repr(entries)}")
    answers: dict[str, Answer] = {}
    for call_id, entry in entries.items():
        ok = isinstance(entry, Mapping) and set(entry) <= {"approved", "reason"}
        approved = entry.get("approved") if ok else None
        reason = entry.get("reason", "") if ok else None
        if type(approved) is not bool or not isinstance(reason, str):
            raise ApprovalError(
                f'approvals.{call_id} must be {{"approved": true}} or {{"approved": false, "reason": "..."}},'
                f" not {short_repr(entry)}"
            )
        answers[str(call_id)] = Approve() if approved else Reject(reason)
    return answers
