"""An AG-UI request read and checked: its body (bounded, JSON only), its `RunAgentInput`, who sent
it, and what it answers (a user message, or answers to the calls a paused run waits for).

Every refusal is a `RequestRefused`: an HTTP status and one line naming what was wrong and where (as
the client wrote it: `messages.2.content.0`, `resume.1.payload`), which the endpoint sends as
`{"detail": ...}` before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from adk.agui.checks import check_ids
from adk.approvals import Approve, Reject, Reply, answer_to, check_answers, questions, waiting_calls
from adk.callbacks.registry import short_repr
from adk.errors import RequestRefused
from adk.events import ObjectType
from adk.serving import strict_json

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry, RunAgentInput
    from starlette.types import Receive

    from adk.approvals import Answer, AnswerCheck
    from adk.events import ToolDeclaration
    from adk.sessions.base import Session

__all__ = [
    "Answers",
    "Results",
    "answers_of",
    "client_tools",
    "parse_body",
    "read_body",
]


async def read_body(headers: Mapping[str, str], receive: Receive, limit: int) -> bytes:
    """The request body, refused (413) as soon as it is known to exceed `limit` bytes."""
    from starlette.requests import ClientDisconnect

    too_large = RequestRefused(413, f"the request body is larger than the limit of {limit} bytes")
    declared = headers.get("content-length", "")
    if declared.isdigit() and (len(declared) > len(str(limit)) or int(declared) > limit):
        raise too_large
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect
        body += message.get("body", b"")
        if len(body) > limit:  # a chunked body, or one longer than its Content-Length said
            raise too_large
        if not message.get("more_body", False):
            return bytes(body)


def _text(content: Any, where: str) -> str:
    """A message's content as text: a string, or its text parts joined (other parts are refused)."""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for j, part in enumerate(content):
        if part.type != "text":
            raise RequestRefused(
                422, f"{where}.content.{j}: only text parts are supported, not {part.type!r}"
            )
        texts.append(part.text)
    return "".join(texts)


Results: TypeAlias = "list[tuple[int, str, str]]"
"""The tool results that end a request's messages: (position, tool call id, content)."""


def parse_body(body: bytes) -> tuple[RunAgentInput, str | Results]:
    """The validated `RunAgentInput`, and what it answers: the text of its last user message, or
    the tool results its messages end with."""
    from ag_ui.core import RunAgentInput, ToolMessage
    from pydantic import ValidationError

    try:
        data = strict_json(body)
    except ValueError as e:
        raise RequestRefused(400, f"the request body is not JSON adk accepts: {e}") from None
    try:
        run = RunAgentInput.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(map(str, err['loc'])) or 'body'}: {err['msg']}" for err in e.errors(include_url=False)
        )
        raise RequestRefused(422, f"invalid RunAgentInput: {problems}") from None
    if run.state is not None and not isinstance(run.state, dict):
        raise RequestRefused(422, f"state: must be a JSON object, not {type(run.state).__name__}")
    try:
        check_ids(run)
    except ValueError as e:
        raise RequestRefused(422, str(e)) from None
    messages = run.messages
    results: Results = []
    i = len(messages) - 1
    while i >= 0 and isinstance(tool := messages[i], ToolMessage):
        content = f"Error: {tool.error}" if tool.error else _text(tool.content, f"messages.{i}")
        results.insert(0, (i, tool.tool_call_id, content))
        i -= 1
    if results or run.resume:  # resume entries answer interrupts: no user message to answer
        return run, results
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return run, _text(messages[i].content, f"messages.{i}")
    raise RequestRefused(422, "messages: there is no user message to answer")


Answers: TypeAlias = "tuple[dict[str, Answer], dict[str, str]]"
"""What a request answers a paused run with: approvals, and results of the client's own tools."""


def answers_of(
    answer: str | Results, resume: Sequence[ResumeEntry], session: Session | None
) -> str | Answers:
    """What the run answers: the user's text, or the answers to the calls the thread waits for:
    resume entries for its interrupts (calls waiting for approval), results for the calls of the
    client's own tools (the client sends its whole history: results of calls not waiting are in
    it already).

    A result for a call of the agent's own tools (one waiting for the application) is refused,
    and so is an answer to a call that waits for no such answer (`adk.approvals.check_answers`).
    """
    if isinstance(answer, str):
        return answer
    waiting = waiting_calls(session) if session is not None else {}
    given = [call_id for _, call_id, _ in answer if call_id in waiting]
    check = check_answers(waiting, [e.interrupt_id for e in resume], given, client=True)
    asks = questions(session, [e.interrupt_id for e in resume]) if session is not None else {}
    approvals = _approvals(resume, check, asks)
    if check.misplaced_results:
        raise _misplaced_result(answer, check.misplaced_results[0], waiting)
    results = {call_id: content for _, call_id, content in answer if call_id in waiting}
    if not approvals and not results:
        at, call_id, _ = answer[-1]
        raise RequestRefused(
            422, f"messages.{at}: a result for tool call {call_id!r}, which is not waiting for one"
        )
    if check.missing:
        raise RequestRefused(
            422,
            "the paused run waits for an answer to every call; missing: "
            + ", ".join(_missing(i, *waiting[i]) for i in check.missing),
        )
    return approvals, results


def _approvals(
    resume: Sequence[ResumeEntry], check: AnswerCheck, asks: Mapping[str, dict[str, Any]]
) -> dict[str, Answer]:
    """The resume entries' answers, by interrupt: each to an interrupt open on the thread, once;
    an interrupt that asks a question (`asks`: its schema) takes a reply that fits it."""
    approvals: dict[str, Answer] = {}
    for at, entry in enumerate(resume):
        where, call_id = f"resume.{at}", entry.interrupt_id
        if call_id in check.misplaced_approvals:
            raise RequestRefused(422, f"{where}: {call_id!r} is no interrupt open on this thread")
        if call_id in approvals:
            raise RequestRefused(422, f"{where}: a second answer to interrupt {call_id!r}")
        answer = _approval(entry, f"{where}.payload")
        taken = answer_to(answer, asks.get(call_id))
        if isinstance(taken, str):
            if type(answer) is Approve:
                taken = (
                    'asks a question: answer {"approved": true, "content": {...}} as its responseSchema says'
                )
            raise RequestRefused(422, f"{where}.payload: interrupt {call_id!r} {taken}")
        approvals[call_id] = taken
    return approvals


def _misplaced_result(
    answer: Results, call_id: str, waiting: Mapping[str, tuple[str, str]]
) -> RequestRefused:
    """The refusal of a client's result for a waiting call that a client does not answer."""
    at = next(at for at, i, _ in answer if i == call_id)
    kind, tool = waiting[call_id]
    if kind == ObjectType.APPROVAL_REQUEST:
        return RequestRefused(
            422,
            f"messages.{at}: tool call {call_id!r} waits for approval: answer its interrupt with a"
            f' resume entry {{"interruptId": "{call_id}", "status": "resolved", "payload":'
            ' {"approved": true}}',
        )
    return RequestRefused(
        422, f"messages.{at}: tool call {call_id!r} of {tool!r} waits for the server's result, not a client's"
    )


def _missing(call_id: str, kind: str, tool: str) -> str:
    """A waiting call no answer covers, as the refusal names it."""
    if kind == ObjectType.APPROVAL_REQUEST:
        return f"interrupt {call_id!r}"
    if kind == ObjectType.CLIENT_PENDING:
        return repr(call_id)
    # no client can give it: say so, or the client is asked for what it cannot send
    return f"{call_id!r} (of {tool!r}: the server's, so only the application can resume this run)"


def _approval(entry: ResumeEntry, where: str) -> Answer:
    """A person's answer to an approval interrupt: approved, or rejected with a reason; an
    abandoned interrupt (status `cancelled`) is a rejection, so the call never runs."""
    if entry.status == "cancelled":
        return Reject("cancelled")
    data = entry.payload
    if isinstance(data, dict) and set(data) <= {"approved", "reason"} and type(data.get("approved")) is bool:
        reason = data.get("reason", "")
        if isinstance(reason, str):
            return Approve() if data["approved"] else Reject(reason)
    if isinstance(data, dict) and set(data) == {"approved", "content"} and data["approved"] is True:
        content = data["content"]
        if isinstance(content, dict):
            return Reply(content)  # to an interrupt asking a question
    raise RequestRefused(
        422,
        f'{where} must be {{"approved": true}} or {{"approved": false, "reason": "..."}},'
        f" not {short_repr(data)}",
    )


def client_tools(run: RunAgentInput) -> tuple[ToolDeclaration, ...]:
    """The tools the client offers, as declarations for the model."""
    from adk.events import ToolDeclaration

    tools: dict[str, ToolDeclaration] = {}
    for i, tool in enumerate(run.tools or ()):
        if tool.name in tools:
            raise RequestRefused(422, f"tools.{i}: a second tool named {tool.name!r}")
        parameters = {"type": "object", "properties": {}} if tool.parameters is None else tool.parameters
        if not isinstance(parameters, dict):
            raise RequestRefused(422, f"tools.{i}.parameters: must be a JSON schema object")
        tools[tool.name] = ToolDeclaration(
            name=tool.name, description=tool.description, parameters=parameters
        )
    return tuple(tools.values())
