"""Hooks against their protocols, and overrides of the Callback base class."""

from types import ModuleType
from typing import Any

from adk import (
    AgentContext,
    Callback,
    Cont,
    Defer,
    Fallback,
    Halt,
    LlmResponse,
    Message,
    ModelContext,
    Raise,
    Retry,
    ToolContext,
)
from adk.types import (
    AfterAgent,
    AfterModel,
    AfterTool,
    AnyCallback,
    BeforeAgent,
    BeforeModel,
    BeforeModelResult,
    BeforeTool,
    OnModelError,
    OnToolError,
)
from tests.typing import hooks_module

# --- accepted ---------------------------------------------------------------------------------


class Everything:
    """Every hook, sync and async, with parameter names of its own (hooks take them positionally)."""

    def before_agent(self, context: AgentContext) -> Cont[AgentContext] | Halt[str]:
        return Halt("closed") if context.invocation.ended else Cont(context)

    async def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        return output

    async def before_model(self, ctx: ModelContext) -> BeforeModelResult:
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        return response

    async def on_model_error(
        self, error: Exception, ctx: ModelContext
    ) -> Retry[ModelContext] | Fallback[LlmResponse] | Raise:
        return Retry(ctx, delay=0.5)

    def before_tool(self, ctx: ToolContext) -> Halt[dict[str, int]]:
        return Halt({"cached": 1})

    def after_tool(self, result: object, ctx: ToolContext) -> object:
        return result

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Fallback[str]:
        return Fallback("unavailable")


everything = Everything()
protocols: tuple[
    BeforeAgent, AfterAgent, BeforeModel, AfterModel, OnModelError, BeforeTool, AfterTool, OnToolError
] = (everything, everything, everything, everything, everything, everything, everything, everything)

module_before: BeforeModel = hooks_module
module_after: AfterModel = hooks_module
module_error: OnModelError = hooks_module
module_tool: AfterTool = hooks_module
callbacks: list[AnyCallback] = [everything, Everything, hooks_module]


class Subclassed(Callback):
    """Overrides may narrow the result, be async, and name their parameters as they like."""

    def before_model(self, ctx: ModelContext, /) -> Halt[LlmResponse]:
        return Halt(LlmResponse.text("cached"))

    async def after_tool(self, result: Any, context: ToolContext, /) -> Any:
        return result

    async def on_tool_error(self, error: Exception, ctx: ToolContext, /) -> Retry[ToolContext] | Raise:
        return Raise(error)


registered: list[AnyCallback] = [Subclassed(), Subclassed]


# --- rejected ---------------------------------------------------------------------------------


class RetriesBeforeModel:
    """A before_model hook may not return Retry."""

    def before_model(self, ctx: ModelContext) -> Retry[ModelContext]:
        return Retry(ctx)


class AfterToolTakesAModelContext:
    """An after_tool hook gets a ToolContext, not a ModelContext."""

    def after_tool(self, result: Any, ctx: ModelContext) -> Any:
        return result


class ContinuesWithAnotherContext:
    """A before_tool hook must go on with a ToolContext."""

    def before_tool(self, ctx: ToolContext) -> Cont[ModelContext]:
        raise NotImplementedError


class FallsBackFromBeforeAgent:
    async def before_agent(self, ctx: AgentContext) -> Fallback[str]:
        return Fallback("no")


retries: BeforeModel = RetriesBeforeModel()  # type: ignore[assignment]
takes_model_context: AfterTool = AfterToolTakesAModelContext()  # type: ignore[assignment]
other_context: BeforeTool = ContinuesWithAnotherContext()  # type: ignore[assignment]
falls_back: BeforeAgent = FallsBackFromBeforeAgent()  # type: ignore[assignment]
not_a_callback: list[AnyCallback] = [RetriesBeforeModel()]  # type: ignore[list-item]
not_a_callback_class: list[AnyCallback] = [AfterToolTakesAModelContext]  # type: ignore[list-item]
module_is_no_before_tool: BeforeTool = hooks_module  # type: ignore[assignment]
any_module: ModuleType = hooks_module


class WrongOverrides(Callback):
    def before_model(self, ctx: ModelContext, /) -> Retry[ModelContext]:  # type: ignore[override]
        return Retry(ctx)

    def after_tool(self, result: Any, ctx: ModelContext, /) -> Any:  # type: ignore[override]
        return result

    async def on_model_error(self, error: Exception, ctx: ModelContext, /) -> Halt[LlmResponse]:  # type: ignore[override]
        return Halt(LlmResponse.text("no"))

    def before_agent(self, ctx: AgentContext, extra: int, /) -> Cont[AgentContext]:  # type: ignore[override]
        return Cont(ctx)


# --- Defer: before_tool only --------------------------------------------------------------------


class ApprovesLargeAmounts:
    """A before_tool hook may defer a call for approval."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Defer:
        return Defer("large amount") if ctx.args.get("amount", 0) > 1000 else Cont(ctx)


class DefersAModel:
    """Only before_tool may return Defer: a model call cannot wait for a person."""

    def before_model(self, ctx: ModelContext) -> Defer:
        return Defer("no")


approves: BeforeTool = ApprovesLargeAmounts()
defers_model: BeforeModel = DefersAModel()  # type: ignore[assignment]
Defer(42)  # type: ignore[arg-type]
