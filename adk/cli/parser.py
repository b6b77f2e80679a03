"""The `adk` command line's parser: one small function per command, and the options they share."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import NoReturn, TypeAlias

from adk.agui import MAX_BODY
from adk.cli.checks import message, port
from adk.cli.loading import DEFAULT_DB

__all__ = ["parse", "parser"]

_STORE_HELP = (
    f"session store: a SQLite file or a postgresql://user:password@host/db URL (default: {DEFAULT_DB};"
    " a module's own runner keeps its store unless given)"
)
_AGENT_HELP = "a Python file defining `agent` or `runner`"
_Commands: TypeAlias = "argparse._SubParsersAction[_Command]"


class _Parser(argparse.ArgumentParser):
    """A parser whose usage errors are one line, `PROG: error: WHAT` (exit 2), without the usage."""

    def error(self, message: str) -> NoReturn:
        if message == "the following arguments are required: COMMAND":
            message = f"a command is needed: {', '.join(_COMMANDS)} ({self.prog} --help says more)"
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Command(_Parser):
    """A command's parser: an argument it does not know is its error, not the top parser's."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        found, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return found, extras


_COMMANDS = ("demo", "create", "run", "serve", "web", "mcp")


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line `argv` (sys.argv's by default) parsed; a usage error exits 2 with one line."""
    top = parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        top.error(f"unrecognized arguments: {argv[0]}; a command comes first: {', '.join(_COMMANDS)}")
    return top.parse_args(argv)


def parser() -> argparse.ArgumentParser:
    """The parser of `adk COMMAND ...`: demo, create, run, serve, web, mcp serve, a2a serve and worker."""
    top = _Parser(prog="adk", description="Run adk agents from the command line.")
    top.add_argument("--version", action="version", version=_version())
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Command)
    _demo(commands)
    _create(commands)
    _run(commands)
    _serve(commands)
    _web(commands)
    _mcp(commands)
    _a2a(commands)
    _worker(commands)
    return top


def _demo(commands: _Commands) -> None:
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
    _sessions(demo, "keep the demo's session in this SQLite file or postgresql:// URL (default: in memory)")
    _log_level(demo)
    _verbose(demo)


def _create(commands: _Commands) -> None:
    create = commands.add_parser("create", help="write NAME/agent.py (a tool, a callback) and its tests")
    create.add_argument("name", metavar="NAME", help="the agent's name, and its folder's")


def _run(commands: _Commands) -> None:
    run = commands.add_parser("run", help="chat with the agent (or runner) defined in a Python file")
    run.add_argument("path", help=_AGENT_HELP)
    run.add_argument("-m", "--message", type=message, help="send this one message and exit")
    _sessions(run, _STORE_HELP)
    _log_level(run)
    _verbose(run)


def _serve(commands: _Commands) -> None:
    serve = commands.add_parser("serve", help="serve the agent in a Python file over AG-UI (the agui extra)")
    _served(serve)
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let browsers on this origin call the endpoint; repeat for more (default: none)",
    )
    _durable(serve)


def _web(commands: _Commands) -> None:
    web = commands.add_parser(
        "web", help="chat with the agent in a Python file on a web page, and watch it work (the agui extra)"
    )
    _served(web)
    _durable(web)


def _durable(p: argparse.ArgumentParser) -> None:
    """`adk serve` and `adk web` on durable runs: `adk worker` processes run them (docs/durable.md)."""
    p.add_argument(
        "--durable",
        action="store_true",
        help="put each run on the durable queue for `adk worker` processes, and stream its events "
        "from the sessions (the dbos extra)",
    )
    _system_database(p)


def _system_database(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--system-database",
        metavar="URL",
        help="DBOS's record of the runs: a postgresql:// URL shared by the fleet (default: SQLite here)",
    )


def _mcp(commands: _Commands) -> None:
    mcp = commands.add_parser("mcp", help="MCP: serve an agent as an MCP server (the mcp extra)")
    serve = mcp.add_subparsers(dest="mcp_command", required=True, metavar="COMMAND").add_parser(
        "serve", help="serve the agent in a Python file as an MCP server with one tool that runs it"
    )
    serve.add_argument("path", help=_AGENT_HELP)
    serve.add_argument("--port", type=port, help="serve streamable HTTP on this port (default: stdio)")
    serve.add_argument("--host", default="127.0.0.1", help="the address for HTTP (default: %(default)s)")
    serve.add_argument(
        "--insecure-anonymous", action="store_true", help="serve beyond loopback: anyone could run the agent"
    )
    serve.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=_STORE_HELP)
    _log_level(serve)


def _a2a(commands: _Commands) -> None:
    a2a = commands.add_parser("a2a", help="A2A: serve an agent to other agents (the a2a extra)")
    serve = a2a.add_subparsers(dest="a2a_command", required=True, metavar="COMMAND").add_parser(
        "serve", help="serve the agent in a Python file over A2A: its agent card and JSON-RPC"
    )
    _served(serve)
    serve.add_argument(
        "--url", help="the URL clients reach it at, published in the agent card (default: http://HOST:PORT/)"
    )


def _worker(commands: _Commands) -> None:
    worker = commands.add_parser(
        "worker", help="run queued durable runs of the agent in a Python file on DBOS (the dbos extra)"
    )
    worker.add_argument("path", help=_AGENT_HELP)
    worker.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=_STORE_HELP)
    _system_database(worker)
    worker.add_argument(
        "--executor-id",
        help="who this worker is: a worker restarted with it recovers its runs (default: local)",
    )
    worker.add_argument(
        "--concurrency", type=_count, help="runs at once across the fleet (default: no limit)"
    )
    worker.add_argument(
        "--worker-concurrency", type=_count, help="runs at once in this worker (default: no limit)"
    )
    worker.add_argument(
        "--rate-limit",
        type=_rate,
        metavar="RUNS/SECONDS",
        help="at most RUNS runs started per SECONDS across the fleet, e.g. 100/60 (default: no limit)",
    )
    worker.add_argument(
        "--recover",
        action="append",
        default=[],
        metavar="EXECUTOR_ID",
        help="put the runs a worker gone for good left pending back on the queue; repeat for more",
    )
    _log_level(worker)


def _count(text: str) -> int:
    """An argparse type: a whole number, 1 or more."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number, 1 or more, not {text!r}")
    return int(text)


def _rate(text: str) -> tuple[int, float]:
    """An argparse type: RUNS/SECONDS, a whole number 1 or more over a number of seconds above 0."""
    runs, _, seconds = text.partition("/")
    try:
        period = float(seconds)
    except ValueError:
        period = math.nan
    if not runs.isdigit() or int(runs) < 1 or not 0 < period < math.inf:
        raise argparse.ArgumentTypeError(
            f"expected RUNS/SECONDS (e.g. 100/60: at most 100 runs started per 60 seconds), "
            f"RUNS a whole number 1 or more and SECONDS more than 0, not {text!r}"
        )
    return int(runs), period


def _served(p: argparse.ArgumentParser) -> None:
    """The options `adk serve`, `adk web` and `adk a2a serve` share: where to listen, the store,
    who the client is."""
    p.add_argument("path", help=_AGENT_HELP)
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: %(default)s)")
    p.add_argument("--port", type=port, default=8000, help="the port (default: %(default)s)")
    p.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=_STORE_HELP)
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
    _log_level(p)


def _sessions(p: argparse.ArgumentParser, db_help: str) -> None:
    p.add_argument("--session", help="session id; reuse one to continue its conversation")
    p.add_argument("--user", default="user", help="user id (default: %(default)s)")
    p.add_argument("--sessions", "--db", dest="sessions", metavar="PATH|URL", help=db_help)


def _log_level(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        help="show adk's log records from this level on, on stderr (default: warnings only)",
    )


def _verbose(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show every event: its author, branch, kind, model, tokens, state change and "
        "the callback decisions it records",
    )


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
        return f"adk {version('adk-callbacks')}"
    except PackageNotFoundError:  # run from a checkout that was not installed
        return "adk (not installed)"
