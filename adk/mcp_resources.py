"""An MCP server's resources and prompts as tools of its toolset (`resources=True`, `prompts=True`).

`list_resources` and `read_resource(uri)`, `list_prompts` and `get_prompt(name, arguments)` are
tools like the server's own: every call goes through the agent's tool hooks (a `before_tool`
decides which URIs may be read), and what they answer reaches the model as text. A server tool
of the same name wins: the extra tool is then left out, with one warning.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from adk.context import ToolContext
from adk.errors import ToolArgumentsError
from adk.events import ToolDeclaration
from adk.mcp_content import McpResource, McpResult, McpText
from adk.tools import BaseTool

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["McpServerTool", "extra_tools"]

log = logging.getLogger(__name__)

Ask = Callable[["Client", dict[str, Any]], Awaitable[McpResult]]
Connect = Callable[[], Awaitable["Client"]]

_STRING = {"type": "string"}


class McpServerTool(BaseTool):
    """A tool that asks the server for its resources or prompts (not one of its tools)."""

    def __init__(self, connect: Connect, name: str, description: str, params: dict[str, Any], ask: Ask):
        self.name = name
        self.description = description
        self.idempotent = True  # listing and reading change nothing on the server
        self._connect = connect
        self._ask = ask
        self._params = params
        required = [p for p in params if p != "arguments"]
        schema = {"type": "object", "properties": params, "required": required, "additionalProperties": False}
        self._declaration = ToolDeclaration(name=name, description=description, parameters=schema)

    @property
    def declaration(self) -> ToolDeclaration:
        return self._declaration

    def validate(self, args: Any) -> dict[str, Any]:
        problems = [f"argument {k!r}: unexpected argument" for k in args if k not in self._params]
        problems += [
            f"argument {p!r}: a string is required, got {args.get(p)!r}"
            for p in self._params
            if p != "arguments" and not isinstance(args.get(p), str)
        ]
        extra = args.get("arguments", {})
        if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
            problems.append(f"argument 'arguments': an object of strings is required, got {extra!r}")
        if problems:
            raise ToolArgumentsError(self.name, problems)
        return dict(args)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> McpResult:
        return await self._ask(await self._connect(), args)

    def __repr__(self) -> str:
        return f"McpServerTool({self.name!r})"


def extra_tools(
    connect: Connect, server: str, resources: bool, prompts: bool, taken: set[str]
) -> list[BaseTool]:
    """The resource and prompt tools asked for, but those whose name a server tool has."""
    made: list[BaseTool] = []
    if resources:
        made.append(
            McpServerTool(connect, "list_resources", f"The resources of {server}.", {}, _list_resources)
        )
        uri = {"uri": {**_STRING, "description": "The resource's URI."}}
        made.append(McpServerTool(connect, "read_resource", f"Read a resource of {server}.", uri, _read))
    if prompts:
        made.append(McpServerTool(connect, "list_prompts", f"The prompts of {server}.", {}, _list_prompts))
        params = {
            "name": {**_STRING, "description": "The prompt's name."},
            "arguments": {"type": "object", "additionalProperties": _STRING, "description": "Its arguments."},
        }
        made.append(McpServerTool(connect, "get_prompt", f"Get a prompt of {server}.", params, _get_prompt))
    for tool in [t for t in made if t.name in taken]:
        log.warning("MCP server %r: its own tool %r is offered, not adk's of that name", server, tool.name)
    return [t for t in made if t.name not in taken]


async def _list_resources(client: Client, args: dict[str, Any]) -> McpResult:
    listed = await client.list_resources()
    lines = [
        f"{r.uri}{f' ({r.mime_type})' if r.mime_type else ''}: {r.name}"
        + (f" - {r.description}" if r.description else "")
        for r in listed.resources
    ]
    if listed.next_cursor:
        lines.append("(more resources exist; only the first page is listed)")
    return McpResult(tuple(McpText(line) for line in lines))


async def _read(client: Client, args: dict[str, Any]) -> McpResult:
    from mcp.types import TextResourceContents

    read = await client.read_resource(args["uri"])
    return McpResult(
        tuple(
            McpResource(c.uri, c.mime_type, text=c.text)
            if isinstance(c, TextResourceContents)
            else McpResource(c.uri, c.mime_type, blob=c.blob)
            for c in read.contents
        )
    )


async def _list_prompts(client: Client, args: dict[str, Any]) -> McpResult:
    listed = await client.list_prompts()
    lines = []
    for p in listed.prompts:
        params = ", ".join(a.name + ("" if a.required else "?") for a in p.arguments or ())
        lines.append(f"{p.name}({params})" + (f": {p.description}" if p.description else ""))
    return McpResult(tuple(McpText(line) for line in lines))


async def _get_prompt(client: Client, args: dict[str, Any]) -> McpResult:
    from mcp.types import TextContent

    got = await client.get_prompt(args["name"], args.get("arguments") or {})
    return McpResult(
        tuple(
            McpText(f"{m.role}: {m.content.text if isinstance(m.content, TextContent) else '[not text]'}")
            for m in got.messages
        )
    )
