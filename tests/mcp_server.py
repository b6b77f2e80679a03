"""The MCP server the tests start (with the `mcp` SDK): `python -m tests.mcp_server [stdio|http PORT]`.

Tools: `add` (read-only), `fail` (answers isError), `slow` (never answers by itself), `grow`
(adds a tool and says the list changed), `die` (the process exits mid-call), `flaky` (read-only:
exits mid-call the first time, when `ADK_MCP_MARK` names a file that does not exist yet), and
`bad` (an input schema that is not valid JSON Schema).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("test-server")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def fail(why: str) -> str:
    """Always fails, saying why."""
    raise ToolError(f"refused: {why}")


@server.tool()
async def slow() -> str:
    """Waits until cancelled."""
    await anyio.sleep_forever()
    return "never"


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `fresh`."""
    server.add_tool(lambda: "fresh!", name="fresh", description="a new tool")
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool()
def die() -> str:
    """The server process exits during the call."""
    os._exit(3)


@server.tool(annotations=ToolAnnotations(idempotent_hint=True))
def flaky() -> str:
    """Exits during its first call (when ADK_MCP_MARK is missing), answers afterwards."""
    mark = Path(os.environ["ADK_MCP_MARK"])
    if not mark.exists():
        mark.write_text("died once")
        os._exit(3)
    return "steady"


@server.tool()
def bad() -> str:
    """Its schema is broken below."""
    return "unreachable"


server._tool_manager._tools["bad"].parameters = {"type": "object", "properties": {"x": {"type": 12}}}

if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
