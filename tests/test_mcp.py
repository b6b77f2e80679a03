"""adk.mcp against real MCP servers the tests start (tests/mcp_server.py, over stdio and HTTP)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk import Approve, Cont, Defer, Fallback, Halt, LlmAgent, Runner, ToolContext
from adk.callbacks import Deferred
from adk.mcp import McpToolset
from adk.recovery import set_testing
from adk.testing import ScriptedModel
from tests._runtime import Recorder, call, calls, summary

ROOT = Path(__file__).parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def toolset(tmp_path: Path) -> McpToolset:
    env = {**ENV, "ADK_MCP_MARK": str(tmp_path / "mark")}
    return McpToolset.stdio(sys.executable, "-m", "tests.mcp_server", env=env, name="test")


class OnlyAdd(Recorder):
    """Authorises `add`; refuses every other MCP tool."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:
        self.record("before_tool", ctx)
        return Cont(ctx) if ctx.tool.name == "add" else Halt("not allowed")


class FallBack:
    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Fallback[str]:
        return Fallback(f"fallback for {type(error).__name__}")


async def run(runner: Runner, **kw: Any) -> list[Any]:
    return [summary(e) for e in [e async for e in runner.run("u", "s", "hi", **kw)]]


async def test_mcp_tools_are_declared_and_called_through_an_authorising_before_tool(
    toolset: McpToolset, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel([calls(call("add", "c1", a=2, b=3), call("die", "c2")), "five"])
    trace: list[tuple[Any, ...]] = []
    async with Runner(
        LlmAgent("calc", model=model, tools=[toolset]), callbacks=[OnlyAdd("cb", trace)]
    ) as runner:
        shapes = await run(runner)
    assert shapes[2:] == [
        ("tool", "calc", "add", "c1", '{"result":5}'),
        ("tool", "calc", "die", "c2", "not allowed"),
        ("model", "calc", "five"),
        ("done", "calc"),
    ]
    declared = {d.name: d for d in model.requests[0].tools}
    assert sorted(declared) == ["add", "die", "fail", "flaky", "grow", "slow"]  # not `bad`
    assert declared["add"].parameters["required"] == ["a", "b"]
    assert [t[1:] for t in trace if t[1] == "before_tool"] == [("before_tool", "add"), ("before_tool", "die")]
    assert caplog.messages == [
        "MCP server 'test': tool 'bad' left out: its input schema is not valid JSON Schema: "
        "12 is not valid under any of the given schemas"
    ]


async def test_an_mcp_error_result_is_a_tool_error_recovered_by_fallback(toolset: McpToolset) -> None:
    model = ScriptedModel([calls(call("fail", "c1", why="no")), "ok"])
    async with Runner(LlmAgent("a", model=model, tools=[toolset])) as runner:
        plain = await run(runner)
    assert plain[2] == (
        "tool",
        "a",
        "fail",
        "c1",
        "Error: McpToolError: MCP server 'test', tool 'fail': Error executing tool fail: refused: no",
    )
    model = ScriptedModel([calls(call("fail", "c1", why="no")), "ok"])
    async with Runner(LlmAgent("a", model=model, tools=[toolset]), callbacks=[FallBack()]) as runner:
        assert (await run(runner))[2] == ("tool", "a", "fail", "c1", "fallback for McpToolError")


async def test_a_server_killed_mid_call_is_retried_only_for_idempotent_tools_and_reconnects(
    toolset: McpToolset,
) -> None:
    model = ScriptedModel(
        [calls(call("flaky", "c1")), calls(call("die", "c2")), calls(call("add", "c3", a=1, b=1)), "ok"]
    )
    with set_testing(True):
        async with Runner(LlmAgent("a", model=model, tools=[toolset])) as runner:
            events = [e async for e in runner.run("u", "s", "hi")]
    tools = [e for e in events if e.object == "tool.response"]
    assert [summary(e)[-1] for e in tools] == [
        '{"result":"steady"}',
        "Error: McpConnectionError: MCP server 'test': the connection dropped during 'die': "
        "Connection closed",
        '{"result":2}',
    ]
    assert [d.kind for d in tools[0].decisions] == ["retried"]
    assert tools[1].decisions == ()


async def test_the_tool_list_is_refreshed_when_the_server_says_it_changed(toolset: McpToolset) -> None:
    model = ScriptedModel([calls(call("grow", "c1")), calls(call("fresh", "c2")), "done"])
    async with Runner(LlmAgent("a", model=model, tools=[toolset])) as runner:
        shapes = await run(runner)
    assert [s for s in shapes if s[0] == "tool"] == [
        ("tool", "a", "grow", "c1", '{"result":"grown"}'),
        ("tool", "a", "fresh", "c2", "fresh!"),
    ]
    assert "fresh" not in [d.name for d in model.requests[0].tools]
    assert "fresh" in [d.name for d in model.requests[1].tools]


def local_tool(x: int) -> int:
    """Double x."""
    return 2 * x


@pytest.mark.parametrize(
    ("server", "problem"),
    [
        (McpToolset.stdio("/no/such/adk-mcp-server", name="ghost"), "could not connect: FileNotFoundError"),
        (McpToolset.stdio(sys.executable, "-c", "import sys; sys.exit(1)", name="dies"), "could not connect"),
        (McpToolset.http("http://127.0.0.1:9/mcp", name="silent"), "could not connect"),
    ],
)
async def test_a_server_that_cannot_be_reached_is_one_warning_and_the_other_tools_keep_working(
    server: McpToolset, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel([calls(call("local_tool", "c1", x=2)), "4"])
    async with Runner(LlmAgent("a", model=model, tools=[local_tool, server])) as runner:
        shapes = await run(runner)
    assert shapes[2:] == [("tool", "a", "local_tool", "c1", "4"), ("model", "a", "4"), ("done", "a")]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2  # one per model call
    assert warnings[0].startswith(
        f"agent 'a' goes on without the tools of '{server.name}': MCP server '{server.name}': {problem}"
    )
    assert "\n" not in warnings[0]


async def test_close_ends_the_server_process_and_leaves_no_task(toolset: McpToolset) -> None:
    before = asyncio.all_tasks()
    await toolset.get_tools()
    task = toolset._task
    assert task is not None and not task.done()
    await toolset.close()
    assert task.done() and asyncio.all_tasks() == before
    assert [t.name for t in await toolset.get_tools()][:1] == ["add"]  # used again: connects again
    await toolset.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_server", "http", str(port)], env=ENV, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(200):
            try:
                httpx.get(url, timeout=0.5)
                break
            except httpx.TransportError:
                if process.poll() is not None:
                    raise RuntimeError("the MCP HTTP server did not start") from None
                import time

                time.sleep(0.05)  # waiting for the server process to listen, not a timed test
        yield url
    finally:
        process.terminate()
        process.wait(10)


async def test_streamable_http(http_server: str) -> None:
    model = ScriptedModel([calls(call("add", "c1", a=20, b=22)), "42"])
    async with Runner(LlmAgent("a", model=model, tools=[McpToolset.http(http_server)])) as runner:
        shapes = await run(runner)
    assert shapes[2] == ("tool", "a", "add", "c1", '{"result":42}')


def children() -> set[int]:
    """The ids of this process's live child processes (Linux: read from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[1]) == os.getpid():
            found.add(int(stat.parent.name))
    return found


async def test_closing_the_runner_during_a_slow_call_leaves_no_task_or_process(
    toolset: McpToolset, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, processes = asyncio.all_tasks(), children()
    in_flight = asyncio.Event()
    call_server = toolset.call

    async def call_marked(tool: str, args: dict[str, Any], *progress: Any) -> Any:
        in_flight.set()
        return await call_server(tool, args, *progress)

    monkeypatch.setattr(toolset, "call", call_marked)
    model = ScriptedModel([calls(call("slow", "c1"))])
    runner = Runner(LlmAgent("a", model=model, tools=[toolset]))
    running = asyncio.create_task(run(runner))
    await in_flight.wait()
    assert len(children() - processes) == 1  # the server, answering `slow`
    for _ in range(20):
        await asyncio.sleep(0)  # let the request reach the server
    await runner.close()
    shapes = await running
    assert shapes[2][:4] == ("tool", "a", "slow", "c1")
    assert shapes[2][4].startswith("Error: McpConnectionError: MCP server 'test': the connection dropped")
    assert shapes[3:] == [("done", "a")]  # the run was ended: no model call, no reconnection
    model.assert_done()
    assert asyncio.all_tasks() - {asyncio.current_task()} == before - {asyncio.current_task()}
    assert children() == processes


class DeferAdd(Recorder):
    """Defers every `add` for a person's approval."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Defer:  # type: ignore[override]
        self.record("before_tool", ctx)
        return Defer("needs approval") if ctx.tool.name == "add" else Cont(ctx)


async def test_an_mcp_tool_deferred_for_approval_runs_on_the_server_once_approved(
    toolset: McpToolset,
) -> None:
    model = ScriptedModel([calls(call("add", "c1", a=2, b=3)), "five"])
    trace: list[tuple[Any, ...]] = []
    agent = LlmAgent("calc", model=model, tools=[toolset])
    async with Runner(agent, callbacks=[DeferAdd("cb", trace)]) as runner:
        paused = [e async for e in runner.run("u", "s", "hi")]
        assert [e.object for e in paused[2:]] == ["tool.approval_request", "runner.paused"]
        assert paused[2].decisions == (
            Deferred("callback:DeferAdd.before_tool", "tool:add", "c1", {"a": 2, "b": 3}, "needs approval"),
        )
        resumed = [summary(e) async for e in runner.run("u", "s", approvals={"c1": Approve()})]
    assert resumed == [
        ("tool", "calc", "add", "c1", '{"result":5}'),
        ("model", "calc", "five"),
        ("done", "calc"),
    ]
    assert [t[1:] for t in trace if t[1].endswith("_tool")] == [
        ("before_tool", "add"),
        ("before_tool", "add"),
        ("after_tool", "add"),
    ]
