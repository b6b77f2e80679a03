"""MCP tools: `McpToolset` lists an MCP server's tools, each a tool like any other
(extra `adk-callbacks[mcp]`).

It connects over stdio (`McpToolset.stdio(command, *args)`) or streamable HTTP
(`McpToolset.http(url)`) on first use, and lists the server's tools: their JSON schemas become
declarations, refreshed when the server says the list changed. Every call goes through the
agent's tool hooks (`before_tool`, `after_tool`, `on_tool_error`, retries, approvals) and
answers an `McpResult`, its content blocks typed (adk/mcp_content.py). A tool that must run as
a task, or whose schema is invalid in its declared dialect, is left out. An MCP result with
`isError` is a `McpToolError`; a dropped connection is a `McpConnectionError`, which is
transient (retried by the default policy only for tools the server annotates read-only or
idempotent), and the next call connects again. `timeout=` bounds each call of the toolset's tools
(a `ToolTimeoutError`, docs/limits.md). `close()` (or the runner's) ends the connection and the
server process; so does leaving `async with`. Progress, and what a server may ask (sampling,
roots, elicitation) or offer (resources, prompts): adk/mcp_progress.py, adk/mcp_requests.py,
adk/mcp_resources.py, docs/mcp.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from adk.approvals import Ask
from adk.context import ToolContext
from adk.errors import McpConnectionError, McpServerError, McpToolError
from adk.events import ToolDeclaration
from adk.limits.timeouts import positive
from adk.mcp_content import (
    McpAudio,
    McpBlock,
    McpImage,
    McpResource,
    McpResourceLink,
    McpResult,
    McpText,
    from_sdk,
)
from adk.mcp_held import Held
from adk.mcp_progress import progress_of
from adk.mcp_requests import Answer, McpQuestion, Requests, SamplingCheck
from adk.mcp_resources import extra_tools
from adk.tools import BaseTool, Toolset

if TYPE_CHECKING:
    from mcp import Client, StdioServerParameters
    from mcp.shared.dispatcher import ProgressFnT
    from mcp.types import Tool as McpToolInfo

__all__ = [
    "McpAudio",
    "McpBlock",
    "McpConnectionError",
    "McpImage",
    "McpQuestion",
    "McpResource",
    "McpResourceLink",
    "McpResult",
    "McpServerError",
    "McpText",
    "McpTool",
    "McpToolError",
    "McpToolset",
]

log = logging.getLogger(__name__)


def _import_mcp() -> Any:
    try:
        import mcp
    except ImportError as e:  # pragma: no cover - the extra is installed in tests
        raise ImportError("adk.mcp needs the `mcp` package: pip install 'adk-callbacks[mcp]'") from e
    return mcp


class McpTool(BaseTool):
    """One tool of an MCP server; calls go to the server through its toolset's connection."""

    def __init__(self, toolset: McpToolset, info: McpToolInfo) -> None:
        self.toolset = toolset
        self.name = info.name
        self.description = info.description or ""
        hints = info.annotations
        self.idempotent = bool(hints and (hints.read_only_hint or hints.idempotent_hint))
        self.timeout = toolset.timeout
        self._declaration = ToolDeclaration(
            name=self.name, description=self.description, parameters=dict(info.input_schema)
        )

    @property
    def declaration(self) -> ToolDeclaration:
        return self._declaration

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> McpResult | Ask:
        """The call's result; or, when the server asks the person (`elicitation=True`), the question:
        the run pauses, the MCP call held open until the reply resumes it (adk/mcp_held.py)."""
        toolset = self.toolset
        return await toolset.held.call(ctx, lambda call: toolset.call(self.name, args, progress_of(call)))

    def __repr__(self) -> str:
        return f"McpTool({self.name!r}, server={self.toolset.name!r})"


class McpToolset(Toolset):
    """The tools of one MCP server, connected on first use and closed by `close()`."""

    relays = True
    """Its calls stream events as they run (`tool.progress`): its agent relays them."""

    def __init__(
        self,
        server: str | StdioServerParameters,
        *,
        name: str | None = None,
        timeout: float | None = None,
        sampling: bool | SamplingCheck = False,
        roots: Sequence[str] = (),
        elicitation: Answer | bool | None = None,
        resources: bool = False,
        prompts: bool = False,
    ) -> None:
        self.server = server
        self.timeout = positive(timeout, "McpToolset: timeout")
        """Seconds each call of its tools may run (a `ToolTimeoutError` after), or None."""
        self.name = name or (server if isinstance(server, str) else server.command)
        self.requests = Requests(self.name, sampling, roots, elicitation)
        """What the server may ask (adk/mcp_requests.py): off unless an option above gives it."""
        self.held = Held(self.name, self.requests)
        """Its calls held open while their runs wait for a person's reply (adk/mcp_held.py)."""
        self.resources = resources
        self.prompts = prompts
        """Whether its resources and prompts are offered as tools too (adk/mcp_resources.py)."""
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._tools: list[BaseTool] | None = None
        self._lock: asyncio.Lock | None = None

    @classmethod
    def stdio(
        cls,
        command: str,
        *args: str,
        env: dict[str, str] | None = None,
        name: str | None = None,
        **options: Any,
    ) -> McpToolset:
        """A server started as `command args...`, spoken to over its stdin and stdout (`options`:
        those of `McpToolset`)."""
        mcp = _import_mcp()
        return cls(mcp.StdioServerParameters(command=command, args=list(args), env=env), name=name, **options)

    @classmethod
    def http(cls, url: str, *, name: str | None = None, **options: Any) -> McpToolset:
        """A server at `url`, spoken to over streamable HTTP (`options`: those of `McpToolset`)."""
        return cls(url, name=name, **options)

    async def get_tools(self) -> Sequence[BaseTool]:
        """The server's tools (listed again after it said the list changed)."""
        tools = self._tools
        if tools is None:
            client = await self._connect()
            try:
                listed = await client.list_tools()
            except Exception as e:
                await self._drop()
                raise McpServerError(f"MCP server {self.name!r}: could not list its tools: {e}") from e
            own: list[BaseTool] = [t for t in (self._make(info) for info in listed.tools) if t is not None]
            taken = {t.name for t in own}
            tools = self._tools = own + extra_tools(
                self._connect, self.name, self.resources, self.prompts, taken
            )
        return tools

    def _make(self, info: McpToolInfo) -> McpTool | None:
        """The tool, or None (with one warning) when adk cannot offer it to a model."""
        why = _unusable(info)
        if why is not None:
            log.warning("MCP server %r: tool %r left out: %s", self.name, info.name, why)
            return None
        return McpTool(self, info)

    async def call(self, tool: str, args: dict[str, Any], progress: ProgressFnT | None = None) -> McpResult:
        """Call `tool` with `args`: its content blocks and structured content, typed; with a
        `progress` callback, the server is asked for progress notifications and they go to it."""
        client = await self._connect()
        try:
            result = await client.call_tool(tool, args, progress_callback=progress)
        except Exception as e:
            if self._task is None or self._task.done() or _dropped(e):
                await self._drop()
                raise McpConnectionError(
                    f"MCP server {self.name!r}: the connection dropped during {tool!r}: {e}"
                ) from e
            raise
        answer = from_sdk(result)
        if result.is_error:
            raise McpToolError(f"MCP server {self.name!r}, tool {tool!r}: {answer.text_for_model()}")
        return answer

    async def _connect(self) -> Client:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            client, task = self._client, self._task
            if client is not None and task is not None and not task.done():
                return client
            await self._drop()
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            self._closing = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._serve(ready, self._closing))
            try:
                self._client = await ready
            except Exception as e:
                await self._drop()
                raise McpServerError(f"MCP server {self.name!r}: could not connect: {_one_line(e)}") from e
            return self._client

    async def _serve(self, ready: asyncio.Future[Client], closing: asyncio.Event) -> None:
        """Holds the connection open in a task of its own: the SDK's client must close where it opened."""
        mcp = _import_mcp()
        server: Any = self.server
        if not isinstance(server, str):
            from mcp.client.stdio import stdio_client

            server = stdio_client(server, errlog=_errlog())
        try:
            options = self.requests.client_options()
            async with mcp.Client(
                server, message_handler=self._on_message, cache=None, mode="legacy", **options
            ) as client:
                ready.set_result(client)
                await closing.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else McpServerError(str(e)))
            elif not isinstance(e, asyncio.CancelledError):
                log.warning("MCP server %r: the connection ended: %s", self.name, _one_line(e))
        finally:
            self._tools = None

    async def _on_message(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self._tools = None

    async def _drop(self) -> None:
        task, closing = self._task, self._closing
        self._client = self._task = self._closing = None
        self._tools = None
        await self.held.close()
        if task is None:
            return
        if closing is not None:
            closing.set()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(task), 5)
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def close(self) -> None:
        """End the connection (and a stdio server's process); the next use connects again."""
        await self._drop()

    async def __aenter__(self) -> McpToolset:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"McpToolset({self.name!r})"


def _unusable(info: McpToolInfo) -> str | None:
    """Why a listed tool cannot be offered to a model, or None.

    A tool that must be called as a task answers every plain call with an error; an input schema
    is checked against the JSON Schema dialect it declares with `$schema` (2020-12, MCP's, when
    it declares none or one jsonschema does not know).
    """
    from jsonschema import Draft202012Validator, SchemaError  # type: ignore[import-untyped]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]

    if info.execution is not None and info.execution.task_support == "required":
        return 'it must be called as a task (execution.taskSupport is "required"), which adk does not do'
    schema = dict(info.input_schema)
    declared = isinstance(schema.get("$schema"), str)
    dialect = validator_for(schema, Draft202012Validator) if declared else Draft202012Validator
    try:
        dialect.check_schema(schema)
    except SchemaError as e:
        return f"its input schema is not valid JSON Schema: {e.message}"
    return None


def _errlog() -> TextIO:
    """Where a stdio server's stderr goes: the process's own (fd 2), or nowhere when it has none.

    The SDK's default is `sys.stderr` as it was on import, which may be a captured stream without
    a file descriptor (pytest's capture, a notebook): the server would not start.
    """
    return sys.__stderr__ or _devnull()


@functools.cache
def _devnull() -> TextIO:
    return open(os.devnull, "w")  # kept open for every server of the process


def _dropped(error: BaseException) -> bool:
    import anyio

    return (
        isinstance(error, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream | OSError)
        or "closed" in str(error).lower()
    )


def _one_line(error: BaseException) -> str:
    """An error (or the first of a group) in one line."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"
