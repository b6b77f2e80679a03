"""`adk worker`: a process that recovers its executor's runs and takes queued runs until stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from adk.agents.base import BaseAgent
from adk.durable.launch import shutdown
from adk.durable.runner import DurableRunner, launch
from adk.sessions.base import SessionService

__all__ = ["WorkerOptions", "work"]


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """What `adk worker` is told: where DBOS keeps its record, who this worker is, its limits."""

    system_database: str | None
    executor_id: str | None
    concurrency: int | None
    """Runs at once across every worker of the queue (None: no limit)."""
    worker_concurrency: int | None
    """Runs at once in this worker (None: no limit)."""
    name: str | None = None
    rate_limit: tuple[int, float] | None = None
    """At most that many runs started per that many seconds across the fleet (None: no limit)."""
    recover: tuple[str, ...] = ()
    """Executors gone for good whose pending runs this worker puts back on the queue at start."""


async def work(
    agent: BaseAgent, store: SessionService, options: WorkerOptions, ready: Callable[[DurableRunner], None]
) -> None:
    """Launch DBOS with a `DurableRunner` of `agent` (recovering what `executor_id` left), call
    `ready`, then take runs from the queue until cancelled; DBOS stops on the way out."""
    runner = DurableRunner(
        agent,
        session_service=store,
        name=options.name,
        concurrency=options.concurrency,
        worker_concurrency=options.worker_concurrency,
        rate_limit=options.rate_limit,
    )
    await launch(options.system_database, runners=[runner], executor_id=options.executor_id)
    try:
        for gone in options.recover:
            await runner.recover(gone)
        ready(runner)
        await asyncio.Event().wait()  # the queue's runs run on this loop until the process stops
    finally:
        shutdown()
