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
  streams the run as SSE; `serve(agent_or_runner)` runs it with uvicorn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

from adk.callbacks.chain import run_chain
from adk.callbacks.registry import REPLACE, Callbacks, Hook, HookImpl, declare_hooks
from adk.errors import CallbackError
from adk.events import ErrorInfo, Event, ObjectType, new_id

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent, RunAgentInput
    from ag_ui.core import Message as AguiMessage
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.types import Receive, Scope, Send

    from adk.agents.base import BaseAgent
    from adk.runner import Runner

__all__ = [
    "AfterTranslate",
    "AguiTranslator",
    "BeforeTranslate",
    "TranslateCallback",
    "TranslateContext",
    "create_app",
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
class _OpenText:
    """A text message whose START went out and whose END has not."""

    id: str
    name: str | None
    parts: list[str] = field(default_factory=list)


class AguiTranslator:
    """Translates one run's adk events into AG-UI events; holds that run's state.

    `start(state)` gives RUN_STARTED and a STATE_SNAPSHOT; then, per adk event:

    - streamed chunks (`chat.completion.chunk`): TEXT_MESSAGE_START on the first text of a
      branch, then TEXT_MESSAGE_CONTENT per delta;
    - a complete assistant message (`chat.completion`): TEXT_MESSAGE_END if its text was
      streamed, else START / CONTENT / END with the whole text; then TOOL_CALL_START / ARGS / END
      per tool call, parented to that message. If the complete text is not what was streamed
      (an `after_model` callback replaced it), a MESSAGES_SNAPSHOT corrects the client's copy;
    - `tool.response`: TOOL_CALL_RESULT;
    - `attempt.discarded`: the partial message is ended and a MESSAGES_SNAPSHOT without it is
      sent, so the client drops the discarded text; the retry streams into a fresh message;
    - `error`: RUN_ERROR; `runner.completion`: END for any open message, then RUN_FINISHED;
    - `actions.state_delta` on any event: STATE_DELTA (JSON Patch `add` / `remove` per key);
    - each callback decision (`Event.fresh_decisions()`: a halt, a replaced output, a retry, a
      fallback, told as it happens): a CUSTOM event named `adk.decision` whose value is the
      decision's fields, before the event's own translation.

    Nothing follows RUN_FINISHED or RUN_ERROR. Message ids are minted here; tool call ids are
    adk's. The messages of the snapshots are those the client sent (`messages`) followed by
    those this translator made; replacements made by `after_translate` are not tracked.
    """

    __slots__ = (
        "_after",
        "_before",
        "_continue_on_error",
        "_continue_on_response",
        "_done",
        "_keys",
        "_messages",
        "_open",
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
    ) -> None:
        callbacks = Callbacks.of(callbacks)
        self.ctx = ctx
        self._before = callbacks.get(BEFORE_TRANSLATE)
        self._after = callbacks.get(AFTER_TRANSLATE)
        self._continue_on_error = continue_on_error
        self._continue_on_response = continue_on_response
        self._messages: list[AguiMessage] = list(messages)
        self._open: dict[str, _OpenText] = {}
        self._keys: set[str] = set()
        self._done = False

    async def start(self, state: Mapping[str, Any]) -> list[BaseEvent]:
        """RUN_STARTED, then a STATE_SNAPSHOT of the session's `state`."""
        from ag_ui.core import PROTOCOL_VERSION, RunStartedEvent, StateSnapshotEvent

        self._keys = set(state)
        ctx = self.ctx
        return await self._after_hooks(
            [
                RunStartedEvent(
                    thread_id=ctx.thread_id, run_id=ctx.run_id, protocol_version=PROTOCOL_VERSION
                ),
                StateSnapshotEvent(snapshot=dict(state)),
            ]
        )

    async def translate(self, event: Event) -> list[BaseEvent]:
        """The AG-UI events for one adk event (often none, never any after the run ended)."""
        if self._done:
            return []
        if self._before:
            event = await self._replace(self._before, BEFORE_TRANSLATE, event)
        out: list[BaseEvent] = []
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
        self._state_delta(event, out)  # after the event's own translation, before the run's end
        if event.object == ObjectType.ERROR:
            self._end(out, event.error or ErrorInfo(type="Error", message="the run failed"))
        elif event.object == ObjectType.RUNNER_COMPLETION:
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
        from ag_ui.core import TextMessageContentEvent, TextMessageStartEvent

        delta = event.delta
        if delta is None or not delta.content:
            return
        text = self._open.get(event.branch)
        if text is None:
            text = self._open[event.branch] = _OpenText(new_id(), event.author or None)
            out.append(TextMessageStartEvent(message_id=text.id, role="assistant", name=text.name))
        text.parts.append(delta.content)
        out.append(TextMessageContentEvent(message_id=text.id, delta=delta.content))

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
            ToolCallStartEvent,
        )

        message = event.message
        if message is None or message.role != "assistant":
            return  # the user's own message, echoed by the runner: the client has it already
        content = message.content
        text = self._open.pop(event.branch, None)
        if text is None and not content and not message.tool_calls:
            return
        corrected = False
        if text is not None:
            out.append(TextMessageEndEvent(message_id=text.id))
            corrected = "".join(text.parts) != content
            message_id, name = text.id, text.name
        else:
            message_id, name = new_id(), event.author or None
            if content:
                out.append(TextMessageStartEvent(message_id=message_id, role="assistant", name=name))
                out.append(TextMessageContentEvent(message_id=message_id, delta=content))
                out.append(TextMessageEndEvent(message_id=message_id))
        for call in message.tool_calls:
            out.append(
                ToolCallStartEvent(
                    tool_call_id=call.id, tool_call_name=call.function.name, parent_message_id=message_id
                )
            )
            if call.function.arguments:
                out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=call.function.arguments))
            out.append(ToolCallEndEvent(tool_call_id=call.id))
        calls = [
            ToolCall(id=c.id, function=FunctionCall(name=c.function.name, arguments=c.function.arguments))
            for c in message.tool_calls
        ]
        self._messages.append(
            AssistantMessage(id=message_id, content=content or None, name=name, tool_calls=calls or None)
        )
        if corrected:
            out.append(MessagesSnapshotEvent(messages=list(self._messages)))

    def _tool_result(self, event: Event, out: list[BaseEvent]) -> None:
        from ag_ui.core import ToolCallResultEvent, ToolMessage

        message = event.message
        if message is None or message.tool_call_id is None:
            return
        message_id = new_id()
        out.append(
            ToolCallResultEvent(
                message_id=message_id, tool_call_id=message.tool_call_id, content=message.content, role="tool"
            )
        )
        self._messages.append(
            ToolMessage(id=message_id, content=message.content, tool_call_id=message.tool_call_id)
        )

    def _discard(self, event: Event, out: list[BaseEvent]) -> None:
        from ag_ui.core import MessagesSnapshotEvent, TextMessageEndEvent

        text = self._open.pop(event.branch, None)
        if text is None:
            return  # nothing of the discarded attempt reached the client
        out.append(TextMessageEndEvent(message_id=text.id))
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
        """RUN_ERROR for `error`; else END for every open message, then RUN_FINISHED."""
        from ag_ui.core import RunFinishedEvent, TextMessageEndEvent

        self._done = True
        if error is not None:
            out.append(_run_error(error))
            return
        out.extend(TextMessageEndEvent(message_id=text.id) for text in self._open.values())
        self._open.clear()
        out.append(RunFinishedEvent(thread_id=self.ctx.thread_id, run_id=self.ctx.run_id))


def _decisions(event: Event, out: list[BaseEvent]) -> None:
    """A CUSTOM `adk.decision` event per decision the event is the first to tell, before its own."""
    from ag_ui.core import CustomEvent

    out.extend(CustomEvent(name="adk.decision", value=asdict(d)) for d in event.fresh_decisions())


def _run_error(error: ErrorInfo) -> BaseEvent:
    from ag_ui.core import RunErrorEvent

    where = f" (at {error.where})" if error.where else ""
    return RunErrorEvent(message=f"{error.message}{where}", code=error.type)


# --- the ASGI app -------------------------------------------------------------------------------

UserId: TypeAlias = "str | Callable[[Request], str]"
"""The adk user of a request: a constant, or a function of the request (e.g. of its auth header)."""

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


def _parse(body: bytes) -> tuple[RunAgentInput, str]:
    """The validated `RunAgentInput` and the text of its last user message."""
    import json

    from ag_ui.core import RunAgentInput
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
    for i in range(len(run.messages) - 1, -1, -1):
        message = run.messages[i]
        if message.role != "user":
            continue
        if isinstance(message.content, str):
            return run, message.content
        texts: list[str] = []
        for j, part in enumerate(message.content):
            if part.type != "text":
                raise _BadInput(
                    422, f"messages.{i}.content.{j}: only text parts are supported, not {part.type!r}"
                )
            texts.append(part.text)
        return run, "".join(texts)
    raise _BadInput(422, "messages: there is no user message to answer")


@dataclass(frozen=True, slots=True)
class _Endpoint:
    """The POST endpoint, a plain ASGI app: it streams the run itself to notice a disconnect at once."""

    runner: Runner
    callbacks: Callbacks
    user_id: UserId
    continue_on_error: bool
    continue_on_response: bool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import ClientDisconnect, Request
        from starlette.responses import JSONResponse

        request = Request(scope, receive)
        try:
            run, message = _parse(await request.body())
        except _BadInput as e:
            await JSONResponse({"detail": e.detail}, status_code=e.status)(scope, receive, send)
            return
        except ClientDisconnect:
            return  # gone before the request was read: nothing was started
        user_id = self.user_id if isinstance(self.user_id, str) else self.user_id(request)
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        pump = asyncio.ensure_future(_pump(self._stream(run, message, user_id), send))
        disconnect = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait((pump, disconnect), return_when=asyncio.FIRST_COMPLETED)
        finally:
            # A client that went away cancels the run: the runner's iterator is closed in `_stream`.
            pump.cancel()
            disconnect.cancel()
            await asyncio.gather(pump, disconnect, return_exceptions=True)
        if (
            not pump.cancelled()
            and (error := pump.exception()) is not None
            and not isinstance(error, OSError)
        ):
            raise error  # a failure to send, not of the run (the run's failures are RUN_ERROR events)

    async def _stream(self, run: RunAgentInput, message: str, user_id: str) -> AsyncGenerator[bytes, None]:
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
        )
        runner = self.runner
        events = runner.run(user_id, run.thread_id, message, stream=True, invocation_id=run.run_id)
        try:
            session = await runner.session_service.get_or_create(user_id, run.thread_id)
            yield sse(await translator.start(session.state))
            async for event in events:
                out = await translator.translate(event)
                if out:
                    yield sse(out)
            out = await translator.finish()
        except Exception as error:
            log.warning("AG-UI run %s ended with an error", run.run_id, exc_info=True)
            out = await translator.fail(error)
        finally:
            await events.aclose()
        if out:
            yield sse(out)


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
    user_id: UserId = "anonymous",
    continue_on_error: bool = False,
    continue_on_response: bool = False,
) -> Starlette:
    """A Starlette app whose POST `path` runs `runner` for an AG-UI `RunAgentInput`, streaming SSE.

    The thread id is the session id, the run id the invocation id, and the last user message the
    message. Bad input gets a 400 or 422 naming the problem; a failure once the stream has
    started is a RUN_ERROR event. Translate callbacks are resolved here, once.
    """
    from starlette.applications import Starlette
    from starlette.routing import Route

    endpoint = _Endpoint(
        runner, Callbacks.of(translate_callbacks), user_id, continue_on_error, continue_on_response
    )
    return Starlette(routes=[Route(path, endpoint, methods=["POST"])])


def serve(
    agent_or_runner: BaseAgent | Runner,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    path: str = "/",
    translate_callbacks: Callbacks | Iterable[TranslateCallback] = (),
) -> None:
    """Serve an agent (in a `Runner` with in-memory sessions) or a runner over AG-UI with uvicorn."""
    import uvicorn

    from adk.runner import Runner

    runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
    uvicorn.run(create_app(runner, path=path, translate_callbacks=translate_callbacks), host=host, port=port)
