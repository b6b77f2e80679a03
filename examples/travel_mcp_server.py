"""A small MCP server written with the `mcp` SDK, for examples/mcp_agent.py: `python travel_mcp_server.py`.

It speaks MCP over stdin and stdout. `forecast` is annotated read-only, `book` changes things;
both answer plain text.
"""

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server: MCPServer = MCPServer("travel")

WEATHER = {"Paris": "18°C and sunny", "Oslo": "4°C and raining"}


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"{city}: {WEATHER.get(city, 'no forecast')}"


@server.tool(structured_output=False)
def book(city: str) -> str:
    """Book a trip to a city."""
    return f"booked a trip to {city}"


if __name__ == "__main__":
    server.run()
