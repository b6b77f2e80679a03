"""`adk` as a user types it: a subprocess in a folder of the test's, offline, with this checkout's adk."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).parents[2]


def environment(extra: Mapping[str, str] = {}) -> dict[str, str]:
    """This process's environment without OpenAI's variables (offline), with this checkout first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ADK_MODEL"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["NO_COLOR"] = "1"
    return {**env, **extra}


def adk(
    *args: str, cwd: Path, env: Mapping[str, str] = {}, hide: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run `adk ARGS...` in `cwd`; `hide` names a module to make missing (`sys.modules[name] = None`)."""
    command = [sys.executable, "-m", "adk"]
    if hide:
        code = f"import sys; sys.modules[{hide!r}] = None; from adk.cli import main; raise SystemExit(main())"
        command = [sys.executable, "-c", code]
    return subprocess.run(
        [*command, *args],
        cwd=cwd,
        env=environment(env),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
