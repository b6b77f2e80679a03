"""The `adk` commands, one function each, and `main`, which parses the line and runs one.

A user's mistake ends in one line on stderr starting `adk:` (a `CliError`), never a traceback;
the exit status is 0 ok, 1 failure, 2 bad usage, 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import logging
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adk.agui import is_loopback
from adk.callbacks.decisions import FellBack, Halted, Retried
from adk.callbacks.results import Raise
from adk.cli.checks import check_port, check_store, require
from adk.cli.create import create as write_agent
from adk.cli.create import load_dotenv
from adk.cli.display import Display, VisibleFormatter, visible
from adk.cli.durable import durably
from adk.cli.folder import close_folder, load_folder
from adk.cli.loading import close_sessions, load_function, load_runner, open_model, open_sessions
from adk.cli.parser import parse
from adk.context import ModelContext
from adk.errors import CliError, ModelConnectionError
from adk.events import Event, ObjectType, new_id
from adk.limits import Budget
from adk.runner import Runner

__all__ = ["a2a_serve", "create", "demo", "main", "mcp_serve", "run", "serve", "web", "worker"]

_EXIT_WORDS = {"/exit", "/quit", "exit", "quit"}
_AGUI_MODULES = ("ag_ui", "starlette", "uvicorn")
_A2A_MODULES = ("a2a", "starlette", "sse_starlette", "uvicorn")
_Identity = Callable[..., Any] | None


@dataclass(slots=True)
class _Tally:
    """What one turn did and cost, read from its events: model calls, tokens, the tools called."""

    calls: int = 0
    prompt: int = 0
    completion: int = 0
    reported: bool = False
    tools: set[str] = field(default_factory=set)
    ok: bool = False
    """Whether the turn went without an error event."""
    budget: Budget | None = None
    """A `Budget` of the runner's or its agent's with prices: the line shows the turn's cost."""
    usd: float = 0.0

    def add(self, event: Event) -> None:
        if event.is_partial:
            return
        # A failed attempt is told by the decision that recovered from it (a retry, a fallback),
        # or by the error event it ended the run with.
        self.calls += sum(
            isinstance(d, (Retried, FellBack)) and d.target.startswith("model:") for d in event.decisions
        )
        if event.object == ObjectType.ERROR:
            self.calls += bool(event.error and (event.error.where or "").startswith("model:"))
        elif event.object == ObjectType.CHAT_COMPLETION and event.author != "user":
            # a model's answer, named or not; a callback's halt stands in for one that never ran
            self.calls += not any(isinstance(d, Halted) for d in event.decisions)
            self.tools.update(c.function.name for c in event.tool_calls)
            if event.usage is not None:
                self.reported = True
                self.prompt += event.usage.prompt_tokens
                self.completion += event.usage.completion_tokens
                if self.budget is not None:
                    self.usd += self.budget.cost(event.model, event.usage) or 0.0

    def line(self, seconds: float) -> str:
        calls = f"{self.calls} model call{'' if self.calls == 1 else 's'}"
        tokens = (
            f"{self.prompt + self.completion} tokens ({self.prompt} in, {self.completion} out)"
            if self.reported
            else "tokens not reported"
        )
        spent = f" · ${self.usd:.6f}" if self.budget is not None and self.reported else ""
        return f"  ⏱ {seconds:.2f} s · {calls} · {tokens}{spent}"


async def _turn(
    runner: Runner,
    display: Display,
    user: str,
    session: str,
    message: str,
    *,
    stop: Callable[[], bool] = lambda: False,
) -> _Tally:
    """Run one message and show it, then a line of what it cost.

    `stop()` is asked before each event is shown: True ends the turn there, unshown and not ok.
    """
    display.failed = False
    priced = (
        c for c in (*runner.callbacks.objects, *runner.agent.callbacks.objects) if isinstance(c, Budget)
    )
    tally = _Tally(budget=next((b for b in priced if b.prices), None))
    started = time.perf_counter()
    async with aclosing(runner.run(user, session, message, stream=True)) as events:
        async for event in events:
            if stop():
                return tally
            tally.add(event)
            display.show(event)
    tally.ok = not display.failed
    if tally.calls or tally.ok:  # a turn that failed before any model call cost nothing worth a line
        display.info(tally.line(time.perf_counter() - started))
    return tally


class _Unreachable:
    """Ends the demo at the first model that cannot be reached, instead of retrying it scene by scene."""

    def __init__(self) -> None:
        self.error: ModelConnectionError | None = None

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        if isinstance(error, ModelConnectionError):
            self.error = error
            raise error  # the turn ends with a CallbackError, which the demo does not show
        return Raise(error)


def demo(args: argparse.Namespace, display: Display) -> int:
    """`adk demo`: play the demo conversation, on the scripted model or the one `--model` names."""
    from adk import demo as script

    model = open_model(args.model) if args.model else None
    agent, primary = script.build_agent(model, wait=args.wait, pace=args.pace)
    unreachable = _Unreachable()
    runner = Runner(
        agent,
        session_service=open_sessions(args.sessions) if args.sessions else None,
        callbacks=[unreachable],
    )
    session = args.session or new_id()[:12]
    who = f"model {args.model}" if args.model else "scripted model, no API key needed"
    display.out.write(f"adk demo: an assistant with a weather tool, a guardrail and recovery; {who}\n")

    async def play() -> bool:
        ok = True
        for turn in script.TURNS:
            display.heading(turn.note)
            display.user(turn.message)
            primary.fail_next(*turn.faults)
            tally = await _turn(
                runner, display, args.user, session, turn.message, stop=lambda: unreachable.error is not None
            )
            if unreachable.error is not None:
                display.err.write(
                    visible(f"adk: {unreachable.error} (is the server up?); the demo stops here\n")
                )
                return False
            if tally.ok and turn.tool and turn.tool not in tally.tools:
                display.info(
                    f"  (the model chose not to call {turn.tool}; small models often answer directly)"
                )
            ok = tally.ok and ok
        return ok

    try:
        return 0 if asyncio.run(play()) else 1
    finally:
        close_sessions(runner)


def create(args: argparse.Namespace, display: Display) -> int:
    """`adk create NAME`: write a runnable agent and its tests, and say how to use them."""
    agent, tests = write_agent(args.name)
    steps = {
        f"adk run {agent}": "chat with it",
        f"adk web {agent}": "watch it work on a page",
        f"python -m pytest {tests}": "run its tests, offline",
    }
    width = max(map(len, steps))
    display.out.write(f"wrote {agent} (a tool, a callback, a model) and {tests}\n")
    display.out.writelines(f"  {line:<{width}}  {what}\n" for line, what in steps.items())
    return 0


def run(args: argparse.Namespace, display: Display) -> int:
    """`adk run`: one message (`-m`), or a chat read line by line from stdin."""
    runner = load_runner(args.path, args.sessions)
    session = args.session or new_id()[:12]
    if not args.session:
        display.info(f"session {session} (continue it with --session {session})")
    with asyncio.Runner() as loop:
        try:
            if args.message is not None:
                return 0 if loop.run(_turn(runner, display, args.user, session, args.message)).ok else 1
            return _chat(lambda line: loop.run(_turn(runner, display, args.user, session, line)).ok, display)
        finally:
            close_sessions(runner, loop)


def _chat(turn: Callable[[str], bool], display: Display) -> int:
    """Read lines until the end of input or an exit word; each line is one run."""
    ok, typed = True, sys.stdin.isatty()
    while True:
        try:
            line = (input(display.prompt()) if typed else input()).strip()
        except EOFError:
            if typed:
                display.out.write("\n")
            return 0 if ok else 1
        if line in _EXIT_WORDS:
            return 0 if ok else 1
        if line:
            if not typed:
                display.user(line)  # so that a piped transcript reads like a typed one
            ok = turn(line) and ok


def serve(args: argparse.Namespace, display: Display) -> int:
    """`adk serve`: the agent's AG-UI endpoint."""

    def start(runner: Runner, identity: _Identity) -> None:
        from adk.agui import serve as serve_agui

        display.info(
            f"adk serve: the AG-UI endpoint is http://{_url_host(args.host)}:{args.port}/"
            " (POST a RunAgentInput; docs/agui.md)"
        )
        serve_agui(
            runner,
            args.host,
            args.port,
            identity=identity,
            insecure_anonymous=args.insecure_anonymous,
            max_body=args.max_body,
            cors_origins=args.cors_origin,
        )

    return _served(args, *durably(args, start, load_runner))


def web(args: argparse.Namespace, display: Display) -> int:
    """`adk web`: a page to chat with the agent and watch it work, and its AG-UI endpoint; given
    a folder, every agent file in it, with a page to pick one (adk.cli.folder)."""
    folder: dict[str, Runner] = {}

    def load_all(path: str, sessions: str | None) -> Runner:
        folder.update(load_folder(path, sessions))
        return next(iter(folder.values()))  # _served closes its store; start closes every one

    def start(runner: Runner, identity: _Identity) -> None:
        from adk.web import serve_web

        display.info(f"adk web: open http://{_url_host(args.host)}:{args.port}/")
        try:
            serve_web(
                folder or runner,
                args.host,
                args.port,
                identity=identity,
                insecure_anonymous=args.insecure_anonymous,
                max_body=args.max_body,
            )
        finally:
            close_folder(folder)

    if Path(args.path).is_dir():
        if args.durable:
            raise CliError("adk web --durable serves one agent file, not a folder")
        return _served(args, start, load_all)
    return _served(args, *durably(args, start, load_runner))


def a2a_serve(args: argparse.Namespace, display: Display) -> int:
    """`adk a2a serve`: the agent's A2A card and JSON-RPC endpoint."""

    def start(runner: Runner, identity: _Identity) -> None:
        from adk.a2a import serve as serve_a2a

        serve_a2a(
            runner,
            args.host,
            args.port,
            url=args.url,
            identity=identity,
            insecure_anonymous=args.insecure_anonymous,
            max_body=args.max_body,
        )

    return _served(args, start, extra="a2a", modules=_A2A_MODULES)


def _served(
    args: argparse.Namespace,
    start: Callable[[Runner, _Identity], None],
    load: Callable[[str, str | None], Runner] = load_runner,
    *,
    extra: str = "agui",
    modules: tuple[str, ...] = _AGUI_MODULES,
) -> int:
    """Refuse an open door, a missing extra, a port in use; load the agent and the identity
    function, check the store; then `start` serving."""
    if not args.identity and not args.insecure_anonymous and not is_loopback(args.host):
        raise CliError(
            f"refusing to serve on {args.host} without --identity MODULE:FUNCTION: every client would be "
            "'anonymous' and could read any thread it names (--insecure-anonymous serves it anyway)"
        )
    require(modules, extra, f"adk {args.command}")
    check_port(args.host, args.port)
    runner = load(args.path, args.sessions)  # first, so that the identity may live beside the agent
    try:
        identity = load_function(args.identity, "--identity") if args.identity else None
        check_store(runner.session_service)
        start(runner, identity)
    finally:
        close_sessions(runner)
    return 0


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def mcp_serve(args: argparse.Namespace, display: Display) -> int:
    """`adk mcp serve`: the agent as an MCP server: over stdio, or streamable HTTP with --port."""
    if args.port is not None and not args.insecure_anonymous and not is_loopback(args.host):
        raise CliError(
            f"refusing to serve MCP on {args.host}: any client that reaches it could run the agent "
            "(--insecure-anonymous serves it anyway)"
        )
    require(("mcp",), "mcp", "adk mcp serve")  # the SDK, checked before the agent loads
    if args.port is not None:
        check_port(args.host, args.port)
    from adk import mcp_server

    with contextlib.redirect_stdout(sys.stderr):  # over stdio, stdout carries the protocol only
        runner = load_runner(args.path, args.sessions)
    try:
        check_store(runner.session_service)
        if args.port is not None:
            url = f"http://{_url_host(args.host)}:{args.port}/mcp"
            display.info(f"adk mcp serve: streamable HTTP at {url} (docs/mcp.md)")
        mcp_server.serve(runner, port=args.port, host=args.host, insecure_anonymous=True)
    finally:
        close_sessions(runner)
    return 0


def worker(args: argparse.Namespace, display: Display) -> int:
    """`adk worker`: take durable runs of the file's agent from its DBOS queue until stopped."""
    from adk.cli.durable import work

    return work(args, display)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 failure, 2 bad usage, 130 interrupted)."""
    args = parse(argv)
    display = _prepare(args)
    try:
        return _COMMANDS.get(args.command, serve)(args, display)
    except CliError as e:
        display.err.write(visible(f"adk: {e}\n"))
        return 1
    except KeyboardInterrupt:
        display.err.write("\nadk: interrupted\n")
        return 130
    except Exception as e:
        display.err.write(visible(f"adk: {type(e).__name__}: {e}\n"))
        return 1


_COMMANDS: dict[str, Callable[[argparse.Namespace, Display], int]] = {
    "demo": demo,
    "create": create,
    "run": run,
    "mcp": mcp_serve,
    "a2a": a2a_serve,
    "web": web,
    "worker": worker,
}
"""The commands `main` dispatches by name (`serve` otherwise)."""


def _prepare(args: argparse.Namespace) -> Display:
    """The streams, the log, `.env` and the display, as the parsed command line asks."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")  # a terminal that can't show a symbol gets a '?'
    if getattr(args, "log_level", None):
        _log_to_stderr(args.log_level)
    display = Display(verbose=getattr(args, "verbose", False))
    if (unread := load_dotenv()) is not None:
        display.info(f"adk: {unread}")
    return display


def _log_to_stderr(level: str) -> None:
    """Show adk's log records from `level` on, on stderr, their quoted text shown, not obeyed."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("adk")
    logger.addHandler(handler)
    logger.setLevel(level.upper())
