"""`adk create NAME`: a folder with a runnable agent (a tool, a callback, a model) and its tests;
and `load_dotenv`, which reads a `.env` file for every command.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from adk.errors import CliError

__all__ = ["create", "load_dotenv"]

_FILES = {"agent.py": "agent.py.txt", "test_agent.py": "test_agent.py.txt"}
"""What `create` writes, from which template (NAME in it becomes the agent's name)."""


def create(name: str) -> tuple[Path, Path]:
    """Write `name/agent.py` and `name/test_agent.py`; refuse a name that is no identifier or exists."""
    if not name.isidentifier():
        raise CliError(
            f"create {name!r}: the agent's name is a Python identifier such as my_agent "
            "(letters, digits and _, not starting with a digit)"
        )
    folder = Path(name)
    if folder.exists():
        raise CliError(f"create {name!r}: {folder} already exists; choose another name")
    templates = files("adk.cli") / "templates"
    folder.mkdir()
    for target, template in _FILES.items():
        text = (templates / template).read_text(encoding="utf-8").replace("NAME", name)
        (folder / target).write_text(text, encoding="utf-8")
    return folder / "agent.py", folder / "test_agent.py"


def load_dotenv(folder: Path | None = None) -> str | None:
    """Set the variables of `.env` in `folder` (the working directory) that are not set already.

    Through python-dotenv (the `dotenv` extra: a file format is no core concern). Without a
    `.env` file nothing happens; with one but without python-dotenv, the line to show says so.
    """
    path = (folder or Path.cwd()) / ".env"
    if not path.is_file():
        return None
    try:
        import dotenv
    except ImportError:
        return f"{path.name} not read: pip install 'adk-callbacks[dotenv]' to read it"
    dotenv.load_dotenv(path, override=False)
    return None
