"""What a command checks before it starts, so that a user's mistake is one line and not a
traceback or a server that starts and then fails: the store a `--sessions` names, a port to
listen on, an extra's packages, a store that must be reachable.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import importlib
import socket
from pathlib import Path

from adk.errors import CliError
from adk.sessions import SessionService

__all__ = ["check_port", "check_store", "make_folder", "message", "port", "require", "store_location"]

_POSTGRES = ("postgresql://", "postgres://")
_SQLITE = "sqlite:///"


def store_location(where: str) -> str:
    """What `open_store` takes for a `--sessions` value: a path, `sqlite:///PATH` or a PostgreSQL URL.

    `sqlite:///PATH` names PATH as SQLAlchemy reads it (`sqlite:///x.db` is relative,
    `sqlite:////var/x.db` absolute). Any other `scheme://` is refused: it would be a file's name.
    """
    if where.startswith(_POSTGRES):
        require(("asyncpg",), "postgres", f"--sessions {where.partition('://')[0]}://…")
        return where
    if where.startswith(_SQLITE):
        path = where.removeprefix(_SQLITE)
        if not path:
            raise CliError(f"--sessions {where!r}: sqlite:/// names no file (e.g. sqlite:///sessions.db)")
        return path
    scheme, sep, _ = where.partition("://")
    if sep:
        raise CliError(
            f"--sessions {scheme}://…: adk keeps sessions in SQLite (a path or sqlite:///PATH) or "
            f"PostgreSQL (postgresql://…), not {scheme}"
        )
    return where


def make_folder(path: str) -> None:
    """Make the folder of a SQLite file, refused in one line when it cannot be made."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"--sessions {path}: cannot make its folder: {e.strerror or e}") from e


def check_store(store: SessionService) -> None:
    """Refuse a store that cannot be reached now, rather than serve requests that would fail.

    A store holding a pool (PostgreSQL) is closed after the check: its pool belongs to the event
    loop that opened it, and the server opens it again in its own.
    """

    async def probe() -> None:
        try:
            await store.list_sessions("adk-start-up-check")
        finally:
            close = getattr(store, "close", None)
            if close is not None and asyncio.iscoroutinefunction(close):
                await close()

    try:
        asyncio.run(probe())
    except ConnectionError as e:  # what a store raises when it cannot open: its line names it
        raise CliError(str(e)) from e
    except Exception as e:
        raise CliError(f"the session store cannot be reached: {type(e).__name__}: {e}") from e


def check_port(host: str, number: int) -> None:
    """Refuse a port that cannot be listened on (in use, or not allowed), before anything starts."""
    try:
        family = socket.getaddrinfo(host, number, type=socket.SOCK_STREAM)[0][0]
        with socket.create_server((host, number), family=family):  # SO_REUSEADDR, as uvicorn's
            pass
    except OSError as e:
        reason = "it is in use (another server?)" if e.errno == errno.EADDRINUSE else e.strerror
        raise CliError(
            f"cannot listen on {host}:{number}: {reason or e}; choose another port with --port"
        ) from e


def require(modules: tuple[str, ...], extra: str, what: str) -> None:
    """Refuse `what` when one of `modules` (of the `extra` extra) cannot be imported, naming the
    line that installs them."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise CliError(
                f"{what} needs the {extra} extra: pip install 'adk-callbacks[{extra}]' (no module {module!r})"
            ) from e


def port(text: str) -> int:
    """An argparse type: a TCP port, 1 to 65535."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535, not {text!r}")
    return int(text)


def message(text: str) -> str:
    """An argparse type: a message with something in it (an empty one would reach the model as is)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a message to send, not {text!r}")
    return text
