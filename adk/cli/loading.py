"""Loading what a command names: a user's agent file, a session store, a model, a function.

A user's mistake (a missing file, an exception at its import, no `agent` in it, a bad URL or
spec) is one `CliError` line naming the file (and line) or the option; never a traceback.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import sqlite3
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adk.agents.base import BaseAgent
from adk.cli.checks import make_folder, store_location
from adk.errors import CliError
from adk.events import new_id
from adk.models.base import Model
from adk.runner import Runner
from adk.sessions import SessionService, open_store
from adk.sessions.sqlite import SqliteSessionService

__all__ = [
    "DEFAULT_DB",
    "close_sessions",
    "load",
    "load_function",
    "load_runner",
    "open_model",
    "open_sessions",
]

DEFAULT_DB = Path(".adk") / "sessions.sqlite3"


def load(path: str) -> Runner | BaseAgent:
    """Load the Python file at `path` and return the `runner` or `agent` it defines."""
    file = Path(path)
    if file.is_dir():
        raise CliError(f"{path}: a folder; name the Python file defining the agent ({file / 'agent.py'}?)")
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
            raise CliError(f"{path}: `runner` is {_a(type(runner).__name__)}, not an adk Runner")
        return runner
    if agent is not None:
        if not isinstance(agent, BaseAgent):
            raise CliError(f"{path}: `agent` is {_a(type(agent).__name__)}, not an adk agent (a BaseAgent)")
        return agent
    raise CliError(
        f"{path} defines neither `agent` (an adk agent such as LlmAgent) nor `runner` (a Runner); "
        "define one of them at module level"
    )


def _a(noun: str) -> str:
    """`noun` with its article: a function, an int."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def load_runner(path: str, sessions: str | None = None) -> Runner:
    """The runner for the file at `path`: its own `runner`, or one around its `agent`.

    A runner made here keeps sessions in `sessions` (a SQLite path or a `postgresql://` URL;
    by default `.adk/sessions.sqlite3`); a module's own runner keeps its store unless
    `sessions` is given.
    """
    found = load(path)
    if isinstance(found, BaseAgent):
        return Runner(found, session_service=open_sessions(sessions or str(DEFAULT_DB)))
    if sessions:
        found.session_service = open_sessions(sessions)
    return found


def open_sessions(where: str) -> SessionService:
    """The store `where` names (a path, `sqlite:///PATH`, a `postgresql://` URL: see
    `checks.store_location`); a SQLite file's folder is made if missing."""
    location = store_location(where)
    if not location.startswith(("postgresql:", "postgres:")):
        make_folder(location)
    try:
        return open_store(location)
    except (ValueError, sqlite3.Error) as e:
        raise CliError(f"--sessions: {e}") from e


def close_sessions(runner: Runner, loop: asyncio.Runner | None = None) -> None:
    """Close the runner's store, if it holds a connection (SQLite) or a pool (PostgreSQL, on `loop`)."""
    store = runner.session_service
    if isinstance(store, SqliteSessionService):
        store.close()
    elif loop is not None and (close := getattr(store, "close", None)) is not None:
        loop.run(close())  # PostgreSQL: its pool belongs to this loop


def open_model(spec: str) -> Model:
    """The model `--model` names: `openai:<model name>` (adk.models.resolve)."""
    from adk.models.resolve import ModelSpecError, resolve_model

    try:
        return resolve_model(spec, "--model")
    except ModelSpecError as e:
        raise CliError(str(e)) from e


def load_function(spec: str, option: str) -> Callable[..., Any]:
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
