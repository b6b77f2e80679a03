"""AG-UI: adk events translated to the AG-UI protocol, with translate callbacks, served over SSE.

An optional extra (`adk[agui]`): `ag-ui-protocol` gives the event types and the SSE encoder,
starlette and uvicorn the ASGI stack. They are imported only when a translator, an app or a
server is made, so importing this module (and `adk`) stays cheap without them.

- `AguiTranslator` turns one run's adk events into AG-UI events (see its docstring for the map).
- `before_translate(event, ctx)` / `after_translate(agui_event, ctx)` hooks return a replacement
  or None (keep); the first replacement wins (the last, with `continue_on_response`); a hook that
  raises or returns something else stops the run with a `CallbackError` naming it (unless
  `continue_on_error`).
- `create_app(runner)` is a Starlette app whose POST endpoint takes a `RunAgentInput` and
  streams the run as SSE: threads scoped to the user an `identity` function names, bodies
  limited, JSON only, CORS for the origins given, frontend tools and shared state;
  `serve(agent_or_runner)` runs it with uvicorn, on loopback unless there is an identity.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

from adk.approvals import waiting_calls
from adk.callbacks.chain import run_chain
from adk.callbacks.decisions import Deferred
from adk.callbacks.registry import REPLACE, Callbacks, Hook, HookImpl, declare_hooks, short_repr
from adk.errors import CallbackError, SessionBusyError
from adk.events import ErrorInfo, Event, ObjectType, ToolCall, new_id

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent, Interrupt, ResumeEntry, RunAgentInput, RunFinishedOutcome
    from ag_ui.core import Message as AguiMessage
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.types import Receive, Scope, Send

    from adk.agents.base import BaseAgent
    from adk.approvals import Answer
    from adk.events import ToolDeclaration
    from adk.runner import Runner
    from adk.sessions.base import Session

__all__ = [
    "APPROVAL_SCHEMA",
    "MAX_BODY",
    "RECONNECT_WAIT",
    "AfterTranslate",
    "AguiTranslator",
    "BeforeTranslate",
    "Identity",
    "TranslateCallback",
    "TranslateContext",
    "create_app",
    "is_loopback",
    "serve",
]

log = logging.getLogger(__name__)

V = TypeVar("V")


def _agui_event() -> type:
    from ag_ui.core import BaseEvent

    return BaseEvent


BEFORE_TRANSLATE, AFTER_TRANSLATE = declare_hooks(
    Hook("before_translate", REPLACE, Event, "an Event or None"),
    Hook("after_translate", REPLACE, _agui_event, "an AG-UI event or None"),
)
"""The translate hooks, a family of their own: replace chains run by the callback core."""


@dataclass(frozen=True, slots=True)
class TranslateContext:
    """What the translate hooks know about the run they translate."""

    thread_id: str
    """The AG-UI thread: the adk session id."""
    run_id: str
    """The AG-UI run: the adk invocation id, unless the translator is used on its own."""
    invocation_id: str
    user_id: str = ""
    input: RunAgentInput | None = None
    """The request that started the run (its `forwarded_props`, `context`, ...), when served."""


class BeforeTranslate(Protocol):
    """Before an adk event is translated: return a replacement event, or None to keep it."""

    def before_translate(
        self, event: Event, ctx: TranslateContext, /
    ) -> Event | Awaitable[Event | None] | None: ...


class AfterTranslate(Protocol):
    """After an AG-UI event is made, before it is sent: return a replacement, or None to keep it."""

    def after_translate(
        self, event: BaseEvent, ctx: TranslateContext, /
    ) -> BaseEvent | Awaitable[BaseEvent | None] | None: ...


TranslateCallback: TypeAlias = BeforeTranslate | AfterTranslate | type[BeforeTranslate] | type[AfterTranslate]
"""What may be registered as a translate callback: an instance or module with a hook, or such a class."""


@dataclass(slots=True)
class _Streaming:
    """What a branch's model response has streamed so far: its text message and its tool calls."""

    name: str | None
    text_id: str | None = None
    """The text message, once started; it ends when the response completes."""
    text: list[str] = field(default_factory=list)
    calls: dict[str, _StreamedCall] = field(default_factory=dict)
    """The tool calls started, by id; they end when the response completes."""


@dataclass(slots=True)
class _StreamedCall:
    """A tool call whose START went out and whose END has not."""

    parent: str | None
    """The message the call was attributed to when it started (None: the client makes it one)."""
    arguments: list[str] = field(default_factory=list)


class AguiTranslator:
    """Translates one run's adk events into AG-UI events; holds that run's state.

    `start(state)` gives RUN_STARTED and a STATE_SNAPSHOT; then, per adk event:

    - streamed chunks (`chat.completion.chunk`): TEXT_MESSAGE_START on the first text of a
      branch's response, then TEXT_MESSAGE_CONTENT per delta; TOOL_CALL_START on a tool call's
      first piece, then TOOL_CALL_ARGS per piece of its arguments;
    - a complete assistant message (`chat.completion`): the END of what was streamed, else
      START / CONTENT / END with the whole text and START / ARGS / END per tool call. A tool call
      names as its `parentMessageId` the response's text message, if one was started before it,
      else none. If the complete message is not what was streamed (an `after_model` callback
      replaced it), a MESSAGES_SNAPSHOT corrects the client's copy;
    - `tool.response`: TOOL_CALL_RESULT;
    - `attempt.discarded`: what the attempt streamed is ended and a MESSAGES_SNAPSHOT without it
      is sent, so the client drops it; the retry streams into fresh messages;
    - `tool.approval_request`: per call waiting for approval, an AG-UI interrupt (its id the
      call's, `reason` "approval", `message` why, `metadata` the tool and arguments);
      `tool.client_pending`: its call is one the client must answer (`pendingToolCallIds`);
    - `error`: RUN_ERROR; `runner.completion` or `runner.paused`: END for anything open, then
      RUN_FINISHED: with the interrupt outcome if calls wait for approval, else a success whose
      outcome names the client tool calls left waiting (`pendingToolCallIds`), if any;
    - `actions.state_delta` on any event but the user's own (the client sent it): STATE_DELTA
      (JSON Patch `add` / `remove` per key);
    - each callback decision (`Event.fresh_decisions()`: a halt, a replaced output, a retry, a
      fallback, told as it happens): a CUSTOM event named `adk.decision` whose value is the
      decision's fields, before the event's own translation;
    - with `details`, every complete adk event also goes out whole, first: a CUSTOM event named
      `adk.event` whose value is the event's JSON (for a client that shows every step, such as
      the `adk web` page).

    Nothing follows RUN_FINISHED or RUN_ERROR. Message ids are minted here; tool call ids are
    adk's. The messages of the snapshots are those the client sent (`messages`) followed by
    those this translator made; replacements made by `after_translate` are not tracked.
    """

    __slots__ = (
        "_after",
        "_before",
        "_continue_on_error",
        "_continue_on_response",
        "_details",
        "_done",
        "_interrupts",
        "_keys",
        "_messages",
        "_open",
        "_sent",
        "_waiting",
        "ctx",
    )

    def __init__(
        self,
        ctx: TranslateContext,
        callbacks: Callbacks | Iterable[TranslateCallback] = (),
        *,
        messages: Sequence[AguiMessage] = (),
        continue_on_error: bool = False,
        continue_on_response: bool = False,
        details: bool = False,
    ) -> None:
        callbacks = Callbacks.of(callbacks)
        self.ctx = ctx
        self._details = details
        self._before = callbacks.get(BEFORE_TRANSLATE)
        self._after = callbacks.get(AFTER_TRANSLATE)
        self._continue_on_error = continue_on_error
        self._continue_on_response = continue_on_response
        self._messages: list[AguiMessage] = list(messages)
        self._open: dict[str, _Streaming] = {}
        self._keys: set[str] = set()
        self._waiting: list[str] = []
        self._interrupts: list[Interrupt] = []
        self._sent = {m.tool_call_id for m in self._messages if m.role == "tool"}
        """The calls whose results the client sent: not echoed back."""
        self._done = False

    @property
    def done(self) -> bool:
        """Whether the run's last event (RUN_FINISHED or RUN_ERROR) was made."""
        return self._done

    async def start(self, state: Mapping[str, Any] | None = None) -> list[BaseEvent]:
        """RUN_STARTED, then a STATE_SNAPSHOT of the session's `state` if given."""
        from ag_ui.core import PROTOCOL_VERSION, RunStartedEvent

        ctx = self.ctx
        run_started = RunStartedEvent(
            thread_id=ctx.thread_id, run_id=ctx.run_id, protocol_version=PROTOCOL_VERSION
        )
        out = await self._after_hooks([run_started])
        return out if state is None else out + await self.snapshot(state)

    async def snapshot(self, state: Mapping[str, Any]) -> list[BaseEvent]:
        """A STATE_SNAPSHOT of the session's `state`; the deltas that follow apply to it."""
        from ag_ui.core import StateSnapshotEvent

        self._keys = set(state)
        return await self._after_hooks([StateSnapshotEvent(snapshot=dict(state))])

    async def translate(self, event: Event) -> list[BaseEvent]:
        """The AG-UI events for one adk event (often none, never any after the run ended)."""
        if self._done:
            return []
        if self._before:
            event = await self._replace(self._before, BEFORE_TRANSLATE, event)
        out: list[BaseEvent] = []
        if self._details and not event.is_partial:
            from ag_ui.core import CustomEvent

            out.append(CustomEvent(name="adk.event", value=event.model_dump(mode="json")))
        if event.decisions:
            _decisions(event, out)
        match event.object:
            case ObjectType.CHAT_COMPLETION_CHUNK:
                self._chunk(event, out)
            case ObjectType.CHAT_COMPLETION:
                self._complete(event, out)
            case ObjectType.TOOL_RESPONSE:
                self._tool_result(event, out)
            case ObjectType.ATTEMPT_DISCARDED:
                self._discard(event, out)
            case ObjectType.CLIENT_PENDING:
                self._waiting += event.long_running_tool_ids
            case ObjectType.APPROVAL_REQUEST:
                self._approval_requests(event)
        if event.author != "user":
            self._state_delta(event, out)  # after the event's own translation, before the run's end
        if event.object == ObjectType.ERROR:
            self._end(out, event.error or ErrorInfo(type="Error", message="the run failed"))
        elif event.object in _RUN_ENDS:
            self._end(out, None)
        return await self._after_hooks(out)

    async def finish(self) -> list[BaseEvent]:
        """The events that end a run whose adk events stopped without a completion or an error."""
        if self._done:
            return []
        out: list[BaseEvent] = []
        self._end(out, None)
        return await self._after_hooks(out)

    async def fail(self, error: BaseException) -> list[BaseEvent]:
        """RUN_ERROR for an exception that ended the run (none if the run had already ended).

        If an `after_translate` hook fails on it, the RUN_ERROR names that failure instead.
        """
        if self._done:
            return []
        out: list[BaseEvent] = []
        self._end(out, ErrorInfo.of(error))
        try:
            return await self._after_hooks(out)
        except CallbackError as hook_error:
            return [_run_error(ErrorInfo.of(hook_error))]

    async def _after_hooks(self, out: list[BaseEvent]) -> list[BaseEvent]:
        if not self._after:
            return out
        after = self._after
        return [await self._replace(after, AFTER_TRANSLATE, e) for e in out]

    def _replace(self, impls: tuple[HookImpl, ...], hook: Hook, value: V) -> Coroutine[Any, Any, V]:
        """Offer `value` to each hook: the first replacement wins (the last, when continuing on response)."""
        return run_chain(
            impls,
            hook,
            value,
            self.ctx,
            continue_on_error=self._continue_on_error,
            continue_on_response=self._continue_on_response,
        )

    def _chunk(self, event: Event, out: list[BaseEvent]) -> None:
        from ag_ui.core import TextMessageContentEvent, TextMessageStartEvent, ToolCallArgsEvent

        delta = event.delta
        if delta is None or not (delta.content or delta.tool_calls):
            return
        streaming = self._open.get(event.branch)
        if streaming is None:
            streaming = self._open[event.branch] = _Streaming(event.author or None)
        if delta.content:
            if streaming.text_id is None:
                streaming.text_id = new_id()
                out.append(
                    TextMessageStartEvent(message_id=streaming.text_id, role="assistant", name=streaming.name)
                )
            streaming.text.append(delta.content)
            out.append(TextMessageContentEvent(message_id=streaming.text_id, delta=delta.content))
        for piece in delta.tool_calls:
            call = streaming.calls.get(piece.id)
            if call is None:
                call = streaming.calls[piece.id] = _StreamedCall(streaming.text_id)
                out.append(_call_start(piece, call.parent))
            if arguments := piece.function.arguments:
                call.arguments.append(arguments)
                out.append(ToolCallArgsEvent(tool_call_id=piece.id, delta=arguments))

    def _complete(self, event: Event, out: list[BaseEvent]) -> None:
        from ag_ui.core import (
            AssistantMessage,
            FunctionCall,
            MessagesSnapshotEvent,
            TextMessageContentEvent,
            TextMessageEndEvent,
            TextMessageStartEvent,
            ToolCall,
            ToolCallArgsEvent,
            ToolCallEndEvent,
        )

        message = event.message
        if message is None or message.role != "assistant":
            return  # the user's own message, echoed by the runner: the client has it already
        content = message.content
        streaming = self._open.pop(event.branch, None) or _Streaming(event.author or None)
        corrected = False
        text_id = streaming.text_id
        if text_id is not None:
            out.append(TextMessageEndEvent(message_id=text_id))
            corrected = "".join(streaming.text) != content
        elif content:
            text_id = new_id()
            out.append(TextMessageStartEvent(message_id=text_id, role="assistant", name=streaming.name))
            out.append(TextMessageContentEvent(message_id=text_id, delta=content))
            out.append(TextMessageEndEvent(message_id=text_id))
        parents: dict[str, str | None] = {}
        for call in message.tool_calls:
            streamed = streaming.calls.pop(call.id, None)
            if streamed is None:
                parents[call.id] = text_id
                out.append(_call_start(call, text_id))
                if call.function.arguments:
                    out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=call.function.arguments))
            else:
                parents[call.id] = streamed.parent
                corrected = corrected or "".join(streamed.arguments) != call.function.arguments
            out.append(ToolCallEndEvent(tool_call_id=call.id))
        for call_id in streaming.calls:  # streamed, but not in the complete message
            out.append(ToolCallEndEvent(tool_call_id=call_id))
            corrected = True

        # The client's copy: the text message holds the calls attributed to it; a call attributed
        # to none is a message of its own, named by the call's id.
        calls = {
            c.id: ToolCall(
                id=c.id, function=FunctionCall(name=c.function.name, arguments=c.function.arguments)
            )
            for c in message.tool_calls
        }
        if text_id is not None:
            held = [calls[i] for i, parent in parents.items() if parent == text_id]
            self._messages.append(
                AssistantMessage(id=text_id, content=content, name=streaming.name, tool_calls=held or None)
            )
        self._messages += (
            AssistantMessage(id=i, tool_calls=[calls[i]]) for i, parent in parents.items() if parent is None
        )
        if corrected:
            out.append(MessagesSnapshotEvent(messages=list(self._messages)))

    def _tool_result(self, event: Event, out: list[BaseEvent]) -> None:
        from ag_ui.core import ToolCallResultEvent, ToolMessage

        message = event.message
        if message is None or message.tool_call_id is None or message.tool_call_id in self._sent:
            return  # a result the client sent (its own tool's) is not echoed
        message_id = new_id()
        out.append(
            ToolCallResultEvent(
                message_id=message_id, tool_call_id=message.tool_call_id, content=message.content, role="tool"
            )
        )
        self._messages.append(
            ToolMessage(id=message_id, content=message.content, tool_call_id=message.tool_call_id)
        )

    def _approval_requests(self, event: Event) -> None:
        """Per call waiting for approval, an interrupt for RUN_FINISHED to carry (AG-UI 1.0)."""
        from ag_ui.core import Interrupt

        waiting = set(event.long_running_tool_ids)
        for d in event.decisions:
            if type(d) is Deferred and d.call_id in waiting:
                self._interrupts.append(
                    Interrupt(
                        id=d.call_id,
                        reason="approval",
                        message=d.reason,
                        tool_call_id=d.call_id,
                        response_schema=APPROVAL_SCHEMA,
                        metadata={"tool": d.target.removeprefix("tool:"), "arguments": d.arguments},
                    )
                )

    def _discard(self, event: Event, out: list[BaseEvent]) -> None:
        from ag_ui.core import MessagesSnapshotEvent

        streaming = self._open.pop(event.branch, None)
        if streaming is None:
            return  # nothing of the discarded attempt reached the client
        _end_streamed(streaming, out)
        out.append(MessagesSnapshotEvent(messages=list(self._messages)))

    def _state_delta(self, event: Event, out: list[BaseEvent]) -> None:
        from ag_ui.core import StateDeltaEvent

        delta = event.actions.state_delta
        if not delta:
            return
        ops: list[Any] = []
        keys = self._keys
        for key, value in delta.items():
            path = "/" + key.replace("~", "~0").replace("/", "~1")
            if value is not None:
                ops.append({"op": "add", "path": path, "value": value})
                keys.add(key)
            elif key in keys:
                ops.append({"op": "remove", "path": path})
                keys.discard(key)
        if ops:
            out.append(StateDeltaEvent(delta=ops))

    def _end(self, out: list[BaseEvent], error: ErrorInfo | None) -> None:
        """RUN_ERROR for `error`; else END for everything open, then RUN_FINISHED."""
        from ag_ui.core import RunFinishedEvent, RunFinishedInterruptOutcome, RunFinishedSuccessOutcome

        self._done = True
        if error is not None:
            out.append(_run_error(error))
            return
        for streaming in self._open.values():
            _end_streamed(streaming, out)
        self._open.clear()
        outcome: RunFinishedOutcome | None = None
        if self._interrupts:  # stopped to ask: never a success (AG-UI 1.0)
            outcome = RunFinishedInterruptOutcome(interrupts=self._interrupts)
        elif self._waiting:
            outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=self._waiting)
        out.append(RunFinishedEvent(thread_id=self.ctx.thread_id, run_id=self.ctx.run_id, outcome=outcome))


_RUN_ENDS = frozenset({ObjectType.RUNNER_COMPLETION, ObjectType.RUNNER_PAUSED})

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
    "additionalProperties": False,
}
"""The `responseSchema` of an approval interrupt: the payload a resume entry answers it with."""


def _call_start(call: ToolCall, parent: str | None) -> BaseEvent:
    from ag_ui.core import ToolCallStartEvent

    return ToolCallStartEvent(
        tool_call_id=call.id, tool_call_name=call.function.name, parent_message_id=parent
    )


def _end_streamed(streaming: _Streaming, out: list[BaseEvent]) -> None:
    """END for a streamed response's text message and tool calls."""
    from ag_ui.core import TextMessageEndEvent, ToolCallEndEvent

    if streaming.text_id is not None:
        out.append(TextMessageEndEvent(message_id=streaming.text_id))
    out.extend(ToolCallEndEvent(tool_call_id=call_id) for call_id in streaming.calls)


def _decisions(event: Event, out: list[BaseEvent]) -> None:
    """A CUSTOM `adk.decision` event per decision the event is the first to tell, before its own."""
    from ag_ui.core import CustomEvent

    out.extend(CustomEvent(name="adk.decision", value=asdict(d)) for d in event.fresh_decisions())


def _run_error(error: ErrorInfo) -> BaseEvent:
    from ag_ui.core import RunErrorEvent

    where = f" (at {error.where})" if error.where else ""
    return RunErrorEvent(message=f"{error.message}{where}", code=error.type)


# --- the ASGI app -------------------------------------------------------------------------------

Identity: TypeAlias = "Callable[[Request], str | Awaitable[str | None] | None]"
"""Who sent a request: a function of the starlette `Request` (its auth header, a cookie...) that
returns the user id, or None to refuse the request (401). Each user sees only their own threads."""

MAX_BODY = 1 << 20
"""The default limit on a request body: 1 MiB."""
RECONNECT_WAIT = 5.0
"""The default bound on how long a request waits for the run of a client that went away to stop."""
_DROP_GRACE = 0.5
"""How long a request for a busy thread gives the server to notice that the run's client left."""

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class _BadInput(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def _read_body(headers: Mapping[str, str], receive: Receive, limit: int) -> bytes:
    """The request body, refused (413) as soon as it is known to exceed `limit` bytes."""
    from starlette.requests import ClientDisconnect

    too_large = _BadInput(413, f"the request body is larger than the limit of {limit} bytes")
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
            raise _BadInput(422, f"{where}.content.{j}: only text parts are supported, not {part.type!r}")
        texts.append(part.text)
    return "".join(texts)


_Results: TypeAlias = "list[tuple[int, str, str]]"
"""The tool results that end a request's messages: (position, tool call id, content)."""


def _parse(body: bytes) -> tuple[RunAgentInput, str | _Results]:
    """The validated `RunAgentInput`, and what it answers: the text of its last user message, or
    the tool results its messages end with."""
    import json

    from ag_ui.core import RunAgentInput, ToolMessage
    from pydantic import ValidationError

    try:
        data = json.loads(body)
    except ValueError as e:
        raise _BadInput(400, f"the request body is not JSON: {e}") from None
    try:
        run = RunAgentInput.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(map(str, err['loc'])) or 'body'}: {err['msg']}" for err in e.errors(include_url=False)
        )
        raise _BadInput(422, f"invalid RunAgentInput: {problems}") from None
    if run.state is not None and not isinstance(run.state, dict):
        raise _BadInput(422, f"state: must be a JSON object, not {type(run.state).__name__}")
    messages = run.messages
    results: _Results = []
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
    raise _BadInput(422, "messages: there is no user message to answer")


_Answers: TypeAlias = "tuple[dict[str, Answer], dict[str, str]]"
"""What a request answers a paused run with: approvals, and results of the client's own tools."""


def _answered(
    answer: str | _Results, resume: Sequence[ResumeEntry], session: Session | None
) -> str | _Answers:
    """What the run answers: the user's text, or the answers to the calls the thread waits for:
    resume entries for its interrupts (calls waiting for approval), results for the calls of the
    client's own tools (the client sends its whole history: results of calls not waiting are in
    it already).

    A result for a call of the agent's own tools (one waiting for the application) is refused,
    and so is an answer to a call that waits for no such answer.
    """
    if isinstance(answer, str):
        return answer
    waiting = waiting_calls(session) if session is not None else {}
    approvals: dict[str, Answer] = {}
    results: dict[str, str] = {}
    for at, entry in enumerate(resume):
        where, call_id = f"resume.{at}", entry.interrupt_id
        if waiting.get(call_id, ("",))[0] != ObjectType.APPROVAL_REQUEST:
            raise _BadInput(422, f"{where}: {call_id!r} is no interrupt open on this thread")
        if call_id in approvals:
            raise _BadInput(422, f"{where}: a second answer to interrupt {call_id!r}")
        approvals[call_id] = _approval(entry, f"{where}.payload")
    for at, call_id, content in answer:
        where = f"messages.{at}"
        if call_id in waiting:
            kind, tool = waiting[call_id]
            if kind == ObjectType.APPROVAL_REQUEST:
                raise _BadInput(
                    422,
                    f"{where}: tool call {call_id!r} waits for approval: answer its interrupt with a"
                    f' resume entry {{"interruptId": "{call_id}", "status": "resolved", "payload":'
                    ' {"approved": true}}',
                )
            if kind != ObjectType.CLIENT_PENDING:
                raise _BadInput(
                    422,
                    f"{where}: tool call {call_id!r} of {tool!r} waits for the server's result,"
                    " not a client's",
                )
            results[call_id] = content
    if not approvals and not results:
        at, call_id, _ = answer[-1]
        raise _BadInput(
            422, f"messages.{at}: a result for tool call {call_id!r}, which is not waiting for one"
        )
    missing: list[str] = []
    for i, (kind, tool) in waiting.items():
        if i in approvals or i in results:
            continue
        if kind == ObjectType.APPROVAL_REQUEST:
            missing.append(f"interrupt {i!r}")
        elif kind == ObjectType.CLIENT_PENDING:
            missing.append(repr(i))
        else:  # no client can give it: say so, or the client is asked for what it cannot send
            missing.append(f"{i!r} (of {tool!r}: the server's, so only the application can resume this run)")
    if missing:
        raise _BadInput(
            422,
            "the paused run waits for an answer to every call; missing: " + ", ".join(missing),
        )
    return approvals, results


def _approval(entry: ResumeEntry, where: str) -> Answer:
    """A person's answer to an approval interrupt: approved, or rejected with a reason; an
    abandoned interrupt (status `cancelled`) is a rejection, so the call never runs."""
    from adk.approvals import Approve, Reject

    if entry.status == "cancelled":
        return Reject("cancelled")
    data = entry.payload
    if isinstance(data, dict) and set(data) <= {"approved", "reason"} and type(data.get("approved")) is bool:
        reason = data.get("reason", "")
        if isinstance(reason, str):
            return Approve() if data["approved"] else Reject(reason)
    raise _BadInput(
        422,
        f'{where} must be {{"approved": true}} or {{"approved": false, "reason": "..."}},'
        f" not {short_repr(data)}",
    )


def _client_tools(run: RunAgentInput) -> tuple[ToolDeclaration, ...]:
    """The tools the client offers, as declarations for the model."""
    from adk.events import ToolDeclaration

    tools: dict[str, ToolDeclaration] = {}
    for i, tool in enumerate(run.tools or ()):
        if tool.name in tools:
            raise _BadInput(422, f"tools.{i}: a second tool named {tool.name!r}")
        parameters = {"type": "object", "properties": {}} if tool.parameters is None else tool.parameters
        if not isinstance(parameters, dict):
            raise _BadInput(422, f"tools.{i}.parameters: must be a JSON schema object")
        tools[tool.name] = ToolDeclaration(
            name=tool.name, description=tool.description, parameters=parameters
        )
    return tuple(tools.values())


class _Served:
    """A run the endpoint streams: `leaving` once its client went away or it ended, `ended` once stopped."""

    __slots__ = ("ended", "leaving")

    def __init__(self) -> None:
        self.leaving = asyncio.Event()
        self.ended = asyncio.Event()

    async def freed(self, deadline: float) -> bool:
        """Whether the run stops by `deadline` (loop time), if it is seen leaving within a short grace."""
        try:
            async with asyncio.timeout(min(_DROP_GRACE, deadline - asyncio.get_running_loop().time())):
                await self.leaving.wait()
            async with asyncio.timeout_at(deadline):
                await self.ended.wait()
        except TimeoutError:
            return False
        return True


@dataclass(frozen=True, slots=True)
class _Endpoint:
    """The POST endpoint, a plain ASGI app: it streams the run itself to notice a disconnect at once."""

    runner: Runner
    callbacks: Callbacks
    identity: Identity | None
    max_body: int
    client_state: bool
    reconnect_wait: float
    continue_on_error: bool
    continue_on_response: bool
    details: bool = False
    runs: dict[tuple[str, str], _Served] = field(default_factory=dict)
    """The runs being streamed, by (user, thread)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import ClientDisconnect, Request
        from starlette.responses import JSONResponse

        request = Request(scope)  # the body is read here, with a limit
        try:
            media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
            if media_type != "application/json":
                raise _BadInput(
                    415, f"the request body must be application/json, not {media_type or 'untyped'}"
                )
            user_id = await user_of(self.identity, request)
            run, answer = _parse(await _read_body(request.headers, receive, self.max_body))
            session = await self.runner.session_service.get(user_id, run.thread_id)
            message = _answered(answer, run.resume or (), session)
            tools = _client_tools(run)
            state_delta = self._state_delta(run, session)
        except _BadInput as e:
            await JSONResponse({"detail": e.detail}, status_code=e.status)(scope, receive, send)
            return
        except ClientDisconnect:
            return  # gone before the request was read: nothing was started
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        served = _Served()
        stream = self._stream(run, message, user_id, state_delta, tools, served)
        pump = asyncio.ensure_future(_pump(stream, send))
        disconnect = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait((pump, disconnect), return_when=asyncio.FIRST_COMPLETED)
        finally:
            # A client that went away cancels the run: the runner's iterator is closed in `_stream`.
            served.leaving.set()
            pump.cancel()
            disconnect.cancel()
            await asyncio.gather(pump, disconnect, return_exceptions=True)
            served.ended.set()
            if self.runs.get((user_id, run.thread_id)) is served:
                del self.runs[user_id, run.thread_id]
        if (
            not pump.cancelled()
            and (error := pump.exception()) is not None
            and not isinstance(error, OSError)
        ):
            raise error  # a failure to send, not of the run (the run's failures are RUN_ERROR events)

    def _state_delta(self, run: RunAgentInput, session: Session | None) -> dict[str, Any]:
        """The keys of the client's state that differ from the session's (None deletes a key)."""
        if not self.client_state or not run.state:
            return {}
        state = session.state if session is not None else {}
        missing = object()
        return {k: v for k, v in run.state.items() if state.get(k, missing) != v}

    async def _stream(
        self,
        run: RunAgentInput,
        message: str | _Answers,
        user_id: str,
        state_delta: dict[str, Any],
        tools: tuple[ToolDeclaration, ...],
        served: _Served,
    ) -> AsyncGenerator[bytes, None]:
        from ag_ui.encoder import EventEncoder

        encode = EventEncoder().encode

        def sse(out: list[BaseEvent]) -> bytes:
            return "".join(map(encode, out)).encode()

        translator = AguiTranslator(
            TranslateContext(run.thread_id, run.run_id, run.run_id, user_id, run),
            self.callbacks,
            messages=run.messages,
            continue_on_error=self.continue_on_error,
            continue_on_response=self.continue_on_response,
            details=self.details,
        )
        runner = self.runner
        key = (user_id, run.thread_id)

        approvals, results = (None, None) if isinstance(message, str) else message

        def start() -> AsyncGenerator[Event, None]:
            return runner.run(
                user_id,
                run.thread_id,
                message if isinstance(message, str) else None,
                approvals=approvals or None,
                tool_results=results or None,
                stream=True,
                invocation_id=run.run_id,
                state_delta=state_delta,
                client_tools=tools,
            )

        events: AsyncGenerator[Event, None] | None = None
        try:
            yield sse(await translator.start())
            events, first = await self._begin(key, start, served)
            session = await runner.session_service.get(*key)  # the state with the client's changes
            out = await translator.snapshot(session.state if session is not None else {})
            out += await translator.translate(first)
            while not translator.done:
                yield sse(out)
                try:
                    event = await anext(events)
                except StopAsyncIteration:
                    out = await translator.finish()
                    break
                out = await translator.translate(event)
        except Exception as error:
            log.warning("AG-UI run %s ended with an error", run.run_id, exc_info=True)
            out = await translator.fail(error)
        finally:
            if events is not None:
                await events.aclose()
        # The last events go out once the run has let go of the thread, so that a client that
        # sends its next request at once finds it free.
        if out:
            yield sse(out)

    async def _begin(
        self, key: tuple[str, str], start: Callable[[], AsyncGenerator[Event, None]], served: _Served
    ) -> tuple[AsyncGenerator[Event, None], Event]:
        """The run and its first event. A thread held by a run whose client went away (or that is
        ending) is waited for, up to `reconnect_wait` s, rather than refused as busy."""
        deadline = asyncio.get_running_loop().time() + self.reconnect_wait
        while True:
            events = start()
            try:
                first = await anext(events)
            except SessionBusyError:
                holder = self.runs.get(key)
                if holder is None or not await holder.freed(deadline):
                    raise
                continue
            self.runs[key] = served
            return events, first


async def user_of(identity: Identity | None, request: Request) -> str:
    """The user `identity` names for `request` (`anonymous` without one); 401 if it names none."""
    if identity is None:
        return "anonymous"
    user: object = identity(request)
    if inspect.isawaitable(user):
        user = await user
    if user is None:
        raise _BadInput(401, "the request carries no identity this server accepts")
    if isinstance(user, str) and user:
        return user
    raise TypeError(f"the identity function returned {user!r}, not a user id (a non-empty str) or None")


async def _pump(chunks: AsyncGenerator[bytes, None], send: Send) -> None:
    """Send `chunks` as the response body, and close them however this ends."""
    try:
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        await chunks.aclose()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def create_app(
    runner: Runner,
    *,
    path: str = "/",
    translate_callbacks: Callbacks | Iterable[TranslateCallback] = (),
    identity: Identity | None = None,
    max_body: int = MAX_BODY,
    cors_origins: Sequence[str] = (),
    client_state: bool = True,
    reconnect_wait: float = RECONNECT_WAIT,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    details: bool = False,
) -> Starlette:
    """A Starlette app whose POST `path` runs `runner` for an AG-UI `RunAgentInput`, streaming SSE.

    The thread id is the session id (of the user `identity` returns; without it every client is
    `anonymous`), the run id the invocation id, and the last user message the message. Bodies
    over `max_body` bytes (413) and other than `application/json` (415) are refused unread;
    browsers on `cors_origins` (none by default) may call it. Bad input gets a 4xx naming the
    problem; a failure once the stream has started is a RUN_ERROR event. With `client_state`,
    the client's `state` changes the session's. With `details`, every complete adk event also
    goes out as a CUSTOM `adk.event`. Translate callbacks are resolved here, once.
    """
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route

    if isinstance(cors_origins, str):
        raise TypeError(f"cors_origins: a list of origins such as [{cors_origins!r}], not a string")
    if max_body < 1:
        raise ValueError(f"max_body: a number of bytes, at least 1, not {max_body}")
    endpoint = _Endpoint(
        runner,
        Callbacks.of(translate_callbacks),
        identity,
        max_body,
        client_state,
        reconnect_wait,
        continue_on_error,
        continue_on_response,
        details,
    )
    middleware = []
    if cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["POST"],
                allow_headers=["accept", "authorization", "content-type"],
            )
        )
    return Starlette(routes=[Route(path, endpoint, methods=["POST"])], middleware=middleware)


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refuse_anonymous_public(host: str, identity: object, insecure_anonymous: bool) -> None:
    """Refuse a host beyond loopback without an identity function: every client would be `anonymous`."""
    if identity is None and not insecure_anonymous and not is_loopback(host):
        raise ValueError(
            f"refusing to serve on {host} without an identity function: every client would be "
            "'anonymous' and could read any thread it names; pass identity=, or "
            "insecure_anonymous=True to serve anyway"
        )


def serve(
    agent_or_runner: BaseAgent | Runner,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    path: str = "/",
    translate_callbacks: Callbacks | Iterable[TranslateCallback] = (),
    identity: Identity | None = None,
    insecure_anonymous: bool = False,
    max_body: int = MAX_BODY,
    cors_origins: Sequence[str] = (),
) -> None:
    """Serve an agent (in a `Runner` with in-memory sessions) or a runner over AG-UI with uvicorn.

    A host other than loopback needs an `identity` function: without one every client is
    `anonymous` and reads any thread it names; `insecure_anonymous=True` serves it anyway.
    """
    refuse_anonymous_public(host, identity, insecure_anonymous)
    import uvicorn

    from adk.runner import Runner

    runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
    app = create_app(
        runner,
        path=path,
        translate_callbacks=translate_callbacks,
        identity=identity,
        max_body=max_body,
        cors_origins=cors_origins,
    )
    uvicorn.run(app, host=host, port=port)
