"""An adk agent as an MCP server: one tool that runs it (`adk mcp serve agent.py`, extra
`adk-callbacks[mcp]`).

The tool is named after the agent and takes a `message`; each call runs the agent in a fresh
session and answers its final text, so every step still goes through the agent's callbacks. A
run that ends with an error, or that pauses for an approval no MCP client can give, answers an
MCP error result (`isError`) saying so. The server gives adk's version; its tool's schema is
adk's own, and wrong arguments get adk's one line. Served over stdio, or streamable HTTP at `/mcp`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from adk.agents.base import BaseAgent
from adk.errors import ToolArgumentsError
from adk.events import ObjectType, new_id
from adk.runner import Runner
from adk.serving import host_check, is_loopback
from adk.tools import FunctionTool

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from starlette.types import ASGIApp

__all__ = ["agent_server", "http_app", "serve"]

USER_ID = "mcp"
"""The user id of the sessions the served agent runs in."""


def agent_server(agent_or_runner: BaseAgent | Runner) -> MCPServer:
    """An MCP server whose one tool runs the agent on a `message` and answers its final text."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
    agent = runner.agent

    async def ask(message: str) -> str:
        """Run the agent on `message` in a fresh session; its final text.

        Args:
            message: What to ask the agent.
        """
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

    description = agent.description or f"Ask the agent {agent.name!r}; it answers in text."
    tool = _tool(FunctionTool(ask, name=agent.name, description=description))
    return MCPServer(agent.name, version=_version(), log_level="WARNING", tools=[tool])


def _tool(ask: FunctionTool[..., object]) -> Tool:
    """The MCP tool of `ask`: adk's own schema (no internal model title) and its one-line
    argument errors, checked before the SDK's validation (whose text is pydantic's, with a URL)."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools import Tool

    class Ask(Tool):
        async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
            try:
                ask.validate(arguments)
            except ToolArgumentsError as e:
                raise ToolError(str(e)) from None
            return await super().run(arguments, context, convert_result)

    tool = Ask.from_function(ask.fn, name=ask.name, description=ask.description, structured_output=False)
    tool.parameters = dict(ask.declaration.parameters)
    return tool


def _version() -> str:
    """adk's installed version, which the server gives as its `serverInfo.version`."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("adk-callbacks")  # the distribution's name (pyproject.toml)
    except PackageNotFoundError:  # pragma: no cover - run from a source tree never installed
        return "0+unknown"


def http_app(server: MCPServer, host: str, allowed_hosts: Sequence[str] = ()) -> ASGIApp:
    """The streamable HTTP app of `server` at `/mcp`, behind the Host check every adk server has
    (adk.serving; the SDK's own check, which knows fewer loopback names, is off)."""
    from mcp.server.transport_security import TransportSecuritySettings

    off = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return host_check(server.streamable_http_app(transport_security=off, host=host), host, allowed_hosts)


def serve(
    agent_or_runner: BaseAgent | Runner,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    insecure_anonymous: bool = False,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve the agent over stdio, or over streamable HTTP on `host:port` when a port is given.

    Beyond loopback anyone who reaches the port runs the agent (its model, its tools): refused
    unless `insecure_anonymous`. On loopback only requests naming a loopback host or one of
    `allowed_hosts` are answered. The runner is closed (its MCP toolsets too) when serving ends.
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
                import uvicorn

                app = http_app(server, host, allowed_hosts)
                await uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).serve()
        finally:
            await runner.close()

    anyio.run(run)
