"""An adk agent as an MCP server: one tool that runs it (`adk mcp serve agent.py`, extra `adk[mcp]`).

The tool is named after the agent and takes a `message`; each call runs the agent in a fresh
session and answers its final text, so every step still goes through the agent's callbacks. A
run that ends with an error, or that pauses for an approval no MCP client can give, answers an
MCP error result (`isError`) saying so. Served over stdio, or streamable HTTP at `/mcp`.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING

from adk.agents.base import BaseAgent
from adk.agui import is_loopback
from adk.events import ObjectType, new_id
from adk.runner import Runner

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["agent_server", "serve"]

USER_ID = "mcp"
"""The user id of the sessions the served agent runs in."""


def agent_server(agent_or_runner: BaseAgent | Runner) -> MCPServer:
    """An MCP server whose one tool runs the agent on a `message` and answers its final text."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
    agent = runner.agent

    async def ask(message: str) -> str:
        answer = ""
        async with aclosing(runner.run(USER_ID, new_id(), message)) as events:
            async for event in events:
                match event.object:
                    case ObjectType.ERROR:
                        info = event.error
                        where = f" [{info.where}]" if info and info.where else ""
                        what = f"{info.type}: {info.message}" if info else "unknown error"
                        raise ToolError(f"agent {agent.name!r} failed: {what}{where}")
                    case ObjectType.RUNNER_PAUSED:
                        waiting = ", ".join(event.long_running_tool_ids)
                        raise ToolError(
                            f"agent {agent.name!r} paused: calls {waiting} wait for an approval or a "
                            "result, which an MCP client cannot give"
                        )
                reply = event.message
                if reply is not None and reply.role == "assistant" and not reply.tool_calls:
                    answer = reply.content
        return answer

    server: MCPServer = MCPServer(agent.name, log_level="WARNING")
    server.add_tool(
        ask,
        name=agent.name,
        description=agent.description or f"Ask the agent {agent.name!r}; it answers in text.",
        structured_output=False,
    )
    return server


def serve(
    agent_or_runner: BaseAgent | Runner,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    insecure_anonymous: bool = False,
) -> None:
    """Serve the agent over stdio, or over streamable HTTP on `host:port` when a port is given.

    Beyond loopback anyone who reaches the port runs the agent (its model, its tools): refused
    unless `insecure_anonymous`. The runner is closed (its MCP toolsets too) when serving ends.
    """
    if port is not None and not insecure_anonymous and not is_loopback(host):
        raise ValueError(
            f"refusing to serve MCP on {host}: any client could run the agent; "
            "serve on loopback, or pass insecure_anonymous=True"
        )
    import anyio

    runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
    server = agent_server(runner)

    async def run() -> None:
        try:
            if port is None:
                await server.run_stdio_async()
            else:
                await server.run_streamable_http_async(host=host, port=port)
        finally:
            await runner.close()

    anyio.run(run)
