"""A module used as a callback: its functions are hooks, checked against the hook protocols."""

from adk import Cont, Fallback, LlmResponse, ModelContext, Raise, ToolContext
from adk.types import BeforeModelResult, OnModelErrorResult


def before_model(ctx: ModelContext) -> BeforeModelResult:
    return Cont(ctx)


async def after_model(response: LlmResponse, ctx: ModelContext) -> LlmResponse:
    return response


def on_model_error(error: Exception, ctx: ModelContext) -> OnModelErrorResult:
    return Fallback(LlmResponse.text("sorry")) if ctx.attempt > 2 else Raise(error)


async def after_tool(result: object, ctx: ToolContext) -> object:
    return result
