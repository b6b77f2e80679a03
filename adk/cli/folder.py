"""`adk web FOLDER`: every agent file in a folder, each loaded as `adk web FILE` loads one.

A file is an agent file when it assigns (or imports, or defines) `agent` or `runner` at module
level: read from its syntax, so that no other file of the folder (a helper module, a script) is run.
"""

from __future__ import annotations

import ast
from pathlib import Path

from adk.cli.loading import close_sessions, load_runner
from adk.errors import CliError
from adk.runner import Runner

__all__ = ["close_folder", "load_folder"]

_NAMES = {"agent", "runner"}


def load_folder(path: str, sessions: str | None) -> dict[str, Runner]:
    """The runner of each agent file in the folder `path`, by file name (without `.py`), sorted."""
    files = sorted(p for p in Path(path).glob("*.py") if not p.name.startswith("_") and _defines_agent(p))
    if not files:
        raise CliError(f"{path}: no agent file in this folder (a .py defining `agent` or `runner`)")
    runners: dict[str, Runner] = {}
    try:
        for file in files:
            runners[file.stem] = load_runner(str(file), sessions)
    except CliError:
        close_folder(runners)
        raise
    return runners


def close_folder(runners: dict[str, Runner]) -> None:
    """Close each runner's store."""
    for runner in runners.values():
        close_sessions(runner)


def _defines_agent(file: Path) -> bool:
    """Whether `file` binds `agent` or `runner` at module level (a file that does not parse is
    one, so that loading it names its error)."""
    try:
        module = ast.parse(file.read_text(encoding="utf-8"), str(file))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return True
    for node in module.body:
        match node:
            case ast.Assign(targets=targets):
                names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            case ast.AnnAssign(target=ast.Name(id=name)):
                names = {name}
            case ast.ImportFrom(names=aliases) | ast.Import(names=aliases):
                names = {a.asname or a.name for a in aliases}
            case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
                names = {name}
            case _:
                names = set()
        if names & _NAMES:
            return True
    return False
