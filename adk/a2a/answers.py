"""A person's answer, over A2A, to the calls a paused run waits for: read from the client's next
message on an `input-required` task, and the calls described for the status that asks for it.

The answer is one of (docs/a2a.md):
- a text part `approve`, or `reject` / `reject: <reason>`: the same answer to every waiting call
  (`approve` answers no question: a question takes a reply);
- a data part `{"approvals": {"<call id>": {"approved": true} | {"approved": false, "reason": "..."}
  | {"reply": {...}}}}`, which must answer every waiting call; a call that asks a question (an MCP
  server's elicitation) takes a `reply` whose values fit the question's schema, or a rejection.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from adk.approvals import Answer, Approve, Reject, Reply, answer_to
from adk.callbacks.decisions import Deferred
from adk.callbacks.registry import short_repr
from adk.errors import ApprovalError
from adk.events import Event

__all__ = ["ANSWER_HELP", "Asked", "asked_calls", "parse_answers"]

ANSWER_HELP = (
    'answer with the text "approve" or "reject: <reason>" (every waiting call), or a data part'
    ' {"approvals": {"<call id>": {"approved": true} | {"approved": false, "reason": "..."}'
    ' | {"reply": {...}}}}'
)


@dataclass(frozen=True, slots=True)
class Asked:
    """A call that waits for a person, as the `input-required` status describes it: for their
    approval, or (with a `schema`) for their reply to the question `reason`, asked `by`."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    reason: str
    by: str = ""
    schema: dict[str, Any] | None = None

    def as_data(self) -> dict[str, Any]:
        data = {"call_id": self.call_id, "tool": self.tool, "arguments": self.arguments}
        if self.schema is None:
            return data | {"reason": self.reason}
        return data | {"asked_by": self.by, "question": self.reason, "schema": self.schema}

    def line(self) -> str:
        call = f"{self.tool}({short_repr(self.arguments)}) [call {self.call_id}]"
        if self.schema is None:
            return f"{call}: {self.reason}"
        schema = json.dumps(self.schema, separators=(",", ":"))
        return f"{call} asks ({self.by}): {self.reason} -- reply with values fitting the schema {schema}"


def asked_calls(event: Event) -> list[Asked]:
    """The calls a `tool.approval_request` event waits on, from its `Deferred` decisions."""
    waiting = set(event.long_running_tool_ids)
    return [
        Asked(d.call_id, d.target.removeprefix("tool:"), dict(d.arguments), d.reason, d.by, d.schema)
        for d in event.decisions
        if type(d) is Deferred and d.call_id in waiting
    ]


def parse_answers(
    texts: Sequence[str],
    data: Sequence[Any],
    waiting: Sequence[str],
    asks: Mapping[str, dict[str, Any]],
) -> dict[str, Answer]:
    """The answer each of the `waiting` call ids gets from a message's text and data parts, those
    that ask a question (`asks`: the schema of the reply, as the status showed it) a `Reply` that
    fits it, or a `Reject` (which declines it).

    Raises `ApprovalError` (one line) for anything else: no answer, both kinds, an unknown call, a call left
    unanswered, a malformed entry, an approval of a question, a reply that does not fit.
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
        raise ApprovalError(f"the task waits for an answer; {ANSWER_HELP}")
    unknown = [i for i in answers if i not in waiting]
    if unknown:
        raise ApprovalError(
            f"approvals.{unknown[0]}: no call of this task waits for an answer under that id"
            f" (waiting: {', '.join(waiting)})"
        )
    missing = [i for i in waiting if i not in answers]
    if missing:
        raise ApprovalError(f"approvals: no answer for the waiting call(s) {', '.join(missing)}")
    for call_id, answer in answers.items():
        _check(call_id, answer, asks.get(call_id))
    return answers


def _check(call_id: str, answer: Answer, schema: dict[str, Any] | None) -> None:
    """Refuse `answer` unless the call takes it (`adk.approvals.answer_to`, the rule of every
    surface), saying why in the terms of an A2A message."""
    taken = answer_to(answer, schema)
    if not isinstance(taken, str):
        return
    if schema is None:
        raise ApprovalError(
            f'approvals.{call_id} waits for approval, not a reply: {{"approved": true}} or'
            ' {"approved": false, "reason": "..."}'
        )
    if type(answer) is Reply:
        raise ApprovalError(f"approvals.{call_id}.reply {taken}")
    raise ApprovalError(
        f'approvals.{call_id} asks a question: answer it with a data part {{"approvals": {{"{call_id}":'
        ' {"reply": {...}}}} whose values fit its schema, or "reject: <reason>"'
    )


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
    return {str(call_id): _entry(str(call_id), entry) for call_id, entry in entries.items()}


def _entry(call_id: str, entry: Any) -> Answer:
    """One call's entry: an approval, a rejection, or a reply's values."""
    if isinstance(entry, Mapping) and set(entry) == {"reply"} and isinstance(entry["reply"], Mapping):
        return Reply(_numbers(entry["reply"]))
    ok = isinstance(entry, Mapping) and set(entry) <= {"approved", "reason"}
    approved = entry.get("approved") if ok else None
    reason = entry.get("reason", "") if ok else None
    if type(approved) is not bool or not isinstance(reason, str):
        raise ApprovalError(
            f'approvals.{call_id} must be {{"approved": true}}, {{"approved": false, "reason": "..."}}'
            f' or {{"reply": {{...}}}}, not {short_repr(entry)}'
        )
    return Approve() if approved else Reject(reason)


def _numbers(values: Any) -> Any:
    """`values` with each whole float an int: a data part's numbers are all floats (a protobuf
    `Struct`), so a reply's `7` arrives as `7.0`, which the person did not write."""
    if isinstance(values, Mapping):
        return {str(k): _numbers(v) for k, v in values.items()}
    if isinstance(values, list):
        return [_numbers(v) for v in values]
    if isinstance(values, float) and values.is_integer():
        return int(values)
    return values
