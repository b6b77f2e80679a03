"""An MCP server (the `mcp` SDK) whose tools declare input schemas in other dialects:
`python -m tests.mcp.schema_server`.

`pair` is valid draft-07 (a tuple's `items` as an array, as the TypeScript SDK writes a zod
tuple) and says so with `$schema`; `pair_undeclared` is the same without `$schema`, so 2020-12,
where it is invalid; `unknown_dialect` declares one that jsonschema does not know, checked as
2020-12. (A `$schema` that is not a string never leaves the SDK's server.)
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("schema-server")
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def _pair(declared: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}], "minItems": 2}
        },
        "required": ["pair"],
    }
    return schema if declared is None else {"$schema": declared, **schema}


@server.tool()
def pair(pair: list[Any]) -> str:
    """Names a pair."""
    return f"{pair[0]}={pair[1]}"


server.add_tool(pair, name="pair_undeclared")
server._tool_manager._tools["pair_undeclared"].parameters = _pair(None)
server.add_tool(pair, name="unknown_dialect")
server._tool_manager._tools["unknown_dialect"].parameters = {
    "$schema": "urn:adk:no-such-dialect",
    "type": "object",
    "properties": {"pair": {"type": "array"}},
}
server._tool_manager._tools["pair"].parameters = _pair(DRAFT_07)

if __name__ == "__main__":
    server.run()
