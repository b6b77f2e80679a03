"""`Callback`: an optional base class whose hooks do nothing, for those who prefer subclassing.

Override the hooks you need; mypy checks each override against the hook's signature. Hooks left
as they are here are not registered, so they cost nothing at run time.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from adk.callbacks.protocols import (
    AfterAgentResult,
    BeforeAgentResult,
    BeforeModelResult,
    BeforeRunResult,
    BeforeToolResult,
    OnAgentErrorResult,
    OnModelErrorResult,
    OnToolErrorResult,
    OnUserMessageResult,
)
from adk.callbacks.results import Cont, Raise

if TYPE_CHECKING:
    from adk.context import AgentContext, ModelContext, RunContext, ToolContext
    from adk.events import Event, LlmResponse, Message

__all__ = ["Callback"]


class Callback:
    """Base class with a no-op for every hook: `before_*` go on, `after_*` pass through, errors re-raise."""

    def before_agent(self, ctx: AgentContext, /) -> BeforeAgentResult | Awaitable[BeforeAgentResult]:
        return Cont(ctx)

    def after_agent(
        self, output: Message | None, ctx: AgentContext, /
    ) -> AfterAgentResult | Awaitable[AfterAgentResult]:
        return output

    def before_model(self, ctx: ModelContext, /) -> BeforeModelResult | Awaitable[BeforeModelResult]:
        return Cont(ctx)

    def after_model(
        self, response: LlmResponse, ctx: ModelContext, /
    ) -> LlmResponse | Awaitable[LlmResponse]:
        return response

    def on_model_error(
        self, error: Exception, ctx: ModelContext, /
    ) -> OnModelErrorResult | Awaitable[OnModelErrorResult]:
        return Raise(error)

    def before_tool(self, ctx: ToolContext, /) -> BeforeToolResult | Awaitable[BeforeToolResult]:
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext, /) -> Any:
        return result

    def on_tool_error(
        self, error: Exception, ctx: ToolContext, /
    ) -> OnToolErrorResult | Awaitable[OnToolErrorResult]:
        return Raise(error)

    def on_agent_error(
        self, error: Exception, ctx: AgentContext, /
    ) -> OnAgentErrorResult | Awaitable[OnAgentErrorResult]:
        return Raise(error)

    def on_user_message(
        self, message: Message, ctx: RunContext, /
    ) -> OnUserMessageResult | Awaitable[OnUserMessageResult]:
        return message

    def before_run(self, ctx: RunContext, /) -> BeforeRunResult | Awaitable[BeforeRunResult]:
        return Cont(ctx)

    def on_event(self, event: Event, ctx: RunContext, /) -> Event | Awaitable[Event]:
        return event

    def after_run(self, ctx: RunContext, /) -> Awaitable[None] | None:
        return None
