"""The `adk` command line: play the demo, chat with your agent, or serve it over AG-UI.

    adk demo [--model openai:<name>]
    adk run path/to/agent.py [-m MESSAGE] [--session ID] [--user ID] [--sessions PATH|URL]
    adk serve path/to/agent.py [--host HOST] [--port PORT] [--sessions PATH|URL]

A run is shown as it happens: streamed text, tool calls and their results, and what callbacks
decided (a halt, a replaced output, a retry and its wait, a fallback), all read from the run's
events by `Display`. The library itself never prints.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TextIO, assert_never

from adk.agents.base import BaseAgent
from adk.callbacks.decisions import Decision, Deferred, FellBack, Halted, Replaced, Retried
from adk.errors import AdkError, CliError
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
        self, out: TextIO | None = None, err: TextIO | None = None, *, color: bool | None = None
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = _wants_color(self.out) if color is None else color
        self.failed = False
        """Whether an error event was shown."""
        self._open: tuple[str, str] | None = None
        """The (branch, author) whose streamed text is on the current line."""

    def show(self, event: Event) -> None:
        """Show one event of the run."""
        if event.author == "user":
            return
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
                case unreachable:
                    assert_never(unreachable)

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


async def _turn(runner: Runner, display: Display, user: str, session: str, message: str) -> bool:
    """Run one message; whether it went without an error event."""
    display.failed = False
    async with aclosing(runner.run(user, session, message, stream=True)) as events:
        async for event in events:
            display.show(event)
    return not display.failed


def _demo(args: argparse.Namespace, display: Display) -> int:
    from adk import demo

    model = _openai(args.model) if args.model else None
    agent, primary = demo.build_agent(model, wait=args.wait, pace=args.pace)
    runner = Runner(agent, session_service=_store(args.sessions) if args.sessions else None)
    session = args.session or new_id()[:12]
    who = f"model {args.model}" if args.model else "scripted model, no API key needed"
    display.out.write(f"adk demo: an assistant with a weather tool, a guardrail and recovery; {who}\n")

    async def play() -> bool:
        ok = True
        for turn in demo.TURNS:
            display.heading(turn.note)
            display.user(turn.message)
            primary.fail_next(*turn.faults)
            ok = await _turn(runner, display, args.user, session, turn.message) and ok
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
                return 0 if loop.run(_turn(runner, display, args.user, session, args.message)) else 1
            return _chat(lambda line: loop.run(_turn(runner, display, args.user, session, line)), display)
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


def _serve(args: argparse.Namespace) -> int:
    runner = load_runner(args.path, args.sessions)
    try:
        from adk.agui import serve

        serve(runner, args.host, args.port)
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] not in _AGUI_PACKAGES:
            raise
        raise CliError(
            f"adk serve needs the agui extra: pip install 'adk[agui]' (no module {e.name!r})"
        ) from e
    finally:
        _close(runner)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adk", description="Run adk agents from the command line.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def sessions(p: argparse.ArgumentParser, db_help: str) -> None:
        p.add_argument("--session", help="session id; reuse one to continue its conversation")
        p.add_argument("--user", default="user", help="user id (default: user)")
        p.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=db_help)

    demo = commands.add_parser("demo", help="play a demo conversation (no API key needed)")
    demo.add_argument(
        "--model", help="play it on a real model: openai:<name> (OPENAI_BASE_URL, OPENAI_API_KEY)"
    )
    demo.add_argument("--wait", type=float, default=0.2, help="seconds between retry attempts (default 0.2)")
    demo.add_argument(
        "--pace", type=float, default=0.03, help="seconds between streamed words (default 0.03)"
    )
    sessions(demo, "keep the demo's session in this SQLite file or postgresql:// URL (default: in memory)")

    run = commands.add_parser("run", help="chat with the agent (or runner) defined in a Python file")
    run.add_argument("path", help="a Python file defining `agent` or `runner`")
    run.add_argument("-m", "--message", help="send this one message and exit")
    store_help = (
        f"session store: a SQLite file or a postgresql://user:password@host/db URL (default: {DEFAULT_DB};"
        " a module's own runner keeps its store unless given)"
    )
    sessions(run, store_help)

    serve = commands.add_parser("serve", help="serve the agent in a Python file over AG-UI (the agui extra)")
    serve.add_argument("path", help="a Python file defining `agent` or `runner`")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=store_help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 failure, 2 bad usage, 130 interrupted)."""
    args = _parser().parse_args(argv)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")  # a terminal that can't show a symbol gets a '?'

    display = Display()
    try:
        match args.command:
            case "demo":
                return _demo(args, display)
            case "run":
                return _run(args, display)
            case _:
                return _serve(args)
    except CliError as e:
        display.err.write(f"adk: {e}\n")
        return 1
    except KeyboardInterrupt:
        display.err.write("\nadk: interrupted\n")
        return 130
    except Exception as e:
        display.err.write(f"adk: {type(e).__name__}: {e}\n")
        return 1
