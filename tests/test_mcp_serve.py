"""`adk mcp serve agent.py`, driven by the `mcp` SDK's client: over stdio, and streamable HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import mcp
import pytest

from adk.cli import main
from tests.test_mcp import free_port

ROOT = Path(__file__).parents[1]
ASK_SCHEMA = {
    "type": "object",
    "properties": {"message": {"description": "What to ask the agent.", "type": "string"}},
    "required": ["message"],
    "additionalProperties": False,
}
"""The served tool's input schema: no internal model's title."""
WRONG = (
    "invalid arguments for tool 'clerk': argument 'message': Field required; "
    "argument 'text': unexpected argument (parameters: 'message')"
)
"""A call with a wrong argument: one line, adk's own (not pydantic's text and URL)."""

CLERK = """\
import os

from adk import Cont, Halt, LlmAgent, ModelContext, ToolContext
from adk.events import LlmResponse, ToolCall
from adk.testing import ScriptedModel

print("loading the clerk")  # must not reach the protocol on stdout


def note(line):
    with open(os.environ["ADK_TRACE"], "a") as trace:
        trace.write(line + "\\n")


class Guard:
    def before_model(self, ctx: ModelContext):
        note(f"before_model {ctx.agent.name}")
        return Cont(ctx)

    def before_tool(self, ctx: ToolContext):
        note(f"before_tool {ctx.tool.name} {ctx.args}")
        return Halt("refused by Guard") if ctx.tool.name == "delete" else Cont(ctx)


def lookup(item: str) -> str:
    \"\"\"The price of an item.\"\"\"
    return f"{item} costs 4.20"


def delete(item: str) -> str:
    \"\"\"Delete an item.\"\"\"
    raise RuntimeError("delete ran although Guard refused it")


def answer(request):
    last = request.messages[-1]
    if last.role == "tool":
        return "; ".join(m.content for m in request.messages if m.role == "tool")
    if last.content == "fail":
        raise ValueError("the model is down")
    args = '{"item": "%s"}' % last.content
    return LlmResponse.calls(ToolCall.of("lookup", args, id="c1"), ToolCall.of("delete", args, id="c2"))


agent = LlmAgent(
    "clerk",
    model=ScriptedModel([answer] * 10),
    description="Prices and deletes items.",
    tools=[lookup, delete],
    callbacks=[Guard()],
)
"""


@pytest.fixture
def clerk(tmp_path: Path) -> Path:
    path = tmp_path / "clerk.py"
    path.write_text(CLERK)
    return path


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "ADK_TRACE": str(tmp_path / "trace")}


def text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def test_over_stdio_one_tool_runs_the_agent_and_its_callbacks_govern_every_step(
    clerk: Path, tmp_path: Path
) -> None:
    command = ["-m", "adk", "mcp", "serve", str(clerk), "--sessions", str(tmp_path / "s.db")]
    server = mcp.StdioServerParameters(command=sys.executable, args=command, env=env(tmp_path))
    async with mcp.Client(server, mode="legacy") as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("clerk", version("adk-callbacks"))
        [tool] = (await client.list_tools()).tools
        assert (tool.name, tool.description) == ("clerk", "Prices and deletes items.")
        assert tool.input_schema == ASK_SCHEMA
        result = await client.call_tool("clerk", {"message": "widget"})
        assert (result.is_error, text(result)) == (False, "widget costs 4.20; refused by Guard")
        assert (tmp_path / "trace").read_text().splitlines() == [
            "before_model clerk",
            "before_tool lookup {'item': 'widget'}",
            "before_tool delete {'item': 'widget'}",
            "before_model clerk",
        ]

        failed = await client.call_tool("clerk", {"message": "fail"})
        assert failed.is_error
        assert text(failed) == (
            "Error executing tool clerk: agent 'clerk' failed: ValueError: the model is down [model:scripted]"
        )

        wrong = await client.call_tool("clerk", {"text": "widget"})
        assert (wrong.is_error, text(wrong)) == (True, WRONG)
        assert len((tmp_path / "trace").read_text().splitlines()) == 5  # no run for the wrong call


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.7", "example.org"])
def test_http_beyond_loopback_is_refused_before_the_agent_loads(
    host: str, clerk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "serve", str(clerk), "--port", "9", "--host", host]) == 1
    out, err = capsys.readouterr()
    assert out == ""  # the agent's module did not run: it prints
    assert err == (
        f"adk: refusing to serve MCP on {host}: any client that reaches it could run the agent "
        "(--insecure-anonymous serves it anyway)\n"
    )


@contextmanager
def serving_mcp(clerk: Path, tmp_path: Path, host: str = "127.0.0.1") -> Iterator[tuple[str, Path]]:
    """`adk mcp serve --port` on `host` in a process of its own: its URL, and the file of its stderr."""
    port = free_port()
    command = ["-m", "adk", "mcp", "serve", str(clerk), "--port", str(port), "--host", host]
    command += ["--db", str(tmp_path / "s.db")]
    stderr = tmp_path / "stderr"
    with stderr.open("w") as err:
        process = subprocess.Popen([sys.executable, *command], env=env(tmp_path), stderr=err)
    url = f"http://{host}:{port}/mcp"
    try:
        for _ in range(400):
            try:
                httpx.get(url, timeout=0.5)
                break
            except httpx.TransportError:
                assert process.poll() is None, "adk mcp serve --port exited"
                time.sleep(0.05)  # waiting for the server process to listen, not a timed test
        yield url, stderr
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def served_over_http(clerk: Path, tmp_path: Path) -> Iterator[str]:
    with serving_mcp(clerk, tmp_path) as (url, _):
        yield url


async def test_over_streamable_http_with_port(served_over_http: str, tmp_path: Path) -> None:
    async with mcp.Client(served_over_http, mode="legacy") as client:
        result = await client.call_tool("clerk", {"message": "gadget"})
    assert text(result) == "gadget costs 4.20; refused by Guard"
    assert "before_tool delete {'item': 'gadget'}" in (tmp_path / "trace").read_text()


def test_the_served_module_may_not_print_on_the_protocol_stream(clerk: Path, tmp_path: Path) -> None:
    """Closing stdin ends the server; stdout carried nothing but the protocol (here: nothing)."""
    done = subprocess.run(
        [sys.executable, "-m", "adk", "mcp", "serve", str(clerk), "--db", str(tmp_path / "s.db")],
        input="",
        capture_output=True,
        text=True,
        env=env(tmp_path),
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert "loading the clerk" in done.stderr


MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def test_on_any_loopback_address_requests_naming_another_host_are_refused(
    clerk: Path, tmp_path: Path
) -> None:
    """The Host check of every adk server (adk.serving), also on the loopback addresses the MCP
    SDK's own check does not know (it protects 127.0.0.1, localhost and ::1 only)."""
    with serving_mcp(clerk, tmp_path, "127.0.0.2") as (url, _):
        port = url.split(":")[2].split("/")[0]
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        refused = httpx.post(url, json=initialize, headers={**MCP_HEADERS, "host": f"evil.example:{port}"})
        answered = httpx.post(url, json=initialize, headers=MCP_HEADERS)
    assert (refused.status_code, refused.json()) == (
        421,
        {
            "detail": f"the Host header 'evil.example:{port}' names no host this server answers (it "
            "answers loopback names and the hosts it was given with allowed_hosts)"
        },
    )
    assert answered.status_code != 421
    assert not (tmp_path / "trace").exists()  # the agent never ran


def test_json_no_part_can_hold_is_a_4xx_without_a_traceback(clerk: Path, tmp_path: Path) -> None:
    """Deep nesting (Python's own parser raises RecursionError), a lone surrogate, NaN: the SDK's
    parser refuses them as adk's servers do."""
    bodies = [b"[" * 200_000, b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}', b'{"id": NaN}']
    with serving_mcp(clerk, tmp_path) as (url, stderr):
        statuses = [httpx.post(url, content=body, headers=MCP_HEADERS).status_code for body in bodies]
    assert statuses == [400, 400, 400]
    assert "Traceback" not in stderr.read_text()
