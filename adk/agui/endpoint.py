"""The AG-UI endpoint: a plain ASGI app that checks a request (adk.agui.request), runs it, and
streams the run's AG-UI events as server-sent events, noticing at once a client that leaves.

A client that goes away cancels its run. A request for a thread still held by a run whose client
left waits, up to `reconnect_wait` s, for that run to stop, rather than being refused as busy.
A request with `Last-Event-ID` continues the run of that event, if the runner can (adk.agui.resume).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from adk.agui.checks import client_state_delta
from adk.agui.hooks import TranslateContext
from adk.agui.request import Answers, answers_of, client_tools, parse_body, read_body
from adk.agui.resume import Continues, prime, sse
from adk.agui.translate import AguiTranslator
from adk.callbacks.registry import Callbacks
from adk.errors import RequestRefused, SessionBusyError
from adk.serving import Identity, user_of
from adk.sessions.base import read_from_horizon

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent, RunAgentInput
    from starlette.types import Receive, Scope, Send

    from adk.events import Event, ToolDeclaration
    from adk.runner import Runner
    from adk.sessions.base import Session

__all__ = ["RECONNECT_WAIT", "Endpoint"]

log = logging.getLogger(__name__)

RECONNECT_WAIT = 5.0
"""The default bound on how long a request waits for the run of a client that went away to stop."""
_DROP_GRACE = 0.5
"""How long a request for a busy thread gives the server to notice that the run's client left."""

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


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
class _Checked:
    """A request that passed every check: what its run starts with."""

    run: RunAgentInput
    user_id: str
    message: str | Answers
    """The user's text, or the answers to the calls the thread's paused run waits for."""
    state_delta: dict[str, Any]
    tools: tuple[ToolDeclaration, ...]
    continued: tuple[list[Event], AsyncGenerator[Event, None]] | None = None
    """For a client that reconnects (`Last-Event-ID`): the events it was shown, and the rest."""

    @property
    def key(self) -> tuple[str, str]:
        """The thread, as the endpoint's runs are kept: (user, thread)."""
        return self.user_id, self.run.thread_id


@dataclass(frozen=True, slots=True)
class Endpoint:
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
    run_callbacks: Callable[[], Iterable[object]] | None = None
    runs: dict[tuple[str, str], _Served] = field(default_factory=dict)
    """The runs being streamed, by (user, thread)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import ClientDisconnect
        from starlette.responses import JSONResponse

        try:
            checked = await self._check(scope, receive)
        except RequestRefused as e:
            await JSONResponse({"detail": e.detail}, status_code=e.status)(scope, receive, send)
            return
        except ClientDisconnect:
            return  # gone before the request was read: nothing was started
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        await self._serve(checked, receive, send)

    async def _check(self, scope: Scope, receive: Receive) -> _Checked:
        """The request, read (with a limit) and checked: `RequestRefused` names what is wrong."""
        from starlette.requests import Request

        request = Request(scope)
        media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            raise RequestRefused(
                415, f"the request body must be application/json, not {media_type or 'untyped'}"
            )
        user_id = await user_of(self.identity, request)
        run, answer = parse_body(await read_body(request.headers, receive, self.max_body))
        after = request.headers.get("last-event-id")
        if after:  # it was asked before: it is continued, not checked again
            return _Checked(run, user_id, "", {}, (), await self._continued(user_id, run.thread_id, after))
        # What it checks (the state, the paused run's calls) is after the horizon: a long thread
        # costs no more to check than a new one.
        session = await read_from_horizon(self.runner.session_service, user_id, run.thread_id)
        message = answers_of(answer, run.resume or (), session)
        tools = client_tools(run)
        return _Checked(run, user_id, message, self._state_delta(run, session), tools)

    async def _continued(
        self, user_id: str, thread_id: str, after: str
    ) -> tuple[list[Event], AsyncGenerator[Event, None]]:
        """The run of the thread's event `after`, for a client that reconnects: 409 from a runner
        that stops a run when its client goes away, 422 for an event the thread does not have."""
        if not isinstance(self.runner, Continues):
            raise RequestRefused(
                409,
                "Last-Event-ID: this server stops a run when its client goes away, so it has none to"
                " continue (adk serve --durable does); send the request without it for a new run",
            )
        try:
            return await self.runner.continued(user_id, thread_id, after)
        except LookupError as e:
            raise RequestRefused(422, f"Last-Event-ID: {e}") from None

    def _state_delta(self, run: RunAgentInput, session: Session | None) -> dict[str, Any]:
        """The keys of the client's state that differ from the session's (None deletes a key);
        422 for a scoped key that differs (adk.agui.checks)."""
        if not self.client_state or not run.state:
            return {}
        try:
            return client_state_delta(run.state, session.state if session is not None else {})
        except ValueError as e:
            raise RequestRefused(422, str(e)) from None

    async def _serve(self, checked: _Checked, receive: Receive, send: Send) -> None:
        """Stream the run until it ends or its client goes away (which cancels it)."""
        served = _Served()
        pump = asyncio.ensure_future(_pump(self._stream(checked, served), send))
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
            if self.runs.get(checked.key) is served:
                del self.runs[checked.key]
        if (
            not pump.cancelled()
            and (error := pump.exception()) is not None
            and not isinstance(error, OSError)
        ):
            raise error  # a failure to send, not of the run (the run's failures are RUN_ERROR events)

    async def _stream(self, checked: _Checked, served: _Served) -> AsyncGenerator[bytes, None]:
        """The run's AG-UI events, encoded as SSE: its failure a RUN_ERROR, never an exception."""
        from ag_ui.encoder import EventEncoder

        encode = EventEncoder().encode
        own = Callbacks.of(self.run_callbacks()) if self.run_callbacks is not None else None
        translator = self._translator(checked, own)
        events: AsyncGenerator[Event, None] | None = None
        last: Event | None = None
        try:
            yield sse(encode, await translator.start())
            if checked.continued is None:
                events, last = await self._begin(checked.key, self._starter(checked, own), served)
                out = await self._snapshot(checked, translator) + await translator.translate(last)
            else:  # the events the client was shown are not sent again
                seen, events = checked.continued
                ended = await prime(translator, seen)
                out = await self._snapshot(checked, translator) + ended
            while not translator.done:
                yield sse(encode, out, last)
                out, last = await _next(translator, events)
        except Exception as error:
            log.warning("AG-UI run %s ended with an error", checked.run.run_id, exc_info=True)
            out, last = await translator.fail(error), None
        finally:
            if events is not None:
                await events.aclose()
        # The last events go out once the run has let go of the thread, so that a client that
        # sends its next request at once finds it free.
        if out:
            yield sse(encode, out, last)

    async def _snapshot(self, checked: _Checked, translator: AguiTranslator) -> list[BaseEvent]:
        """STATE_SNAPSHOT of the thread's state as it is now (with the client's changes)."""
        session = await read_from_horizon(self.runner.session_service, *checked.key)
        return await translator.snapshot(session.state if session is not None else {})

    def _translator(self, checked: _Checked, own: Callbacks | None) -> AguiTranslator:
        """The run's translator, with the app's translate callbacks and the run's own."""
        run = checked.run
        return AguiTranslator(
            TranslateContext(run.thread_id, run.run_id, run.run_id, checked.user_id, run),
            self.callbacks + own if own is not None else self.callbacks,
            messages=run.messages,
            continue_on_error=self.continue_on_error,
            continue_on_response=self.continue_on_response,
            details=self.details,
        )

    def _starter(self, checked: _Checked, own: Callbacks | None) -> Callable[[], AsyncGenerator[Event, None]]:
        """What starts the run (again, if its thread is busy at first)."""
        run, message, runner = checked.run, checked.message, self.runner
        approvals, results = (None, None) if isinstance(message, str) else message

        def start() -> AsyncGenerator[Event, None]:
            return runner.run(
                checked.user_id,
                run.thread_id,
                message if isinstance(message, str) else None,
                approvals=approvals or None,
                tool_results=results or None,
                stream=True,
                invocation_id=run.run_id,
                state_delta=checked.state_delta,
                client_tools=checked.tools,
                callbacks=own or (),
            )

        return start

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


async def _pump(chunks: AsyncGenerator[bytes, None], send: Send) -> None:
    """Send `chunks` as the response body, and close them however this ends."""
    try:
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        await chunks.aclose()


async def _next(
    translator: AguiTranslator, events: AsyncGenerator[Event, None]
) -> tuple[list[BaseEvent], Event | None]:
    """The run's next event and its AG-UI events; those that end it if it stopped without an end."""
    try:
        event = await anext(events)
    except StopAsyncIteration:
        return await translator.finish(), None
    return await translator.translate(event), event


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
