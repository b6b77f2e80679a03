"""Every mistake a user can type is one line on stderr and an exit status, never a traceback nor a
server that starts and then fails; each typed here as a user would, in a subprocess."""

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.cli.shell import adk, environment

AGENT = """\
from adk import LlmAgent
from adk.testing import ScriptedModel

agent = LlmAgent("echo", model=ScriptedModel([lambda request: "heard you"] * 5))
"""

NAMELESS = """\
from adk import LlmAgent, LlmResponse
from adk.events import ToolCall


def clock() -> str:
    \"\"\"The time.\"\"\"
    return "noon"


class Nameless:
    \"\"\"A custom model whose responses name no model.\"\"\"

    name = "nameless"

    async def generate(self, request):
        if request.messages[-1].role == "tool":
            yield LlmResponse.text("It is noon.")
        else:
            yield LlmResponse.calls(ToolCall.of("clock", "{}"))


agent = LlmAgent("teller", model=Nameless(), tools=[clock])
"""

UNREACHABLE = "postgresql://adk:secret@127.0.0.1:1/db"
REFUSED = "cannot open session store postgresql://adk:***@127.0.0.1:1/db: [Errno 111] Connect call failed"


@pytest.fixture
def here(tmp_path: Path) -> Path:
    (tmp_path / "ok.py").write_text(AGENT)
    (tmp_path / "adir").mkdir()
    (tmp_path / "number.py").write_text("agent = 3\n")
    (tmp_path / "nameless.py").write_text(NAMELESS)
    return tmp_path


@pytest.fixture
def taken() -> Iterator[int]:
    """A port some other server listens on."""
    with socket.create_server(("127.0.0.1", 0)) as other:
        yield other.getsockname()[1]


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port: int = probe.getsockname()[1]
    return port


def one_line(done: subprocess.CompletedProcess[str], status: int, line: str) -> None:
    assert (done.returncode, done.stdout, done.stderr) == (status, "", line + "\n")


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts)


@pytest.mark.parametrize(
    ("typed", "status", "line"),
    [
        (
            ["--bogus"],
            2,
            "adk: error: unrecognized arguments: --bogus; a command comes first: "
            "demo, create, run, serve, web, mcp",
        ),
        ([], 2, "adk: error: a command is needed: demo, create, run, serve, web, mcp (adk --help says more)"),
        (["run", "ok.py", "--bogus"], 2, "adk run: error: unrecognized arguments: --bogus"),
        (["mcp", "serve", "ok.py", "--bogus"], 2, "adk mcp serve: error: unrecognized arguments: --bogus"),
        (["run", "adir"], 1, "adk: adir: a folder; name the Python file defining the agent (adir/agent.py?)"),
        (["run", "number.py"], 1, "adk: number.py: `agent` is an int, not an adk agent (a BaseAgent)"),
        (
            ["run", "ok.py", "-m", ""],
            2,
            "adk run: error: argument -m/--message: expected a message to send, not ''",
        ),
        (
            ["run", "ok.py", "-m", "  "],
            2,
            "adk run: error: argument -m/--message: expected a message to send, not '  '",
        ),
        (
            ["serve", "ok.py", "--port", "99999"],
            2,
            "adk serve: error: argument --port: expected a port number from 1 to 65535, not '99999'",
        ),
        (
            ["mcp", "serve", "ok.py", "--port", "0"],
            2,
            "adk mcp serve: error: argument --port: expected a port number from 1 to 65535, not '0'",
        ),
    ],
)
def test_a_mistyped_command_is_one_line(here: Path, typed: list[str], status: int, line: str) -> None:
    one_line(adk(*typed, cwd=here), status, line)


@pytest.mark.parametrize(
    "url", ["mysql://root:pw@db/app", "redis://127.0.0.1/0", "sqlite://", "file:///tmp/x.db"]
)
def test_a_store_url_of_another_kind_is_refused_and_makes_no_file(here: Path, url: str) -> None:
    before = files(here)
    done = adk("run", "ok.py", "-m", "hi", "--sessions", url, cwd=here)
    scheme = url.partition("://")[0]
    one_line(
        done,
        1,
        f"adk: --sessions {scheme}://…: adk keeps sessions in SQLite (a path or sqlite:///PATH) or "
        f"PostgreSQL (postgresql://…), not {scheme}",
    )
    assert files(here) == before


def test_an_sqlite_url_names_its_file(here: Path) -> None:
    done = adk("run", "ok.py", "-m", "hi", "--sessions", "sqlite:///var/data/x.db", cwd=here)
    assert (done.returncode, done.stdout) == (0, "echo: heard you\n")
    assert "var/data/x.db" in files(here)
    assert not any(name.startswith("sqlite") for name in files(here))
    one_line(
        adk("run", "ok.py", "-m", "hi", "--sessions", "sqlite:///", cwd=here),
        1,
        "adk: --sessions 'sqlite:///': sqlite:/// names no file (e.g. sqlite:///sessions.db)",
    )


def test_postgresql_without_its_extra_says_how_to_install_it(here: Path) -> None:
    done = adk("run", "ok.py", "-m", "hi", "--sessions", UNREACHABLE, cwd=here, hide="asyncpg")
    one_line(
        done,
        1,
        "adk: --sessions postgresql://… needs the postgres extra: pip install 'adk-callbacks[postgres]'"
        " (no module 'asyncpg')",
    )


@pytest.mark.parametrize("command", [["serve"], ["web"], ["mcp", "serve"]])
def test_a_server_refuses_an_unreachable_store_at_start_up(here: Path, command: list[str]) -> None:
    port = ["--port", str(free_port())]
    done = adk(*command, "ok.py", *port, "--sessions", UNREACHABLE, cwd=here)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(f"adk: {REFUSED}") and done.stderr.count("\n") == 1


@pytest.mark.parametrize("command", [["serve"], ["web"], ["mcp", "serve"]])
def test_a_port_in_use_is_one_line_before_anything_is_said(
    here: Path, taken: int, command: list[str]
) -> None:
    done = adk(*command, "ok.py", "--port", str(taken), cwd=here)
    one_line(
        done,
        1,
        f"adk: cannot listen on 127.0.0.1:{taken}: it is in use (another server?); "
        "choose another port with --port",
    )


@pytest.mark.parametrize("command", ["serve", "web"])
def test_without_the_agui_extra_nothing_is_promised(here: Path, taken: int, command: str) -> None:
    done = adk(command, "ok.py", "--port", str(taken), cwd=here, hide="uvicorn")
    one_line(
        done,
        1,
        f"adk: adk {command} needs the agui extra: pip install 'adk-callbacks[agui]' (no module 'uvicorn')",
    )


def test_model_calls_are_counted_when_responses_name_no_model(here: Path) -> None:
    done = adk("run", "nameless.py", "-m", "time?", cwd=here)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "teller: It is noon."
    assert done.stderr.splitlines()[-1].endswith(" s · 2 model calls · tokens not reported")


@contextmanager
def serving(command: list[str], cwd: Path, marker: str) -> Iterator[list[str]]:
    """`adk COMMAND` running: its stderr lines up to the one containing `marker`; stopped after."""
    with subprocess.Popen(
        [sys.executable, "-m", "adk", *command],
        cwd=cwd,
        env=environment({"PYTHONUNBUFFERED": "1"}),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    ) as server:
        assert server.stderr is not None
        watchdog = threading.Timer(30, server.terminate)  # a server that never says it: its end
        watchdog.start()
        lines = []
        for line in server.stderr:
            lines.append(line.rstrip("\n"))
            if marker in line:
                break
        try:
            yield lines
        finally:
            watchdog.cancel()
            server.terminate()
            server.wait(timeout=30)


def test_serve_says_where_its_endpoint_is_and_a_browser_get_is_answered(here: Path) -> None:
    port = free_port()
    with serving(
        ["serve", "ok.py", "--port", str(port), "--sessions", "s.db"], here, "Uvicorn running"
    ) as lines:
        assert lines[0] == (
            f"adk serve: the AG-UI endpoint is http://127.0.0.1:{port}/ (POST a RunAgentInput; docs/agui.md)"
        )
        got = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
    assert got.status_code == 200
    assert json.loads(got.text) == {
        "endpoint": "/",
        "protocol": "AG-UI",
        "method": "POST",
        "accepts": "an AG-UI RunAgentInput as JSON (application/json)",
        "answers": "the run's AG-UI events as a text/event-stream",
        "docs": "docs/agui.md",
    }


def test_mcp_serve_over_http_says_its_url(here: Path) -> None:
    port = free_port()
    with serving(
        ["mcp", "serve", "ok.py", "--port", str(port), "--sessions", "s.db"], here, "HTTP at"
    ) as lines:
        assert lines == [f"adk mcp serve: streamable HTTP at http://127.0.0.1:{port}/mcp (docs/mcp.md)"]
