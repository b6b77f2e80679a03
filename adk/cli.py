"""The `adk` command line: play the demo, chat with your agent, serve it over AG-UI or on a web page.

    adk demo [--model openai:<name>] [--wait S] [--pace S] [--log-level LEVEL] [--verbose]
    adk run path/to/agent.py [-m MESSAGE] [--session ID] [--user ID] [--sessions PATH|URL] [--verbose] ...
    adk serve path/to/agent.py [--host HOST] [--port PORT] [--sessions PATH|URL] [--identity M:F] ...
    adk web path/to/agent.py [--host HOST] [--port PORT] [--sessions PATH|URL] [--identity M:F] ...
    adk mcp serve path/to/agent.py [--port PORT [--host HOST]] [--sessions PATH|URL]

A run is shown as it happens: streamed text, tool calls and their results, and what callbacks
decided (a halt, a replaced output, a retry and its wait, a fallback), all read from the run's
events by `Display`. The library itself never prints.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import io
import json
import logging
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, assert_never

from adk.agents.base import BaseAgent
from adk.agui import MAX_BODY, is_loopback
from adk.callbacks.decisions import (
    Approved,
    Decision,
    Deferred,
    FellBack,
    Halted,
    Rejected,
    Replaced,
    Retried,
)
from adk.callbacks.results import Raise
from adk.context import ModelContext
from adk.errors import AdkError, CliError, ModelConnectionError
from adk.events import Event, ObjectType, new_id
from adk.models.base import Model
from adk.runner import Runner
from adk.sessions import SessionService, open_store
from adk.sessions.sqlite import SqliteSessionService

__all__ = ["CliError", "Display", "load", "load_runner", "main"]

DEFAULT_DB = Path(".adk") / "sessions.sqlite3"
_EXIT_WORDS = {"/exit", "/quit", "exit", "quit"}
_AGUI_PACKAGES = {"adk", "ag_ui", "starlette", "uvicorn"}


class Display:
    """Shows a run readably, from its events: text, tool calls and results, and callback decisions.

    What callbacks decided is read from the events (`Event.decisions`): a model call's recoveries
    as they happen (`attempt.failed`), a halt or a replaced output on the event it shaped.
    """

    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        *,
        color: bool | None = None,
        verbose: bool = False,
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = _wants_color(self.out) if color is None else color
        self.verbose = verbose
        """Whether every complete event (and every decision it records) gets a line of its own too."""
        self.failed = False
        """Whether an error event was shown."""
        self._open: tuple[str, str] | None = None
        """The (branch, author) whose streamed text is on the current line."""

    def show(self, event: Event) -> None:
        """Show one event of the run (and, when verbose, a line of what it records)."""
        if event.author != "user":
            self._show(event)
        if self.verbose and (not event.is_partial or event.decisions):
            self._trace(event)

    def _show(self, event: Event) -> None:
        match event.object:
            case ObjectType.CHAT_COMPLETION_CHUNK:
                if event.content:
                    self._stream(event)
            case ObjectType.CHAT_COMPLETION:
                self._response(event)
            case ObjectType.TOOL_RESPONSE:
                self._tool_result(event)
            case ObjectType.ATTEMPT_FAILED:
                self._close()
                self._decisions(event.decisions)
            case ObjectType.ATTEMPT_DISCARDED:
                self._close()
                note = event.error.message if event.error else "a streamed attempt failed"
                self._note("⟲", f"discarded: {note}", "33")
            case ObjectType.ERROR:
                self._close()
                self.failed = True
                info = event.error
                text = f"{info.type}: {info.message}" if info else "unknown error"
                where = f" [{info.where}]" if info and info.where else ""
                self.err.write(self._style(f"✗ error: {text}{where}", "31") + "\n")
                self.err.flush()

    def user(self, message: str) -> None:
        """Echo what the user said (the demo types it for them)."""
        self._close()
        self._write(self._style("you:", "1") + f" {message}\n")

    def heading(self, text: str) -> None:
        self._close()
        self._write(self._style(f"\n── {text}", "2") + "\n")

    def prompt(self) -> str:
        return self._style("you:", "1") + " "

    def info(self, text: str) -> None:
        self.err.write(self._style(text, "2") + "\n")
        self.err.flush()

    def _decisions(self, decisions: Iterable[Decision]) -> None:
        for decision in decisions:
            who = decision.by.removeprefix("callback:")
            kind, _, name = decision.target.partition(":")
            target = f"{kind} {name}"
            match decision:
                case Halted():
                    what = "the model was not called" if kind == "model" else "it did not run"
                    self._note("⛔", f"{who} halted {target}; {what}", "35")
                case Replaced():
                    self._note("✎", f"{who} replaced the output of {target}", "35")
                case Retried(wait=wait, attempt=attempt):
                    failed = f"{target} failed ({decision.error}: {decision.message})"
                    self._note("↻", f"{failed}; {who} retries in {wait:.2f} s (attempt {attempt})", "33")
                case FellBack(to=to):
                    failed = f"{target} failed ({decision.error}: {decision.message})"
                    instead = "a fallback result" if to is None else to.replace(":", " ", 1)
                    self._note("⇄", f"{failed}; {who} falls back to {instead}", "33")
                case Deferred(reason=reason):
                    self._note("⏸", f"{who} deferred {target} for approval: {reason}", "35")
                case Approved(call_id=call_id):
                    self._note("✔", f"{target} approved ({call_id}); it runs", "32")
                case Rejected(call_id=call_id, reason=reason):
                    because = f": {reason}" if reason else ""
                    self._note("⊘", f"{target} rejected ({call_id}){because}; it does not run", "35")
                case unreachable:
                    assert_never(unreachable)

    def _trace(self, event: Event) -> None:
        """One line for the event: who, where, what, the model's usage, the state it changed, and
        each decision it records (`by → kind`), repeats included."""
        self._close()
        parts = [event.author, f"[{event.branch}]" if event.branch else "", event.object]
        if event.model:
            parts.append(f"model {event.model}")
        if event.usage is not None:
            parts.append(f"{event.usage.prompt_tokens} in / {event.usage.completion_tokens} out tokens")
        if event.actions.state_delta:
            parts.append(f"Δ {json.dumps(event.actions.state_delta, ensure_ascii=False, default=str)}")
        parts += (f"{d.by.removeprefix('callback:')} → {d.kind}" for d in event.decisions)
        self._write(self._style(f"  · {' '.join(p for p in parts if p)}", "2") + "\n")

    def _response(self, event: Event) -> None:
        key = (event.branch, event.author)
        decisions = event.fresh_decisions()
        if decisions:
            self._close()
            self._decisions(decisions)
        message = event.message
        if message is None:
            return
        if self._open == key:
            self._close()
        elif message.content:
            self._close()
            self._write(self._speaker(event.author) + message.content + "\n")
        for call in message.tool_calls:
            self._note("⚙", f"{call.function.name}({_arguments(call.function.arguments)})", "36")

    def _stream(self, event: Event) -> None:
        key = (event.branch, event.author)
        if self._open != key:
            self._close()
            self._write(self._speaker(event.author))
            self._open = key
        self._write(event.content)

    def _tool_result(self, event: Event) -> None:
        self._close()
        self._decisions(event.fresh_decisions())
        message = event.message
        if message is None:
            return
        text = _clip(message.content)
        if event.error is not None:
            self._note("✗", f"{message.name}: {text}", "31")
        else:
            self._note("↳", text, "2")

    def _speaker(self, author: str) -> str:
        return self._style(f"{author}:", "1;36") + " "

    def _note(self, mark: str, text: str, code: str) -> None:
        self._write(self._style(f"  {mark} {text}", code) + "\n")

    def _close(self) -> None:
        if self._open is not None:
            self._open = None
            self._write("\n")

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text


def _wants_color(stream: TextIO) -> bool:
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def _arguments(raw: str) -> str:
    try:
        args = json.loads(raw or "{}")
    except ValueError:
        return _clip(raw)
    if not isinstance(args, dict):
        return _clip(raw)
    return _clip(", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items()))


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- loading a user's agent ---


def load(path: str) -> Runner | BaseAgent:
    """Load the Python file at `path` and return the `runner` or `agent` it defines."""
    file = Path(path)
    if not file.is_file():
        raise CliError(f"{path}: no such file")
    stem = file.stem
    name = stem if stem.isidentifier() and stem not in sys.modules else f"_adk_user_{new_id()[:8]}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise CliError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(file.resolve().parent))  # so that it can import its neighbours
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if Path(f.filename) == file.resolve()]
        where = f"{path}:{frames[-1].lineno}" if frames else path
        raise CliError(f"{where}: {type(e).__name__}: {e}") from e
    found = vars(module)
    runner, agent = found.get("runner"), found.get("agent")
    if runner is not None:
        if not isinstance(runner, Runner):
            raise CliError(f"{path}: `runner` is a {type(runner).__name__}, not an adk Runner")
        return runner
    if agent is not None:
        if not isinstance(agent, BaseAgent):
            raise CliError(f"{path}: `agent` is a {type(agent).__name__}, not an adk agent (a BaseAgent)")
        return agent
    raise CliError(
        f"{path} defines neither `agent` (an adk agent such as LlmAgent) nor `runner` (a Runner); "
        "define one of them at module level"
    )


def load_runner(path: str, sessions: str | None = None) -> Runner:
    """The runner for the file at `path`: its own `runner`, or one around its `agent`.

    A runner made here keeps sessions in `sessions` (a SQLite path or a `postgresql://` URL;
    by default `.adk/sessions.sqlite3`); a module's own runner keeps its store unless
    `sessions` is given.
    """
    found = load(path)
    if isinstance(found, BaseAgent):
        return Runner(found, session_service=_store(sessions or str(DEFAULT_DB)))
    if sessions:
        found.session_service = _store(sessions)
    return found


def _store(where: str) -> SessionService:
    """The store at `where`; a SQLite file's directory is made if missing."""
    if not where.startswith(("postgresql:", "postgres:")):
        Path(where).parent.mkdir(parents=True, exist_ok=True)
    try:
        return open_store(where)
    except ValueError as e:
        raise CliError(f"--sessions: {e}") from e


def _close(runner: Runner, loop: asyncio.Runner | None = None) -> None:
    store = runner.session_service
    if isinstance(store, SqliteSessionService):
        store.close()
    elif loop is not None and (close := getattr(store, "close", None)) is not None:
        loop.run(close())  # PostgreSQL: its pool belongs to this loop


def _openai(spec: str) -> Model:
    provider, _, name = spec.partition(":")
    if provider != "openai" or not name:
        raise CliError(f"--model {spec!r}: expected openai:<model name>")
    try:
        from adk.models.openai import OpenAIModel
    except ImportError as e:
        raise CliError(f"--model {spec!r}: the OpenAI adapter is not available ({e})") from e
    try:
        return OpenAIModel(name)
    except AdkError as e:
        raise CliError(f"--model {spec!r}: {e}") from e


# --- commands ---


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
        elif event.object == ObjectType.CHAT_COMPLETION and event.author != "user" and event.model:
            self.calls += 1  # a model's answer (a callback's halt names no model)
            self.tools.update(c.function.name for c in event.tool_calls)
            if event.usage is not None:
                self.reported = True
                self.prompt += event.usage.prompt_tokens
                self.completion += event.usage.completion_tokens

    def line(self, seconds: float) -> str:
        calls = f"{self.calls} model call{'' if self.calls == 1 else 's'}"
        tokens = (
            f"{self.prompt + self.completion} tokens ({self.prompt} in, {self.completion} out)"
            if self.reported
            else "tokens not reported"
        )
        return f"  ⏱ {seconds:.2f} s · {calls} · {tokens}"


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
    tally = _Tally()
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


def _demo(args: argparse.Namespace, display: Display) -> int:
    from adk import demo

    model = _openai(args.model) if args.model else None
    agent, primary = demo.build_agent(model, wait=args.wait, pace=args.pace)
    unreachable = _Unreachable()
    runner = Runner(
        agent, session_service=_store(args.sessions) if args.sessions else None, callbacks=[unreachable]
    )
    session = args.session or new_id()[:12]
    who = f"model {args.model}" if args.model else "scripted model, no API key needed"
    display.out.write(f"adk demo: an assistant with a weather tool, a guardrail and recovery; {who}\n")

    async def play() -> bool:
        ok = True
        for turn in demo.TURNS:
            display.heading(turn.note)
            display.user(turn.message)
            primary.fail_next(*turn.faults)
            tally = await _turn(
                runner, display, args.user, session, turn.message, stop=lambda: unreachable.error is not None
            )
            if unreachable.error is not None:
                display.err.write(f"adk: {unreachable.error} (is the server up?); the demo stops here\n")
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
        _close(runner)


def _run(args: argparse.Namespace, display: Display) -> int:
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
            _close(runner, loop)


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


def _serve(args: argparse.Namespace, display: Display) -> int:
    """`adk serve` (the AG-UI endpoint) or `adk web` (the page and the endpoint)."""
    if not args.identity and not args.insecure_anonymous and not is_loopback(args.host):
        raise CliError(
            f"refusing to serve on {args.host} without --identity MODULE:FUNCTION: every client would be "
            "'anonymous' and could read any thread it names (--insecure-anonymous serves it anyway)"
        )
    runner = load_runner(args.path, args.sessions)  # first, so that the identity may live beside the agent
    try:
        identity = _function(args.identity, "--identity") if args.identity else None
        if args.command == "web":
            from adk.web import serve_web

            display.info(f"adk web: open http://{_url_host(args.host)}:{args.port}/")
            serve_web(
                runner,
                args.host,
                args.port,
                identity=identity,
                insecure_anonymous=args.insecure_anonymous,
                max_body=args.max_body,
            )
        else:
            from adk.agui import serve

            serve(
                runner,
                args.host,
                args.port,
                identity=identity,
                insecure_anonymous=args.insecure_anonymous,
                max_body=args.max_body,
                cors_origins=args.cors_origin,
            )
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] not in _AGUI_PACKAGES:
            raise
        raise CliError(
            f"adk {args.command} needs the agui extra: pip install 'adk[agui]' (no module {e.name!r})"
        ) from e
    finally:
        _close(runner)
    return 0


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _function(spec: str, option: str) -> Callable[..., Any]:
    """The function `module:name` names (importable from the working directory or the agent's)."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise CliError(f"{option} {spec!r}: expected MODULE:FUNCTION, e.g. auth:identify")
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as e:
        raise CliError(f"{option} {spec!r}: cannot import {module_name}: {type(e).__name__}: {e}") from e
    finally:
        sys.path.remove(os.getcwd())
    fn = getattr(module, name, None)
    if not callable(fn):
        raise CliError(f"{option} {spec!r}: {module_name} has no function {name!r}")
    return fn  # type: ignore[no-any-return]


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected a number of seconds, 0 or more, not {text!r}")
    return value


def _bytes(text: str) -> int:
    """An argparse type: a number of bytes, 1 or more."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of bytes, 1 or more, not {text!r}")
    return int(text)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"adk {version('adk')}"
    except PackageNotFoundError:  # run from a checkout that was not installed
        return "adk (not installed)"


def _mcp_serve(args: argparse.Namespace) -> int:
    """Serve the agent as an MCP server: over stdio, or streamable HTTP with --port."""
    if args.port is not None and not args.insecure_anonymous and not is_loopback(args.host):
        raise CliError(
            f"refusing to serve MCP on {args.host}: any client that reaches it could run the agent "
            "(--insecure-anonymous serves it anyway)"
        )
    try:
        import mcp  # noqa: F401  # the SDK, checked before the agent loads
    except ModuleNotFoundError as e:
        raise CliError(
            f"adk mcp serve needs the mcp extra: pip install 'adk[mcp]' (no module {e.name!r})"
        ) from e
    from adk import mcp_server

    with contextlib.redirect_stdout(sys.stderr):  # over stdio, stdout carries the protocol only
        runner = load_runner(args.path, args.sessions)
    try:
        mcp_server.serve(runner, port=args.port, host=args.host, insecure_anonymous=True)
    finally:
        _close(runner)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adk", description="Run adk agents from the command line.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def sessions(p: argparse.ArgumentParser, db_help: str) -> None:
        p.add_argument("--session", help="session id; reuse one to continue its conversation")
        p.add_argument("--user", default="user", help="user id (default: %(default)s)")
        p.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=db_help)

    def log_level(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--log-level",
            choices=["debug", "info", "warning", "error"],
            help="show adk's log records from this level on, on stderr (default: warnings only)",
        )

    def verbose(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="also show every event: its author, branch, kind, model, tokens, state change and "
            "the callback decisions it records",
        )

    demo = commands.add_parser("demo", help="play a demo conversation (no API key needed)")
    demo.add_argument(
        "--model", help="play it on a real model: openai:<name> (OPENAI_BASE_URL, OPENAI_API_KEY)"
    )
    demo.add_argument(
        "--wait", type=_seconds, default=0.2, help="seconds between retry attempts (default: %(default)s)"
    )
    demo.add_argument(
        "--pace", type=_seconds, default=0.03, help="seconds between streamed words (default: %(default)s)"
    )
    sessions(demo, "keep the demo's session in this SQLite file or postgresql:// URL (default: in memory)")
    log_level(demo)
    verbose(demo)

    run = commands.add_parser("run", help="chat with the agent (or runner) defined in a Python file")
    run.add_argument("path", help="a Python file defining `agent` or `runner`")
    run.add_argument("-m", "--message", help="send this one message and exit")
    store_help = (
        f"session store: a SQLite file or a postgresql://user:password@host/db URL (default: {DEFAULT_DB};"
        " a module's own runner keeps its store unless given)"
    )
    sessions(run, store_help)
    log_level(run)
    verbose(run)

    def served(p: argparse.ArgumentParser) -> None:
        p.add_argument("path", help="a Python file defining `agent` or `runner`")
        p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: %(default)s)")
        p.add_argument("--port", type=int, default=8000, help="the port (default: %(default)s)")
        p.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=store_help)
        p.add_argument(
            "--identity",
            metavar="MODULE:FUNCTION",
            help="a function of the request returning its user id, or None to refuse it (401); "
            "required beyond loopback (default: every client is 'anonymous')",
        )
        p.add_argument(
            "--insecure-anonymous",
            action="store_true",
            help="serve beyond loopback without --identity: anyone can read any thread they name",
        )
        p.add_argument(
            "--max-body",
            type=_bytes,
            default=MAX_BODY,
            metavar="BYTES",
            help="refuse larger request bodies with 413 (default: %(default)s)",
        )
        log_level(p)

    serve = commands.add_parser("serve", help="serve the agent in a Python file over AG-UI (the agui extra)")
    served(serve)
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let browsers on this origin call the endpoint; repeat for more (default: none)",
    )
    web = commands.add_parser(
        "web", help="chat with the agent in a Python file on a web page, and watch it work (the agui extra)"
    )
    served(web)

    mcp = commands.add_parser("mcp", help="MCP: serve an agent as an MCP server (the mcp extra)")
    mcp_serve = mcp.add_subparsers(dest="mcp_command", required=True, metavar="COMMAND").add_parser(
        "serve", help="serve the agent in a Python file as an MCP server with one tool that runs it"
    )
    mcp_serve.add_argument("path", help="a Python file defining `agent` or `runner`")
    mcp_serve.add_argument("--port", type=int, help="serve streamable HTTP on this port (default: stdio)")
    mcp_serve.add_argument("--host", default="127.0.0.1", help="the address for HTTP (default: %(default)s)")
    mcp_serve.add_argument(
        "--insecure-anonymous", action="store_true", help="serve beyond loopback: anyone could run the agent"
    )
    mcp_serve.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=store_help)
    log_level(mcp_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 failure, 2 bad usage, 130 interrupted)."""
    args = _parser().parse_args(argv)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")  # a terminal that can't show a symbol gets a '?'

    if args.log_level:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger = logging.getLogger("adk")
        logger.addHandler(handler)
        logger.setLevel(args.log_level.upper())
    display = Display(verbose=getattr(args, "verbose", False))
    try:
        match args.command:
            case "demo":
                return _demo(args, display)
            case "run":
                return _run(args, display)
            case "mcp":
                return _mcp_serve(args)
            case _:
                return _serve(args, display)
    except CliError as e:
        display.err.write(f"adk: {e}\n")
        return 1
    except KeyboardInterrupt:
        display.err.write("\nadk: interrupted\n")
        return 130
    except Exception as e:
        display.err.write(f"adk: {type(e).__name__}: {e}\n")
        return 1
