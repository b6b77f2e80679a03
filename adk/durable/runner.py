"""`DurableRunner`: a run is a DBOS workflow; its model attempts and tool calls are steps.

The workflow runs the invocation with a plain `Runner` over a `ReplayStore` (adk/durable/replay.py),
its attempts and tool calls made as steps by the `DurableSteps` it sets (adk/durable/steps.py),
its hooks' answers recorded (adk/durable/hooks.py). Its id is derived
from the user, the session and the invocation: starting the same run twice runs it once, and a
worker that comes back with the same executor id recovers the runs its predecessor left.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from adk.agents.base import BaseAgent
from adk.agents.checkpoints import checkpoints
from adk.approvals import Answer
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.durable.checkpoint import StepOrder, step_order
from adk.durable.fleet import FLEET
from adk.durable.hooks import durable_callbacks
from adk.durable.partials import Interleave, tapped
from adk.durable.replay import ReplayStore
from adk.durable.steps import DurableSteps, make_durable
from adk.errors import ApprovalError
from adk.events import Event, Message, ObjectType, new_id
from adk.recovery import RetryPolicy
from adk.recovery.attempts import sleep
from adk.runner import Runner
from adk.runner_start import ENDED
from adk.sessions.base import SessionService, read_from_horizon

if TYPE_CHECKING:
    from dbos import EnqueueOptions, WorkflowHandleAsync

__all__ = ["DurableRunner", "RunHandle", "enqueue_options", "launch", "workflow_id"]


_ENDED = frozenset({"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})
"""A workflow's statuses once it will store no more events."""


QUEUE = "adk.runs"
"""The queue of every durable run of a system database, whatever its agent: every worker polls it."""


def workflow_id(user_id: str, session_id: str, invocation_id: str) -> str:
    """The id of the workflow that runs `invocation_id` of the session: stable, so that a run
    submitted twice runs once."""
    return f"adk:{user_id}:{session_id}:{invocation_id}"


@dataclass(frozen=True, slots=True)
class RunHandle:
    """A submitted run: its workflow, invocation, and where its events are kept."""

    workflow_id: str
    invocation_id: str
    user_id: str
    session_id: str
    runner: DurableRunner
    since: str | None = None
    """For the answers to a paused run: the id of the event it paused with (its events come after)."""

    @property
    def where(self) -> str:
        """Where its events are, for an error that names a missing one."""
        return f"of run {self.workflow_id} in session {self.session_id!r}"

    async def status(self) -> str:
        """The workflow's status: ENQUEUED, PENDING, SUCCESS, ERROR, CANCELLED, ..."""
        from dbos import DBOS

        status = await DBOS.get_workflow_status_async(self.workflow_id)
        return "UNKNOWN" if status is None else str(status.status)

    async def result(self) -> str:
        """Wait for the run to end; the object of its last event (`runner.completion`, `error`, ...)."""
        from dbos import DBOS

        handle: WorkflowHandleAsync[str] = await DBOS.retrieve_workflow_async(self.workflow_id)
        return await handle.get_result()

    async def events(self, after: str | None = None) -> list[Event]:
        """The run's events stored so far in the session (the product's record), from the one
        after the event `after` (by default, from the run's first) to the one that ends it (a
        paused invocation's answers are runs of their own)."""
        session = await self.runner.session_service.get(self.user_id, self.session_id)
        found = session.events if session is not None else []
        if self.since is not None:
            found = found[_index(found, self.since, self.where) + 1 :]
        ran = [e for e in found if e.invocation_id == self.invocation_id]
        ended = next((i for i, e in enumerate(ran) if e.object in ENDED), len(ran))
        ran = ran[: ended + 1]
        return ran if after is None else ran[_index(ran, after, self.where) + 1 :]

    async def follow(
        self, after: str | None = None, *, poll: float = 0.1, partials: bool = False
    ) -> AsyncGenerator[Event, None]:
        """The run's events as whichever worker runs it stores them, until it ends: from the one
        after the event `after` (a client that reconnects passes the id of the last it saw),
        each once. The session is read every `poll` seconds while the run goes on. With
        `partials` (a run submitted with `stream=True`), its partial events too, as the worker
        streams them, each before the complete event that follows it in the run (those before
        `after` are not given again)."""
        seen = after
        placed = Interleave(self.workflow_id, after) if partials else None
        while True:
            ended = await self.status() in _ENDED  # before reading: what it stored is then there
            stored = await self.events(seen)
            if placed is not None:
                await placed.read()  # after the store: every partial placed before those is there
            for event in stored if placed is None else placed.place(stored):
                seen = seen if event.is_partial else event.id
                yield event
            if ended:
                return
            if placed is None:
                await sleep(poll)
            else:
                await placed.wait(poll)


class DurableRunner:
    """Runs `agent` as DBOS workflows, keeping sessions in `session_service` (shared by workers).

    Create it before `adk.durable.launch()`: it registers its workflows (named after `name`, the
    agent's by default), and `launch` its queue. `agent`'s hooks are made durable in place.
    """

    def __init__(
        self,
        agent: BaseAgent,
        *,
        session_service: SessionService,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        retry_policy: RetryPolicy | None = None,
        name: str | None = None,
        concurrency: int | None = None,
        worker_concurrency: int | None = None,
        rate_limit: tuple[int, float] | None = None,
    ) -> None:
        limiter = _limiter(rate_limit)  # checked before anything is registered
        self.agent = make_durable(agent)
        self.session_service = session_service
        self.callbacks = durable_callbacks(Callbacks.of(callbacks))
        self.retry_policy = retry_policy
        self.name = name or agent.name
        self.queue = QUEUE
        self._listeners: dict[str, asyncio.Queue[Event]] = {}
        """The in-process consumers of `run`, by workflow id: a recovered run has none."""
        self._workflow, self._answer = FLEET.add(self)
        self._limits = (concurrency, worker_concurrency, limiter)

    async def register_queue(self) -> None:
        """Register the runner's queue in the system database (`launch` does it, once DBOS is up)."""
        from dbos import DBOS

        await DBOS.register_queue_async(
            self.queue,
            global_concurrency=self._limits[0],
            worker_concurrency=self._limits[1],
            limiter=self._limits[2],
            partition_concurrency=1,  # one run at a time per session, across the fleet
            polling_interval_sec=0.05,
        )

    async def recover(self, executor_id: str) -> list[str]:
        """Put back on the queue the runs of this runner that executor `executor_id` left pending,
        for any worker to finish; their ids. Only for an executor that is gone for good: one that
        comes back recovers them itself, and both would then run them (docs/durable.md)."""
        from dbos import DBOS

        pending = await DBOS.list_workflows_async(
            status="PENDING", executor_id=executor_id, name=["adk.run", "adk.answer"]
        )
        ids = [w.workflow_id for w in pending]
        if ids:
            await DBOS.resume_workflows_async(ids, queue_name=self.queue)
        return ids

    async def execute(
        self,
        user_id: str,
        session_id: str,
        message: Message,
        invocation_id: str,
        answers: _Answers | None = None,
        state_delta: dict[str, Any] | None = None,
        stream: bool = False,
    ) -> str:
        """A workflow's body (adk/durable/fleet.py): the invocation, run (or, on recovery, run
        again over its record), with the caller's `state_delta`; or, with `answers`, the paused
        invocation's calls answered and the invocation gone on with. With `stream`, its models
        stream and its partial events go to the workflow's stream (adk/durable/partials.py)."""
        from dbos import DBOS

        since = answers.since if answers is not None else None
        wfid = DBOS.workflow_id or workflow_id(user_id, session_id, invocation_id)
        store = ReplayStore(self.session_service, wfid, invocation_id, since)
        runner = Runner(
            self.agent, session_service=store, callbacks=self.callbacks, retry_policy=self.retry_policy
        )
        if answers is None:
            events = runner.run(
                user_id,
                session_id,
                message,
                invocation_id=invocation_id,
                state_delta=state_delta,
                stream=stream,
            )
        else:
            events = runner.run(
                user_id,
                session_id,
                approvals=answers.approvals,
                tool_results=answers.tool_results,
                state_delta=answers.state_delta,
                stream=stream,
            )
        if stream:
            events = tapped(events, store)
        last = ""
        order, made = step_order.set(StepOrder(wfid)), checkpoints.set(DurableSteps(store))
        try:  # the run's steps, in their order (and the tasks it starts inherit both)
            async for event in events:
                listener = self._listeners.get(wfid)
                if listener is not None:
                    listener.put_nowait(event)
                last = str(event.object)
        finally:
            checkpoints.reset(made)
            step_order.reset(order)
        return last

    async def run(
        self,
        user_id: str,
        session_id: str,
        message: str | Message | None = None,
        *,
        invocation_id: str | None = None,
        approvals: Mapping[str, Answer] | None = None,
        tool_results: Mapping[str, Any] | None = None,
        state_delta: Mapping[str, Any] | None = None,
        stream: bool = False,
    ) -> AsyncGenerator[Event, None]:
        """Run the agent on `message` as a workflow started here, yielding its events as they
        happen; or, with `approvals` / `tool_results`, answer the session's paused run (a workflow
        of its own, whichever process answers). `state_delta`: the caller's change to the
        session's state, stored first (as `Runner.run` does). `stream`: the models stream, and
        their partial events come too (as `Runner.run`'s). A workflow of that id that already
        ran yields nothing again."""
        from dbos import DBOS, SetWorkflowID

        asked = _Asked(message, invocation_id, approvals, tool_results, dict(state_delta or {}), stream)
        options, workflow, args = await self._asked(user_id, session_id, asked)
        wfid = options["workflow_id"]
        listener: asyncio.Queue[Event] = asyncio.Queue()
        self._listeners[wfid] = listener
        try:
            with SetWorkflowID(wfid):
                handle = await DBOS.start_workflow_async(workflow, *args)
            async for event in _relay(listener, handle.get_result()):
                yield event
        finally:
            self._listeners.pop(wfid, None)

    async def _asked(
        self, user_id: str, session_id: str, asked: _Asked
    ) -> tuple[EnqueueOptions, Callable[..., Coroutine[Any, Any, str]], tuple[Any, ...]]:
        """The workflow that runs what is asked (a message, or answers), its options and
        arguments: a run's are `(name, user_id, session_id, Message, invocation_id)`, followed by
        the state delta if there is one (a `DBOSClient` enqueues the five alone), then True if
        it streams; an answer's are the same five, its `_Answers`, then True if it streams."""
        if asked.approvals is None and asked.tool_results is None:
            if asked.message is None:
                raise ValueError(
                    "DurableRunner: give a message, or approvals / tool_results for a paused run"
                )
            inv = asked.invocation_id or new_id()
            delta: tuple[Any, ...] = (asked.state_delta,) if asked.state_delta else ()
            if asked.stream:
                delta = (asked.state_delta or None, True)
            args = (self.name, user_id, session_id, _message(asked.message), inv, *delta)
            return enqueue_options(self.name, user_id, session_id, inv), self._workflow, args
        answers = await self._answers(user_id, session_id, asked)
        inv, since = answers.invocation_id, answers.since
        options = enqueue_options(self.name, user_id, session_id, inv, since=since)
        streams = (True,) if asked.stream else ()
        args = (self.name, user_id, session_id, Message.user(""), inv, answers, *streams)
        return options, self._answer, args

    async def _answers(self, user_id: str, session_id: str, asked: _Asked) -> _Answers:
        """The answers to the session's paused run, and where it paused; `ApprovalError` if none is."""
        session = await read_from_horizon(self.session_service, user_id, session_id)  # its last event
        last = session.events[-1] if session is not None and session.events else None
        if last is None or last.object != ObjectType.RUNNER_PAUSED:
            raise ApprovalError(
                f"session {session_id!r} of user {user_id!r} has no paused run: no call waits for an answer"
            )
        approvals, results = dict(asked.approvals or {}), dict(asked.tool_results or {})
        return _Answers(last.invocation_id, last.id, approvals, results, asked.state_delta)

    async def submit(
        self,
        user_id: str,
        session_id: str,
        message: str | Message | None = None,
        *,
        invocation_id: str | None = None,
        approvals: Mapping[str, Answer] | None = None,
        tool_results: Mapping[str, Any] | None = None,
        state_delta: Mapping[str, Any] | None = None,
        stream: bool = False,
    ) -> RunHandle:
        """Enqueue a run on the runner's DBOS queue (any worker of the fleet takes it), or the
        answers to the session's paused run, and return its handle; `state_delta` as in `run`;
        `stream`: its models stream, their partial events written for `RunHandle.follow`.
        Submitting the same `invocation_id` again (the same pause's answers) returns the same run."""
        from dbos import DBOS

        asked = _Asked(message, invocation_id, approvals, tool_results, dict(state_delta or {}), stream)
        options, _, args = await self._asked(user_id, session_id, asked)
        await DBOS.enqueue_workflow_with_options_async(options, *args)
        since = args[5].since if len(args) > 5 and isinstance(args[5], _Answers) else None
        return RunHandle(options["workflow_id"], args[4], user_id, session_id, self, since)

    async def continued(self, user_id: str, session_id: str, after: str) -> tuple[RunHandle, list[Event]]:
        """The run that stored the session's event `after`, for a client that reconnects: its
        handle, and its events up to that one. `LookupError` naming it if the session has none."""
        session = await self.session_service.get(user_id, session_id)
        found = session.events if session is not None else []
        at = _index(found, after, f"in session {session_id!r}")
        inv = found[at].invocation_id
        paused = [e.id for e in found[:at] if e.invocation_id == inv and e.object == ObjectType.RUNNER_PAUSED]
        handle = self.handle(user_id, session_id, inv, since=paused[-1] if paused else None)  # the answer's
        seen = await handle.events()
        return handle, seen[: _index(seen, after, handle.where) + 1]

    def handle(
        self, user_id: str, session_id: str, invocation_id: str, *, since: str | None = None
    ) -> RunHandle:
        """The handle of a run submitted before (by this process or another): to follow its events
        again after a reconnect. `since`: for the answers to a pause, the id of the event it paused with."""
        wfid = enqueue_options(self.name, user_id, session_id, invocation_id, since=since)["workflow_id"]
        return RunHandle(wfid, invocation_id, user_id, session_id, self, since)


def enqueue_options(
    name: str, user_id: str, session_id: str, invocation_id: str, *, since: str | None = None
) -> EnqueueOptions:
    """How a run of the `DurableRunner` named `name` is enqueued, here or from a `DBOSClient`
    (a process without the agent): its arguments are `(name, user_id, session_id, Message,
    invocation_id)`, and a state delta (a dict) after them if the run has one.
    With `since` (the id of the event a paused run paused with), the workflow that answers it.
    The partition key keeps one run at a time per session."""
    wfid = workflow_id(user_id, session_id, invocation_id)
    return {
        "workflow_name": "adk.run" if since is None else "adk.answer",
        "queue_name": QUEUE,
        "workflow_id": wfid if since is None else f"{wfid}:{since}",
        "queue_partition_key": f"{user_id}\x1f{session_id}",
    }


class _RateLimit(TypedDict):
    """DBOS's `QueueRateLimit`: at most `limit` runs started per `period` seconds."""

    limit: int
    period: float


def _index(events: list[Event], event_id: str, where: str) -> int:
    """Where the event `event_id` is among `events`; `LookupError` naming it and `where` if it is not."""
    for i, event in enumerate(events):
        if event.id == event_id:
            return i
    raise LookupError(f"no event {event_id!r} {where}")


@dataclass(frozen=True, slots=True)
class _Asked:
    """What a caller asks of `run` or `submit`: a message, or answers to a paused run."""

    message: str | Message | None
    invocation_id: str | None
    approvals: Mapping[str, Answer] | None
    tool_results: Mapping[str, Any] | None
    state_delta: dict[str, Any]
    stream: bool = False


@dataclass(frozen=True, slots=True)
class _Answers:
    """What an answer workflow is given: the paused invocation, the id of the event it paused
    with (what is stored after it is the answer's), the answers, and the caller's state delta."""

    invocation_id: str
    since: str
    approvals: dict[str, Answer]
    tool_results: dict[str, Any]
    state_delta: dict[str, Any] = field(default_factory=dict)


async def _relay(listener: asyncio.Queue[Event], result: Awaitable[Any]) -> AsyncGenerator[Event, None]:
    """The events a workflow started here puts in `listener`, as they come, until it ends."""
    done = asyncio.ensure_future(result)
    while not (done.done() and listener.empty()):
        if listener.empty():
            waiting = asyncio.ensure_future(listener.get())
            await asyncio.wait({waiting, done}, return_when=asyncio.FIRST_COMPLETED)
            if not waiting.done():
                waiting.cancel()
                continue
            yield waiting.result()
        else:
            yield listener.get_nowait()
    await done


def _limiter(rate_limit: tuple[int, float] | None) -> _RateLimit | None:
    """DBOS's limiter for `rate_limit` (runs, seconds): at most that many runs started in any
    window of that many seconds, across the fleet; a `ValueError` naming it when it is not one."""
    if rate_limit is None:
        return None
    match rate_limit:
        case (int() as runs, int() | float() as seconds) if runs >= 1 and 0 < seconds < math.inf:
            return {"limit": runs, "period": float(seconds)}
    raise ValueError(
        f"DurableRunner: rate_limit must be (runs, seconds), runs a whole number 1 or more and "
        f"seconds more than 0 (at most that many runs started per that many seconds), not {rate_limit!r}"
    )


def _message(message: str | Message) -> Message:
    return Message.user(message) if isinstance(message, str) else message


async def launch(
    system_database_url: str | None = None,
    *,
    runners: Iterable[DurableRunner] = (),
    executor_id: str | None = None,
    worker: bool = True,
    app: str = "adk",
) -> Any:
    """Start DBOS in this process, after creating `runners`: it recovers the runs `executor_id`
    left pending and, if `worker`, takes runs from the runners' queues (a process that only
    submits passes `worker=False`). Raises `DurableError`, one line naming the system database,
    when it cannot be reached."""
    from adk.durable.launch import start

    made = list(runners)
    dbos = start(system_database_url, executor_id=executor_id, app=app, queues=None if worker else ())
    for runner in made if worker else ():  # a process that only submits leaves the fleet's limits be
        await runner.register_queue()
    return dbos
