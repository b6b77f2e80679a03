"""The results: their types, and `match` with `assert_never` over each hook's result union."""

from typing import Any, assert_never, assert_type

from adk import Cont, Fallback, Halt, LlmResponse, ModelContext, Raise, Retry, ToolContext
from adk.types import (
    BeforeAgentResult,
    BeforeModelResult,
    BeforeResult,
    BeforeToolResult,
    ErrorResult,
    OnModelErrorResult,
    OnToolErrorResult,
)


def constructors(mctx: ModelContext, response: LlmResponse) -> None:
    assert_type(Cont(mctx), Cont[ModelContext])
    assert_type(Cont(mctx).ctx, ModelContext)
    assert_type(Halt(response), Halt[LlmResponse])
    assert_type(Halt(response).value, LlmResponse)
    assert_type(Retry(mctx), Retry[ModelContext])
    assert_type(Retry(mctx, delay=1.5).delay, float | None)
    assert_type(Fallback(response), Fallback[LlmResponse])
    assert_type(Raise(ValueError()), Raise)
    assert_type(Raise(ValueError()).error, Exception)
    Retry(mctx, delay="soon")  # type: ignore[arg-type]
    Raise("not an exception")  # type: ignore[arg-type]
    Cont(mctx).ctx = mctx  # type: ignore[misc]


def covariance(mctx: ModelContext) -> None:
    # Results are covariant: a Cont of a ModelContext is a Cont of an object.
    widened: Cont[object] = Cont(mctx)
    narrowed: Cont[ModelContext] = Cont(object())  # type: ignore[arg-type]
    del widened, narrowed


def before_model(result: BeforeModelResult) -> str:
    match result:
        case Cont(ctx):
            assert_type(ctx, ModelContext)
            return ctx.request.model
        case Halt(response):
            assert_type(response, LlmResponse)
            return response.content
        case _:
            assert_never(result)


def before_model_missing_a_case(result: BeforeModelResult) -> None:
    match result:
        case Cont():
            pass
        case _:
            assert_never(result)  # type: ignore[arg-type]


def on_tool_error(result: OnToolErrorResult) -> str:
    match result:
        case Retry(ctx, delay):
            assert_type(ctx, ToolContext)
            assert_type(delay, float | None)
            return ctx.tool_call_id
        case Fallback(value):
            assert_type(value, Any)
            return "fallback"
        case Raise(error):
            assert_type(error, Exception)
            return str(error)
        case _:
            assert_never(result)


def on_model_error(result: OnModelErrorResult) -> None:
    match result:
        case Retry() | Fallback():
            pass
        case _:
            assert_type(result, Raise)


def generic_aliases(before: BeforeResult[int, str], error: ErrorResult[int, str]) -> None:
    match before:
        case Cont(ctx):
            assert_type(ctx, int)
        case Halt(value):
            assert_type(value, str)
        case _:
            assert_never(before)
    match error:
        case Retry(ctx):
            assert_type(ctx, int)
        case Fallback(value):
            assert_type(value, str)
        case Raise():
            pass
        case _:
            assert_never(error)


def other_unions(agent: BeforeAgentResult, tool: BeforeToolResult) -> None:
    before_model(agent)  # type: ignore[arg-type]
    before_model(tool)  # type: ignore[arg-type]
