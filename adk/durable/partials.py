"""A streamed durable run's partial events (its model's token chunks), which are not stored:
the worker writes them to a DBOS stream of the run's workflow, and a follower on any process
puts them back among the run's stored events (docs/durable.md).

Each value of the stream is a partial event's JSON, with `after`, the id of the run's last
complete event before it (None: before the run's first) and `run`, the execution that wrote it
(a recovered workflow is another execution): a follower gives the partials placed after an
event right after that event, before the next one it reads from the session store.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from adk.durable.checkpoint import reserved, step_options
from adk.durable.replay import ReplayStore
from adk.events import ErrorInfo, Event, ObjectType, new_id
from adk.recovery.attempts import sleep

__all__ = ["KEY", "Interleave", "Tap", "live_chunks", "tapped"]

KEY = "adk.partials"
"""The key of a run's stream of partial events, in its workflow."""


@dataclass(frozen=True, slots=True)
class _Write:
    """A value for the stream, and the future its writer settles once it is written."""

    value: dict[str, Any]
    written: asyncio.Future[None]


class Tap:
    """The worker's side, in a streamed run's workflow: one step, reserved when the run starts
    (so the workflow's step ids stay the same on recovery), that lives as long as the run and
    writes each partial event the run yields to the stream (a write from a step is not
    checkpointed: a recovered run writes what it streams anew)."""

    def __init__(self) -> None:
        self.writes: asyncio.Queue[_Write | None] = asyncio.Queue()
        self.after: str | None = None
        self.run = new_id()
        self.task: asyncio.Future[None] | None = None

    async def open(self) -> None:
        """Start the writing step (in the workflow, before the run's first step)."""
        reservation, name = await reserved("adk.stream")
        self.task = asyncio.ensure_future(reservation.run_async(step_options(name), _write, self.writes))

    async def see(self, event: Event, replaying: bool) -> None:
        """Write `event` if it is partial and the run is not making again the events of calls
        it had completed before a recovery (their partials were written then); wait until it is
        written, so that it is in the stream before the complete event that follows it is stored."""
        if not event.is_partial:
            self.after = event.id
            return
        if replaying:
            return
        value = {"after": self.after, "run": self.run, "event": event.model_dump_json()}
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.writes.put_nowait(_Write(value, written))
        await written

    async def close(self) -> None:
        """End the writing step, once what was given is written."""
        self.writes.put_nowait(None)
        if self.task is not None:
            await self.task


async def tapped(events: AsyncIterator[Event], store: ReplayStore) -> AsyncGenerator[Event, None]:
    """`events`, a streamed run's (made over `store`), each partial one written to the stream
    first; the writing step reserved before the run's first step."""
    tap = Tap()
    await tap.open()
    try:
        async for event in events:
            await tap.see(event, replaying=bool(store.recorded))
            yield event
    finally:
        await tap.close()


async def _write(writes: asyncio.Queue[_Write | None]) -> None:
    from dbos import DBOS

    while (write := await writes.get()) is not None:
        try:
            await DBOS.write_stream_async(KEY, write.value)
        except Exception as error:  # the run fails with it, in the workflow
            write.written.set_exception(error)
        else:
            write.written.set_result(None)


class Interleave:
    """The follower's side: the run's partial events read from its stream, placed among its
    stored events. Stream values come in the run's order; those placed after an event the
    follower has gone past (a client that reconnects) are dropped."""

    def __init__(self, workflow_id: str, after: str | None) -> None:
        self.workflow_id = workflow_id
        self.at = after
        """The id of the last stored event given (None: before the run's first)."""
        self.offset = 0
        self.pending: list[dict[str, Any]] = []
        self.run: str | None = None
        """The execution whose partials were given at `at`."""

    async def read(self) -> None:
        """Read the stream to its current end (after reading the store: every partial placed
        before a stored event read is then here)."""
        from dbos import DBOS

        try:
            values = DBOS.read_stream_async(self.workflow_id, KEY, offset=self.offset, timeout_seconds=0)
            async for value in values:
                self._take(value)
        except Exception as error:
            _nothing_yet(error)

    async def wait(self, seconds: float) -> None:
        """Wait for the stream's next value, at most `seconds`."""
        from dbos import DBOS

        try:
            value = await DBOS.read_stream_offset_async(
                self.workflow_id, KEY, self.offset, timeout_seconds=seconds
            )
        except Exception as error:
            if _nothing_yet(error):
                await sleep(seconds)  # no workflow to wake it
        else:
            self._take(value)

    def _take(self, value: dict[str, Any]) -> None:
        self.offset += 1
        self.pending.append(value)

    def place(self, stored: list[Event]) -> list[Event]:
        """`stored` (the run's events after `at`, in order), each after the partials placed
        before it, then the partials placed after the last."""
        out: list[Event] = []
        for event in stored:
            out += self._here()
            out.append(event)
            self.at, self.run = event.id, None
        return out + self._here()

    def _here(self) -> list[Event]:
        """The pending partials placed at `at`; those before the last of them in the stream
        are placed earlier (dropped). A new execution's partials at the same place (the worker
        was recovered mid-call) follow an `attempt.discarded`: what the client was shown goes."""
        last = max((i for i, v in enumerate(self.pending) if v["after"] == self.at), default=-1)
        here = [v for v in self.pending[: last + 1] if v["after"] == self.at]
        del self.pending[: last + 1]
        out: list[Event] = []
        for value in here:
            event = Event.model_validate_json(value["event"])
            if self.run is not None and value["run"] != self.run:
                out.append(_discarded(event))
            self.run = value["run"]
            out.append(event)
        return out


def _nothing_yet(error: Exception) -> bool:
    """Raise `error` again unless it says the stream has no value yet, or (True) that the
    workflow is not there (a handle made before its run was enqueued: the session store decides)."""
    if type(error).__name__ not in {"DBOSStreamTimeoutError", "DBOSNonExistentWorkflowError"}:
        raise error
    return type(error).__name__ == "DBOSNonExistentWorkflowError"


def _discarded(event: Event) -> Event:
    return Event.new(
        event.invocation_id,
        event.author,
        branch=event.branch,
        object=ObjectType.ATTEMPT_DISCARDED,
        is_partial=True,
        error=ErrorInfo(
            type="AttemptDiscarded",
            message="the worker that streamed this output stopped; its run goes on elsewhere",
            where="durable",
        ),
    )


async def live_chunks(step: asyncio.Future[list[Any]], live: asyncio.Queue[Any]) -> AsyncIterator[Any]:
    """A streamed model step's chunks as its body puts them in `live`, then those of its
    result not yet given (all of them when it comes from the record); its error, if it fails."""
    given = 0
    try:
        while not (step.done() and live.empty()):
            if live.empty():
                waiting = asyncio.ensure_future(live.get())
                await asyncio.wait({waiting, step}, return_when=asyncio.FIRST_COMPLETED)
                if not waiting.done():
                    waiting.cancel()
                    continue
                chunk = waiting.result()
            else:
                chunk = live.get_nowait()
            given += 1
            yield chunk
        for chunk in (await step)[given:]:
            yield chunk
    finally:
        if not step.done():
            step.cancel()
