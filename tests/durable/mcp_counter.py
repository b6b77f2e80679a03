"""An MCP server with one counted tool, for the durable tests: `python -m tests.durable.mcp_counter`.

`note(text)` appends a line to the file ADK_MCP_NOTES names (an effect the test counts: a
recovered run must not make it again) and answers `noted <text>`.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("counter")


@server.tool()
def note(text: str) -> str:
    """Write a line: an effect that must happen once."""
    with open(os.environ["ADK_MCP_NOTES"], "a") as notes:
        notes.write(f"{text}\n")
    return f"noted {text}"


if __name__ == "__main__":
    server.run()
