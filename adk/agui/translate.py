"""adk events translated to AG-UI events: `AguiTranslator`, one per run, holding what the run
has streamed so far; its translate hooks (adk.agui.hooks) run on each event before and after."""

from __future__ import annotations

from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from adk.agui.hooks import AFTER_TRANSLATE, BEFORE_TRANSLATE, TranslateCallback, TranslateContext
from adk.callbacks.chain import run_chain
from adk.callbacks.decisions import Deferred
from adk.callbacks.registry import Callbacks, Hook, HookImpl
from adk.errors import CallbackError
from adk.events import ErrorInfo, Event, Message, ObjectType, ToolCall, actions_of, new_id

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent, Interrupt, RunFinishedOutcome
    from ag_ui.core import Message as AguiMessage

__all__ = ["APPROVAL_SCHEMA", "AguiTranslator"]

V = TypeVar("V")


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
        self._translate_own(event, out)
        if event.author != "user":
            self._state_delta(event, out)  # after the event's own translation, before the run's end
        if event.object == ObjectType.ERROR:
            self._end(out, event.error or ErrorInfo(type="Error", message="the run failed"))
        elif event.object in _RUN_ENDS:
            self._end(out, None)
        return await self._after_hooks(out)

    def _translate_own(self, event: Event, out: list[BaseEvent]) -> None:
        """The event's own translation, by its kind."""
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
            case ObjectType.TOOL_PROGRESS:
                _progress(event, out)

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
        from ag_ui.core import MessagesSnapshotEvent

        message = event.message
        if message is None or message.role != "assistant":
            return  # the user's own message, echoed by the runner: the client has it already
        streaming = self._open.pop(event.branch, None) or _Streaming(event.author or None)
        text_id, text_corrected = _complete_text(streaming, message.content, out)
        parents, calls_corrected = _complete_calls(streaming, message.tool_calls, text_id, out)
        self._remember(message, streaming.name, text_id, parents)
        if text_corrected or calls_corrected:
            out.append(MessagesSnapshotEvent(messages=list(self._messages)))

    def _remember(
        self, message: Message, name: str | None, text_id: str | None, parents: dict[str, str | None]
    ) -> None:
        """The client's copy of a complete response: the text message holds the calls attributed
        to it; a call attributed to none is a message of its own, named by the call's id."""
        from ag_ui.core import AssistantMessage, FunctionCall, ToolCall

        calls = {
            c.id: ToolCall(
                id=c.id, function=FunctionCall(name=c.function.name, arguments=c.function.arguments)
            )
            for c in message.tool_calls
        }
        if text_id is not None:
            held = [calls[i] for i, parent in parents.items() if parent == text_id]
            self._messages.append(
                AssistantMessage(id=text_id, content=message.content, name=name, tool_calls=held or None)
            )
        self._messages += (
            AssistantMessage(id=i, tool_calls=[calls[i]]) for i, parent in parents.items() if parent is None
        )

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
                        reason="approval" if d.schema is None else "input",
                        message=d.reason,
                        tool_call_id=d.call_id,
                        response_schema=APPROVAL_SCHEMA if d.schema is None else reply_schema(d.schema),
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

        actions = actions_of(event)
        if actions is None or not actions.state_delta:
            return
        delta = actions.state_delta
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


def reply_schema(question: dict[str, Any]) -> dict[str, Any]:
    """The `responseSchema` of a question's interrupt (reason `input`: an MCP server's elicitation):
    `{"approved": true, "content": {...}}`, the content as the `question` schema asks; or a refusal."""
    properties = {**APPROVAL_SCHEMA["properties"], "content": question}
    return {**APPROVAL_SCHEMA, "properties": properties}


def _progress(event: Event, out: list[BaseEvent]) -> None:
    """A tool call's progress (a partial `tool.progress` event) as the ACTIVITY_SNAPSHOT of an
    activity of its own (`<call id>.progress`, type `progress`), replaced by each next one."""
    from ag_ui.core import ActivitySnapshotEvent

    told = event.delta
    if told is None or told.tool_call_id is None:
        return
    content = {"toolCallId": told.tool_call_id, "tool": told.name, "progress": told.content}
    out.append(
        ActivitySnapshotEvent(
            message_id=f"{told.tool_call_id}.progress", activity_type="progress", content=content
        )
    )


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


def _complete_text(streaming: _Streaming, content: str, out: list[BaseEvent]) -> tuple[str | None, bool]:
    """The END of a response's streamed text, else its whole text message: the message's id (None
    without text), and whether the complete text differs from what was streamed."""
    from ag_ui.core import TextMessageContentEvent, TextMessageEndEvent, TextMessageStartEvent

    text_id = streaming.text_id
    if text_id is not None:
        out.append(TextMessageEndEvent(message_id=text_id))
        return text_id, "".join(streaming.text) != content
    if content:
        text_id = new_id()
        out.append(TextMessageStartEvent(message_id=text_id, role="assistant", name=streaming.name))
        out.append(TextMessageContentEvent(message_id=text_id, delta=content))
        out.append(TextMessageEndEvent(message_id=text_id))
    return text_id, False


def _complete_calls(
    streaming: _Streaming, calls: Sequence[ToolCall], text_id: str | None, out: list[BaseEvent]
) -> tuple[dict[str, str | None], bool]:
    """The END of each streamed call (else its START / ARGS / END) and of each streamed call the
    complete response lacks: each call's parent message, and whether the calls differ from what
    was streamed."""
    from ag_ui.core import ToolCallArgsEvent, ToolCallEndEvent

    corrected = False
    parents: dict[str, str | None] = {}
    for call in calls:
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
    return parents, corrected


def _decisions(event: Event, out: list[BaseEvent]) -> None:
    """A CUSTOM `adk.decision` event per decision the event is the first to tell, before its own."""
    from ag_ui.core import CustomEvent

    out.extend(CustomEvent(name="adk.decision", value=asdict(d)) for d in event.fresh_decisions())


def _run_error(error: ErrorInfo) -> BaseEvent:
    from ag_ui.core import RunErrorEvent

    where = f" (at {error.where})" if error.where else ""
    return RunErrorEvent(message=f"{error.message}{where}", code=error.type)
