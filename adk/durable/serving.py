"""`QueuedRunner`: a `Runner` for the surfaces (`adk serve --durable`, `adk web --durable`) whose
runs go on the durable queue; it streams each run's events from the session store as whichever
worker runs it stores them, and a streamed run's partial events from its DBOS stream."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any

from adk.approvals import Answer
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.durable.runner import DurableRunner
from adk.events import Event, Message, ToolDeclaration
from adk.runner import Runner

__all__ = ["QueuedRunner"]


class QueuedRunner(Runner):
    """Submits each run to `durable`'s queue and yields its events as they are stored.

    The process serves and takes no runs itself: `adk worker` processes do. A client that goes
    away stops following; the run goes on in its worker.
    """

    runs_here = False
    """Its runs' hooks run in a worker: the surfaces give it no per-run callbacks (`adk web`'s timing)."""

    def __init__(self, durable: DurableRunner, *, poll: float = 0.1) -> None:
        super().__init__(durable.agent, session_service=durable.session_service)
        self.durable = durable
        self.poll = poll
        """Seconds between two reads of the session while a followed run goes on."""

    async def run(
        self,
        user_id: str,
        session_id: str,
        message: str | Message | None = None,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
        agent: str | None = None,
        approvals: Mapping[str, Answer] | None = None,
        tool_results: Mapping[str, Any] | None = None,
        state_delta: Mapping[str, Any] | None = None,
        client_tools: Sequence[ToolDeclaration] = (),
        timeout: float | None = None,  # noqa: ASYNC109 (Runner.run's option, refused here)
    ) -> AsyncGenerator[Event, None]:
        """Submit the run (or the answers to the session's paused run), with the caller's
        `state_delta`, and follow its events; with `stream`, the worker's models stream and their
        partial events come too, as a plain runner's. The other per-run options are refused by
        name, since a queued run does not take them."""
        asked = {
            "callbacks": bool(callbacks),
            "agent": agent is not None,
            "client_tools": bool(client_tools),
            "timeout": timeout is not None,
        }
        refused = [name for name, given in asked.items() if given]
        if refused:
            raise ValueError(f"a durable run does not take {', '.join(refused)} (docs/durable.md)")
        handle = await self.durable.submit(
            user_id,
            session_id,
            message,
            invocation_id=invocation_id,
            approvals=approvals,
            tool_results=tool_results,
            state_delta=state_delta,
            stream=stream,
        )
        async for event in handle.follow(poll=self.poll, partials=stream):
            yield event

    async def continued(
        self, user_id: str, session_id: str, after: str
    ) -> tuple[list[Event], AsyncGenerator[Event, None]]:
        """For a client that reconnects (adk.agui.resume): the run of the session's event `after`,
        its events up to that one and the rest as they are stored, whichever worker runs it
        (with the partial events of a streamed run's calls not completed by then)."""
        handle, seen = await self.durable.continued(user_id, session_id, after)
        return seen, handle.follow(after, poll=self.poll, partials=True)
