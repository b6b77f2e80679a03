"""`adk worker`'s glue: load the agent and its store, run the worker, one line for a failure."""

from __future__ import annotations

import argparse
import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from adk.agents.base import BaseAgent
from adk.cli.checks import require
from adk.cli.display import Display, visible
from adk.cli.loading import DEFAULT_DB, close_sessions, load, open_sessions
from adk.errors import CliError
from adk.events import new_id
from adk.runner import Runner
from adk.sessions.base import SessionService

__all__ = ["durably", "work"]


def work(args: argparse.Namespace, display: Display) -> int:
    """Take durable runs of the file's agent from its queue until interrupted."""
    require(("dbos",), "dbos", "adk worker")  # checked before the agent loads
    from adk.durable.launch import DurableError
    from adk.durable.runner import DurableRunner
    from adk.durable.worker import WorkerOptions
    from adk.durable.worker import work as run

    found = load(args.path)
    agent: BaseAgent = found if isinstance(found, BaseAgent) else found.agent
    if args.sessions or isinstance(found, BaseAgent):
        store = open_sessions(args.sessions or str(DEFAULT_DB))
    else:
        store = found.session_service
    options = WorkerOptions(
        args.system_database,
        args.executor_id,
        args.concurrency,
        args.worker_concurrency,
        rate_limit=args.rate_limit,
        recover=tuple(args.recover),
    )

    def ready(runner: DurableRunner) -> None:
        who = args.executor_id or "local"
        display.err.write(visible(f"adk worker {who}: taking runs of {runner.name!r} from its queue\n"))
        display.err.flush()

    with asyncio.Runner() as loop:
        try:
            loop.run(run(agent, store, options, ready))
        except DurableError as e:
            raise CliError(str(e)) from None
        finally:
            _close(store, loop)
    return 0


def _close(store: SessionService, loop: asyncio.Runner) -> None:
    """Close the store's connection or pool, if it holds one (a pool belongs to `loop`)."""
    close = getattr(store, "close", None)
    if close is None:
        return
    if inspect.iscoroutinefunction(close):
        loop.run(close())
    else:
        close()


def durably(
    args: argparse.Namespace,
    start: Callable[[Runner, Any], None],
    load: Callable[[str, str | None], Runner],
) -> tuple[Callable[[Runner, Any], None], Callable[[str, str | None], Runner]]:
    """With `--durable`, `adk serve` / `adk web`'s `start` and `load`: the runner loaded becomes a
    `QueuedRunner` (its runs go on the queue for `adk worker` processes, their events are read
    from the store), DBOS launched without taking runs, and stopped when serving ends."""
    if not args.durable:
        return start, load
    require(("dbos",), "dbos", f"adk {args.command} --durable")

    def loaded(path: str, sessions: str | None) -> Runner:
        from adk.durable.launch import DurableError
        from adk.durable.runner import DurableRunner, launch
        from adk.durable.serving import QueuedRunner

        runner = load(path, sessions)
        durable = DurableRunner(
            runner.agent,
            session_service=runner.session_service,
            callbacks=runner.callbacks,
            retry_policy=runner.retry_policy,
        )
        served_as = f"serve-{new_id()}"  # an executor of its own: it recovers no worker's runs
        try:
            asyncio.run(launch(args.system_database, runners=[durable], executor_id=served_as, worker=False))
        except DurableError as e:
            close_sessions(runner)
            raise CliError(str(e)) from None
        return QueuedRunner(durable)

    def started(runner: Runner, identity: Any) -> None:
        from adk.durable.launch import shutdown

        try:
            start(runner, identity)
        finally:
            shutdown()

    return started, loaded
