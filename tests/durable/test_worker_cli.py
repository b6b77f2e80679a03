"""`adk worker`'s bad input: one line, no traceback, no password."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("dbos")

from tests.durable._fleet import AGENT, ROOT, WAIT, free_port


@pytest.mark.parametrize("surface", [["worker"], ["serve", "--durable"], ["web", "--durable"]])
def test_a_system_database_that_cannot_be_reached_is_one_line(surface: list[str], tmp_path: Path) -> None:
    if surface[0] != "worker":
        pytest.importorskip("ag_ui")
    url = "postgresql://postgres:secret@127.0.0.1:1/nowhere"
    command = [sys.executable, "-m", "adk", surface[0], str(AGENT), *surface[1:]]
    command += ["--sessions", str(tmp_path / "s.db")]
    if surface[0] != "worker":
        command += ["--port", str(free_port())]
    done = subprocess.run(
        [*command, "--system-database", url], cwd=ROOT, capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "adk: cannot start DBOS on its system database postgresql://postgres:***@127.0.0.1:1/nowhere: "
    )
    assert "Connection refused" in lines[0]


def test_a_concurrency_that_is_not_a_count_is_refused_by_name(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "adk", "worker", str(AGENT), "--concurrency", "0"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "adk worker: error: argument --concurrency: expected a whole number, 1 or more, not '0'"
    )


def test_adk_web_durable_refuses_a_folder_by_name(tmp_path: Path) -> None:
    pytest.importorskip("ag_ui")
    command = [sys.executable, "-m", "adk", "web", str(AGENT.parent), "--durable", "--port", str(free_port())]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)
    assert (done.returncode, done.stderr) == (
        1,
        "adk: adk web --durable serves one agent file, not a folder\n",
    )
