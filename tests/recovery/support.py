"""`Recorder`: the (hook, model or tool, attempt) trace of a run's model and tool hooks."""

from __future__ import annotations

from typing import Any

from adk import Cont, LlmResponse, ModelContext, Raise, ToolContext


class Recorder:
    """Records (hook, model or tool, attempt) for every model and tool hook, and passes everything on."""

    def __init__(self) -> None:
        self.trace: list[tuple[str, str, int]] = []

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        self.trace.append(("before_model", ctx.model.name, ctx.attempt))
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self.trace.append(("after_model", ctx.model.name, ctx.attempt))
        return response

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        self.trace.append(("on_model_error", f"{ctx.model.name}:{type(error).__name__}", ctx.attempt))
        return Raise(error)

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self.trace.append(("before_tool", ctx.tool.name, ctx.attempt))
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        self.trace.append(("after_tool", ctx.tool.name, ctx.attempt))
        return result

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Raise:
        self.trace.append(("on_tool_error", f"{ctx.tool.name}:{type(error).__name__}", ctx.attempt))
        return Raise(error)
