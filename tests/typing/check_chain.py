"""What each chain helper returns for each hook name, and the calls mypy rejects."""

from typing import Any, assert_type

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
from adk.callbacks import Callbacks, HookName, run_after, run_before, run_on_error
from adk.callbacks.registry import HookImpl
from tests.typing import hooks_module


class Plain:
    """Any object can be a context."""


async def before(callbacks: Callbacks, actx: AgentContext, mctx: ModelContext, tctx: ToolContext) -> None:
    assert_type(await run_before(callbacks, "before_agent", actx), Cont[AgentContext] | Halt[Message | str])
    assert_type(await run_before(callbacks, "before_model", mctx), Cont[ModelContext] | Halt[LlmResponse])
    assert_type(await run_before(callbacks, "before_tool", tctx), Cont[ToolContext] | Halt[Any] | Defer)
    assert_type(
        await run_before(callbacks, "before_model", mctx, continue_on_error=True, continue_on_response=True),
        Cont[ModelContext] | Halt[LlmResponse],
    )
    # Another context: generic over the context. The AG-UI hooks are not core hooks.
    assert_type(await run_before(callbacks, "before_tool", Plain()), Cont[Plain] | Halt[Any] | Defer)
    await run_before(callbacks, "before_translate", Plain())  # type: ignore[call-overload]
    await run_before(callbacks, "before_mdoel", mctx)  # type: ignore[call-overload]
    await run_before(callbacks, "before_model", mctx, continue_on_response="yes")  # type: ignore[call-overload]
    await run_before(callbacks, "before_model", mctx, True)  # type: ignore[call-overload]


async def after(
    callbacks: Callbacks,
    actx: AgentContext,
    mctx: ModelContext,
    tctx: ToolContext,
    message: Message | None,
    response: LlmResponse,
) -> None:
    assert_type(await run_after(callbacks, "after_agent", message, actx), Message | None)
    assert_type(await run_after(callbacks, "after_model", response, mctx), LlmResponse)
    assert_type(await run_after(callbacks, "after_tool", {"sum": 3}, tctx), Any)
    assert_type(await run_after(callbacks, "after_tool", 3, Plain()), int)
    await run_after(callbacks, "after_translate", 3, Plain())  # type: ignore[call-overload]
    await run_after(callbacks, "after_modle", response, mctx)  # type: ignore[call-overload]
    await run_after(callbacks, "after_model", response, mctx, continue_on_response=True)  # type: ignore[call-overload]


async def on_error(callbacks: Callbacks, mctx: ModelContext, tctx: ToolContext, error: Exception) -> None:
    assert_type(
        await run_on_error(callbacks, "on_model_error", error, mctx),
        Retry[ModelContext] | Fallback[LlmResponse] | Raise,
    )
    assert_type(
        await run_on_error(callbacks, "on_tool_error", error, tctx),
        Retry[ToolContext] | Fallback[Any] | Raise,
    )
    await run_on_error(callbacks, "on_tool_eror", error, tctx)  # type: ignore[call-overload]
    await run_on_error(callbacks, "on_tool_error", "not an exception", tctx)  # type: ignore[call-overload]


async def generic_hook_name(callbacks: Callbacks, hook: HookName, ctx: Plain, name: str) -> None:
    """Framework code passes the hook name as a variable: it must be a HookName, not any str."""
    assert_type(await run_before(callbacks, hook, ctx), Cont[Plain] | Halt[Any] | Defer)
    assert_type(await run_on_error(callbacks, hook, ValueError(), ctx), Retry[Plain] | Fallback[Any] | Raise)
    await run_before(callbacks, name, ctx)  # type: ignore[call-overload]


class Tracing(Callback):
    async def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        return Cont(ctx)


class Plainly:
    def before_tool(self, context: ToolContext) -> Cont[ToolContext]:
        return Cont(context)


async def what_may_be_a_callback(mctx: ModelContext, tctx: ToolContext) -> None:
    """A module, a class, an instance, a Callback subclass, or a resolved Callbacks."""
    assert_type(
        await run_before([hooks_module], "before_model", mctx), Cont[ModelContext] | Halt[LlmResponse]
    )
    assert_type(
        await run_before([Tracing, Tracing(), hooks_module, Plainly], "before_model", mctx),
        Cont[ModelContext] | Halt[LlmResponse],
    )
    assert_type(await run_before((Plainly(),), "before_tool", tctx), Cont[ToolContext] | Halt[Any] | Defer)
    assert_type(await run_after([hooks_module], "after_model", LlmResponse.text("hi"), mctx), LlmResponse)
    resolved = Callbacks.of([hooks_module, Tracing, Plainly()])
    assert_type(resolved, Callbacks)
    assert_type(resolved + Callbacks.of([Tracing]), Callbacks)
    assert_type(resolved.without(lambda cb: isinstance(cb, Tracing)), Callbacks)
    assert_type(resolved.get("before_model"), tuple[HookImpl, ...])
    resolved.get("before_mdoel")  # type: ignore[arg-type]
