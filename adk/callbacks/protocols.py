"""One `typing.Protocol` per hook; a callback implements any subset of them.

A hook may be `def` or `async def`: each protocol's return type admits both. Hooks take their
arguments positionally, so a hook may name its parameters as it likes.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from adk.callbacks.results import Cont, Defer, Fallback, Halt, Raise, Retry

if TYPE_CHECKING:
    from adk.context import AgentContext, ModelContext, RunContext, ToolContext
    from adk.events import Event, LlmResponse, Message

__all__ = [
    "AfterAgent",
    "AfterAgentResult",
    "AfterModel",
    "AfterRun",
    "AfterTool",
    "AnyCallback",
    "BeforeAgent",
    "BeforeAgentResult",
    "BeforeModel",
    "BeforeModelResult",
    "BeforeRun",
    "BeforeRunResult",
    "BeforeTool",
    "BeforeToolResult",
    "Content",
    "OnAgentError",
    "OnAgentErrorResult",
    "OnEvent",
    "OnModelError",
    "OnModelErrorResult",
    "OnToolError",
    "OnToolErrorResult",
    "OnUserMessage",
    "OnUserMessageResult",
]

Content: TypeAlias = "Message | str"
"""What an agent says: a message, or plain text for an assistant message."""

BeforeAgentResult: TypeAlias = "Cont[AgentContext] | Halt[Content]"
AfterAgentResult: TypeAlias = "Message | None"
BeforeModelResult: TypeAlias = "Cont[ModelContext] | Halt[LlmResponse]"
OnModelErrorResult: TypeAlias = "Retry[ModelContext] | Fallback[LlmResponse] | Raise"
BeforeToolResult: TypeAlias = "Cont[ToolContext] | Halt[Any] | Defer"
OnToolErrorResult: TypeAlias = "Retry[ToolContext] | Fallback[Any] | Raise"
OnAgentErrorResult: TypeAlias = "Fallback[Content] | Raise"
OnUserMessageResult: TypeAlias = "Message | Halt[Content]"
BeforeRunResult: TypeAlias = "Cont[RunContext] | Halt[Content]"


class BeforeAgent(Protocol):
    """Before every agent runs. `Halt(content)` ends the invocation with `content`."""

    def before_agent(self, ctx: AgentContext, /) -> BeforeAgentResult | Awaitable[BeforeAgentResult]: ...


class AfterAgent(Protocol):
    """After an agent's body: return its final output, or a replacement to emit as a new event."""

    def after_agent(
        self, output: Message | None, ctx: AgentContext, /
    ) -> AfterAgentResult | Awaitable[AfterAgentResult]: ...


class BeforeModel(Protocol):
    """Before each model call. `Cont` with a changed request sends it; `Halt` skips the model."""

    def before_model(self, ctx: ModelContext, /) -> BeforeModelResult | Awaitable[BeforeModelResult]: ...


class AfterModel(Protocol):
    """After each successful model call (or fallback): return the response, possibly replaced."""

    def after_model(
        self, response: LlmResponse, ctx: ModelContext, /
    ) -> LlmResponse | Awaitable[LlmResponse]: ...


class OnModelError(Protocol):
    """When a model call fails: `Retry`, `Fallback(response)` or `Raise(error)`."""

    def on_model_error(
        self, error: Exception, ctx: ModelContext, /
    ) -> OnModelErrorResult | Awaitable[OnModelErrorResult]: ...


class BeforeTool(Protocol):
    """Before each tool call. `Cont` with changed args uses them; `Halt(result)` skips the tool;
    `Defer(reason)` makes the call wait for a person's approval (docs/approvals.md)."""

    def before_tool(self, ctx: ToolContext, /) -> BeforeToolResult | Awaitable[BeforeToolResult]: ...


class AfterTool(Protocol):
    """After each tool call, halted or not: return the result, possibly replaced."""

    def after_tool(self, result: Any, ctx: ToolContext, /) -> Any: ...


class OnToolError(Protocol):
    """When a tool fails (raises, bad arguments, unknown tool): `Retry`, `Fallback` or `Raise`."""

    def on_tool_error(
        self, error: Exception, ctx: ToolContext, /
    ) -> OnToolErrorResult | Awaitable[OnToolErrorResult]: ...


class OnAgentError(Protocol):
    """When an agent's body raises: `Fallback(content)` stands in for its output, `Raise` passes it on."""

    def on_agent_error(
        self, error: Exception, ctx: AgentContext, /
    ) -> OnAgentErrorResult | Awaitable[OnAgentErrorResult]: ...


class OnUserMessage(Protocol):
    """Runner callbacks: the user's message, before it is stored. Return it (or a replacement), or `Halt`."""

    def on_user_message(
        self, message: Message, ctx: RunContext, /
    ) -> OnUserMessageResult | Awaitable[OnUserMessageResult]: ...


class BeforeRun(Protocol):
    """Runner callbacks: before the root agent runs. `Halt(content)` answers instead of it."""

    def before_run(self, ctx: RunContext, /) -> BeforeRunResult | Awaitable[BeforeRunResult]: ...


class OnEvent(Protocol):
    """Runner callbacks: every event, before it is stored and yielded. Return it, or a replacement."""

    def on_event(self, event: Event, ctx: RunContext, /) -> Event | Awaitable[Event]: ...


class AfterRun(Protocol):
    """Runner callbacks: the run ended by itself; `ctx.error` says how (None: it completed)."""

    def after_run(self, ctx: RunContext, /) -> Awaitable[None] | None: ...


_AnyHook: TypeAlias = (
    BeforeAgent
    | AfterAgent
    | BeforeModel
    | AfterModel
    | OnModelError
    | BeforeTool
    | AfterTool
    | OnToolError
    | OnAgentError
    | OnUserMessage
    | BeforeRun
    | OnEvent
    | AfterRun
)

AnyCallback: TypeAlias = _AnyHook | type[_AnyHook]
"""What may be registered as a callback: an instance or module with a hook, or such a class."""
