"""The chain helpers' semantics, as exact traces: who ran, in what order, with what, and what came out.

Contexts here are plain tuples (any object can be a context): each `Cont` adds a mark, so the
context that comes out shows the path it took.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, cast

import pytest

from adk.callbacks import (
    Callback,
    Callbacks,
    Cont,
    Fallback,
    Halt,
    HookName,
    Raise,
    Retry,
    run_after,
    run_before,
    run_on_error,
)
from adk.context import ModelContext
from adk.errors import CallbackError
from adk.events import LlmResponse
from tests.callbacks import module_callback
from tests.callbacks.contexts import agent_context, model_context, tool_context
from tests.callbacks.scripted import AsyncScripted, Scripted, Trace, fail


def add(mark: str) -> Callable[[tuple[str, ...]], Cont[tuple[str, ...]]]:
    """A before answer: go on with `mark` added to the context."""
    return lambda ctx: Cont((*ctx, mark))


def halt(value: object) -> Callable[..., Halt[object]]:
    return lambda *args: Halt(value)


def wrap(mark: str) -> Callable[[str, object], str]:
    """An after answer: `mark(value)`, so that the folded value shows the order of the fold."""
    return lambda value, ctx: f"{mark}({value})"


def reraise(error: Exception) -> Callable[..., Raise]:
    """An on_error answer: pass `error` on in place of the one received."""
    return lambda err, ctx: Raise(error)


START: tuple[str, ...] = ("start",)


# --- run_before -------------------------------------------------------------------------------


async def test_before_empty_chain_returns_cont_of_the_same_context() -> None:
    chains: tuple[list[object], Callbacks] = ([], Callbacks.of([]))
    for callbacks in chains:
        result = await run_before(callbacks, "before_model", START)
        assert isinstance(result, Cont)
        assert result.ctx is START


async def test_a_subclass_of_callbacks_is_a_registration_like_any_other() -> None:
    class Named(Callbacks):
        """Callbacks with a name for a log: a subclass the helpers must not take for a list."""

    trace: Trace = []
    callbacks = Named.of([Scripted("a", trace, before_model=add("a"), after_tool=wrap("a"))])
    assert type(callbacks) is Named
    assert await run_before(callbacks, "before_model", START) == Cont(("start", "a"))
    assert await run_after(callbacks, "after_tool", "v", START) == "a(v)"
    assert trace == [("a", "before_model", START), ("a", "after_tool", "v", START)]


async def test_before_skips_callbacks_without_the_hook() -> None:
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_model=add("a")),
        Scripted("b", trace, after_model=wrap("b"), before_tool=add("b")),
        Scripted("c", trace, before_model=add("c")),
    ]
    assert await run_before(callbacks, "before_model", START) == Cont(("start", "a", "c"))
    assert trace == [("a", "before_model", START), ("c", "before_model", ("start", "a"))]


async def test_before_threads_the_context_through_cont_in_list_order() -> None:
    trace: Trace = []
    callbacks = [Scripted(name, trace, before_agent=add(name)) for name in ("x", "y", "z")]
    assert await run_before(callbacks, "before_agent", START) == Cont(("start", "x", "y", "z"))
    assert trace == [
        ("x", "before_agent", ("start",)),
        ("y", "before_agent", ("start", "x")),
        ("z", "before_agent", ("start", "x", "y")),
    ]


async def test_before_first_halt_stops_the_chain() -> None:
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_tool=add("a")),
        Scripted("b", trace, before_tool=halt("from b")),
        Scripted("c", trace, before_tool=halt("from c")),
        Scripted("d", trace, before_tool=add("d")),
    ]
    assert await run_before(callbacks, "before_tool", START) == Halt("from b")
    assert trace == [("a", "before_tool", START), ("b", "before_tool", ("start", "a"))]


async def test_before_mixes_sync_and_async_hooks_in_order() -> None:
    trace: Trace = []
    callbacks = [
        Scripted("s1", trace, before_tool=add("s1")),
        AsyncScripted("a1", trace, before_tool=add("a1")),
        Scripted("s2", trace, before_tool=add("s2")),
        AsyncScripted("a2", trace, before_tool=halt("a2")),
        Scripted("s3", trace, before_tool=add("s3")),
    ]
    assert await run_before(callbacks, "before_tool", START) == Halt("a2")
    assert [(name, ctx) for name, _, ctx in trace] == [
        ("s1", ("start",)),
        ("a1", ("start", "s1")),
        ("s2", ("start", "s1", "a1")),
        ("a2", ("start", "s1", "a1", "s2")),
    ]


async def test_async_hooks_that_suspend_are_awaited_in_turn() -> None:
    order: list[str] = []

    class Yields:
        def __init__(self, name: str) -> None:
            self.name = name

        async def before_model(self, ctx: tuple[str, ...]) -> Cont[tuple[str, ...]]:
            order.append(f"{self.name} starts")
            await asyncio.sleep(0)  # lets the other task run: a real suspension, no waiting
            order.append(f"{self.name} ends")
            return Cont((*ctx, self.name))

    async def meanwhile() -> None:
        order.append("other task")

    other = asyncio.create_task(meanwhile())
    assert await run_before([Yields("a"), Yields("b")], "before_model", START) == Cont(("start", "a", "b"))
    await other
    assert order == ["a starts", "other task", "a ends", "b starts", "b ends"]


async def test_before_continue_on_response_runs_on_and_the_last_halt_wins() -> None:
    """Rule 5."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_tool=halt(1)),
        Scripted("b", trace, before_tool=add("b")),
        AsyncScripted("c", trace, before_tool=halt(3)),
        Scripted("d", trace, before_tool=add("d")),
    ]
    result = await run_before(callbacks, "before_tool", START, continue_on_response=True)
    assert result == Halt(3)
    # A Halt leaves the context as it was; the Conts after it still thread it.
    assert trace == [
        ("a", "before_tool", ("start",)),
        ("b", "before_tool", ("start",)),
        ("c", "before_tool", ("start", "b")),
        ("d", "before_tool", ("start", "b")),
    ]


async def test_before_continue_on_response_without_a_halt_returns_cont() -> None:
    """Rule 5, with no Halt at all."""
    callbacks = [Scripted(n, [], before_model=add(n)) for n in "ab"]
    result = await run_before(callbacks, "before_model", START, continue_on_response=True)
    assert result == Cont(("start", "a", "b"))


# --- run_after --------------------------------------------------------------------------------


class Upper:
    """A class callback: registered as a class, instantiated once."""

    def after_tool(self, value: str, ctx: object) -> str:
        return value.upper()


async def test_after_empty_chain_returns_the_same_value() -> None:
    value = object()
    assert await run_after([], "after_model", value, START) is value


async def test_after_folds_left_to_right_over_a_mix_of_four_callbacks() -> None:
    trace: Trace = []
    callbacks = [
        Scripted("inst", trace, after_tool=wrap("inst")),  # an instance, sync
        Scripted("skip", trace, before_model=add("skip")),  # no after_tool: skipped
        Upper,  # a class
        module_callback,  # a module, async
        AsyncScripted("last", trace, after_tool=wrap("last")),  # an instance, async
    ]
    assert await run_after(callbacks, "after_tool", "v", START) == "last(module(INST(V)))"
    assert trace == [("inst", "after_tool", "v", START), ("last", "after_tool", "module(INST(V))", START)]


async def test_after_every_callback_gets_the_same_context() -> None:
    trace: Trace = []
    callbacks = [Scripted(n, trace, after_tool=wrap(n)) for n in "ab"]
    await run_after(callbacks, "after_tool", "r", START)
    assert [args[-1] for args in trace] == [START, START]


# --- the hand-over: go-on answers are taken in a fast loop, anything else in the core loop ------


@pytest.mark.parametrize("cls", [Scripted, AsyncScripted])
@pytest.mark.parametrize(
    ("middle", "options", "expected", "after_it"),
    [
        (halt("h"), {}, Halt("h"), []),
        (halt("h"), {"continue_on_response": True}, Halt("h"), ["c", "a"]),
        (fail(RuntimeError("boom")), {"continue_on_error": True}, "raised RuntimeError: boom", ["c", "a"]),
        (lambda ctx: "wrong", {"continue_on_error": True}, "returned 'wrong'; ", ["c", "a"]),
        (lambda ctx: Cont(list(ctx)), {}, "returned Cont(ctx=['start', 'a']); the ctx ", []),
    ],
)
async def test_a_before_chain_handed_on_mid_way_calls_each_hook_once_in_order(
    cls: type[Scripted],
    middle: Callable[..., Any],
    options: dict[str, bool],
    expected: object,
    after_it: list[str],
) -> None:
    trace: Trace = []
    a = cls("a", trace, before_tool=add("a"))
    callbacks = [a, cls("b", trace, before_tool=middle), cls("c", trace, before_tool=add("c")), a]
    if isinstance(expected, str):  # b failed: the error is raised when the chain ends
        with pytest.raises(CallbackError) as caught:
            await run_before(callbacks, "before_tool", START, **options)
        assert caught.value.problem.startswith(expected)
    else:
        assert await run_before(callbacks, "before_tool", START, **options) == expected
    assert [name for name, *_ in trace] == ["a", "b", *after_it]
    assert trace[1][2] == ("start", "a")  # b got what a threaded on
    assert [args[2] for args in trace[2:]] == [("start", "a"), ("start", "a", "c")][: len(after_it)]


@pytest.mark.parametrize("cls", [Scripted, AsyncScripted])
async def test_an_after_chain_handed_on_mid_way_folds_each_hook_once_in_order(cls: type[Scripted]) -> None:
    trace: Trace = []
    b_said, c_said = LlmResponse.text("b"), LlmResponse.text("c")
    a, b, wrong, c = (
        cls("a", trace, after_model=lambda value, ctx: value),  # the same object: no decision
        cls("b", trace, after_model=lambda value, ctx: b_said),
        cls("wrong", trace, after_model=lambda value, ctx: 42),
        cls("c", trace, after_model=lambda value, ctx: c_said),
    )
    start, deciders = LlmResponse.text("start"), []
    with pytest.raises(CallbackError) as caught:
        await run_after(
            [a, b, wrong, c], "after_model", start, START, continue_on_error=True, deciders=deciders
        )
    assert caught.value.problem == "returned 42; after_model must return an LlmResponse, not int"
    assert [(name, value) for name, _, value, _ in trace] == [
        ("a", start),
        ("b", start),
        ("wrong", b_said),
        ("c", b_said),  # what wrong failed to replace
    ]
    assert deciders == [b, c]


# --- run_on_error -----------------------------------------------------------------------------


async def test_on_error_empty_chain_raises_the_same_error() -> None:
    error = ValueError("boom")
    result = await run_on_error([], "on_model_error", error, START)
    assert result == Raise(error)
    assert result.error is error


async def test_on_error_threads_the_error_through_raise_and_the_last_one_is_returned() -> None:
    trace: Trace = []
    first, second, third = ValueError("first"), KeyError("second"), OSError("third")
    callbacks = [
        Scripted("a", trace, on_model_error=reraise(second)),
        Scripted("b", trace, on_model_error=lambda err, ctx: Raise(err)),
        AsyncScripted("c", trace, on_model_error=reraise(third)),
    ]
    result = await run_on_error(callbacks, "on_model_error", first, START)
    assert result == Raise(third)
    assert trace == [
        ("a", "on_model_error", first, START),
        ("b", "on_model_error", second, START),
        ("c", "on_model_error", second, START),
    ]


@pytest.mark.parametrize(
    "recovery", [Retry(("retried",)), Retry(("retried",), delay=2.5), Fallback("fallback value")]
)
async def test_on_error_first_recovery_wins_and_stops_the_chain(recovery: Retry[Any] | Fallback[Any]) -> None:
    trace: Trace = []
    replaced = KeyError("replaced")
    callbacks = [
        Scripted("a", trace, on_tool_error=reraise(replaced)),
        Scripted("b", trace, on_tool_error=lambda err, ctx: recovery),
        Scripted("c", trace, on_tool_error=lambda err, ctx: Fallback("too late")),
    ]
    error = ValueError("boom")
    assert await run_on_error(callbacks, "on_tool_error", error, START) is recovery
    assert trace == [("a", "on_tool_error", error, START), ("b", "on_tool_error", replaced, START)]


async def test_on_error_module_callback_takes_part() -> None:
    result = await run_on_error([module_callback], "on_model_error", ValueError("v"), START)
    assert isinstance(result, Raise)
    assert repr(result.error) == "KeyError('module saw v')"


# --- a real typed context ---------------------------------------------------------------------


class Warmer(Callback):
    """A typed callback: raises the temperature of every request by 0.5."""

    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        temperature = (ctx.request.temperature or 0) + 0.5
        return Cont(replace(ctx, request=ctx.request.model_copy(update={"temperature": temperature})))


async def test_before_model_threads_a_changed_request_in_a_real_model_context() -> None:
    ctx = model_context()
    result = await run_before([Warmer, Warmer()], "before_model", ctx)
    assert isinstance(result, Cont)
    assert result.ctx.request.temperature == 1.0
    assert result.ctx.invocation is ctx.invocation
    assert ctx.request.temperature is None  # contexts are frozen: the one passed in is unchanged


async def test_tool_and_agent_hooks_with_real_contexts() -> None:
    trace: Trace = []
    ctx = tool_context(x=1)
    cb = Scripted(
        "t",
        trace,
        before_tool=lambda c: Cont(replace(c, args={"x": c.args["x"] + 1})),
        after_tool=lambda result, c: {"result": result, "args": c.args},
    )
    started = await run_before([cb], "before_tool", ctx)
    assert isinstance(started, Cont)
    assert started.ctx.args == {"x": 2}
    result: Any = 42
    assert await run_after([cb], "after_tool", result, started.ctx) == {"result": 42, "args": {"x": 2}}
    actx = agent_context()
    assert await run_before(
        [Scripted("a", trace, before_agent=lambda c: Halt("bye"))], "before_agent", actx
    ) == Halt("bye")
    assert [hook for _, hook, *_ in trace] == ["before_tool", "after_tool", "before_agent"]


# --- errors: a hook that raises or returns what it may not ------------------------------------


class Explodes:
    def before_model(self, ctx: object) -> Cont[object]:
        raise RuntimeError("kaboom")

    def after_model(self, value: object, ctx: object) -> object:
        raise RuntimeError("kaboom")

    def on_model_error(self, error: Exception, ctx: object) -> Raise:
        raise RuntimeError("kaboom")


def run_hook(hook: str, callbacks: list[Any], **options: bool) -> Coroutine[Any, Any, object]:
    """Run `hook`'s chain over `callbacks` with the plain arguments used in these tests."""
    name = cast(HookName, hook)
    if hook.startswith("before_"):
        return run_before(callbacks, name, START, **options)
    if hook.startswith("after_"):
        return run_after(callbacks, name, "v", START, **options)
    return run_on_error(callbacks, name, ValueError("original"), START, **options)


@pytest.mark.parametrize("hook", ["before_model", "after_model", "on_model_error"])
async def test_a_raising_hook_is_a_callback_error_naming_callback_and_hook(hook: str) -> None:
    trace: Trace = []
    later = Scripted("later", trace, **{hook: fail(AssertionError("must not run"))})
    with pytest.raises(CallbackError) as caught:
        await run_hook(hook, [Explodes(), later])
    error = caught.value
    assert (error.callback, error.hook) == ("Explodes", hook)
    assert str(error) == f"callback Explodes failed in {hook}: raised RuntimeError: kaboom"
    assert isinstance(error.__cause__, RuntimeError)
    assert str(error.__cause__) == "kaboom"
    assert trace == []


class ReturnsRetry:
    def before_model(self, ctx: object) -> object:
        return Retry(ctx)


class ReturnsCont:
    def on_tool_error(self, error: Exception, ctx: object) -> object:
        return Cont(ctx)


class ReturnsNone:
    async def before_agent(self, ctx: object) -> object:
        return None


class ReturnsHalt:
    def on_model_error(self, error: Exception, ctx: object) -> object:
        return Halt("x")


class RaisesANonException:
    def on_tool_error(self, error: Exception, ctx: object) -> object:
        return Raise("not an exception")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("callback", "hook", "problem"),
    [
        (ReturnsRetry, "before_model", "returned Retry(ctx=('start',), delay=None); "
         "before_model may return only Cont or Halt"),
        (ReturnsNone, "before_agent", "returned None; before_agent may return only Cont or Halt"),
        (ReturnsCont, "on_tool_error", "returned Cont(ctx=('start',)); "
         "on_tool_error may return only Retry, Fallback or Raise"),
        (ReturnsHalt, "on_model_error", "returned Halt(value='x'); "
         "on_model_error may return only Retry, Fallback or Raise"),
        (RaisesANonException, "on_tool_error", "returned Raise(error='not an exception'); "
         "the error of a Raise from on_tool_error must be an Exception, not str"),
    ],
)  # fmt: skip
async def test_a_wrong_result_is_a_callback_error_naming_callback_hook_and_value(
    callback: type, hook: str, problem: str
) -> None:
    trace: Trace = []
    later = Scripted("later", trace, **{hook: fail(AssertionError("must not run"))})
    with pytest.raises(CallbackError) as caught:
        await run_hook(hook, [callback, later])
    error = caught.value
    assert (error.callback, error.hook, error.problem) == (callback.__qualname__, hook, problem)
    assert str(error) == f"callback {callback.__qualname__} failed in {hook}: {problem}"
    assert error.__cause__ is None  # nothing was raised: the message names the wrong value
    assert trace == []


async def test_on_error_callback_error_carries_the_error_being_handled_as_context() -> None:
    original = ValueError("original")
    with pytest.raises(CallbackError) as caught:
        await run_on_error([ReturnsHalt], "on_model_error", original, START)
    assert caught.value.__context__ is original


async def test_a_sync_hook_returning_a_coroutine_is_an_error_and_the_coroutine_is_closed() -> None:
    made: list[Coroutine[Any, Any, object]] = []

    async def later(ctx: object) -> Cont[object]:
        return Cont(ctx)

    def sneaky(ctx: object) -> Any:
        made.append(later(ctx))
        return made[-1]

    with pytest.raises(CallbackError) as caught:
        await run_before([Scripted("s", [], before_model=sneaky)], "before_model", START)
    assert caught.value.problem == "returned a coroutine; a hook that returns one must be an `async def`"
    assert inspect.getcoroutinestate(made[0]) == inspect.CORO_CLOSED


async def test_a_sync_wrapper_around_an_async_hook_is_awaited() -> None:
    def logged(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any) -> Any:
            return fn(*args)

        return wrapper

    class Wrapped:
        @logged
        async def after_tool(self, value: str, ctx: object) -> str:
            return value + "!"

    assert await run_after([Wrapped()], "after_tool", "v", START) == "v!"


@pytest.mark.parametrize("hook", ["before_model", "after_model", "on_model_error"])
@pytest.mark.parametrize("continue_on_error", [False, True])
async def test_cancellation_is_never_caught(hook: str, continue_on_error: bool) -> None:
    trace: Trace = []
    cancelled = Scripted("c", trace, **{hook: fail(asyncio.CancelledError())})
    later = Scripted("later", trace, **{hook: fail(AssertionError("must not run"))})
    with pytest.raises(asyncio.CancelledError):
        await run_hook(hook, [cancelled, later], continue_on_error=continue_on_error)
    assert [name for name, *_ in trace] == ["c"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: run_before([], "before_mdoel", START),  # type: ignore[call-overload]
        lambda: run_after([], "after_mdoel", "v", START),  # type: ignore[call-overload]
        lambda: run_on_error([], "on_model_eror", ValueError(), START),  # type: ignore[call-overload]
    ],
)
async def test_an_unknown_hook_name_is_a_value_error_with_a_suggestion(
    call: Callable[[], Coroutine[Any, Any, object]],
) -> None:
    with pytest.raises(
        ValueError, match=r"^unknown hook '\w+'; did you mean '(before|after|on)_model(_error)?'\?$"
    ):
        await call()


async def test_an_unknown_hook_name_without_a_close_match_lists_the_hooks() -> None:
    with pytest.raises(
        ValueError, match=r"^unknown hook 'teardown'; the hooks are before_agent, after_agent, "
    ):
        await run_before([], "teardown", START)  # type: ignore[call-overload]


# --- chain options: the numbered precedence rules of chain.py's module docstring ---------------


def boom(name: str) -> Callable[..., Any]:
    return fail(RuntimeError(f"{name} failed"))


async def test_default_an_error_stops_the_chain_at_once() -> None:
    """Rule 1, run_before."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_model=add("a")),
        Scripted("b", trace, before_model=boom("b")),
        Scripted("c", trace, before_model=halt("c")),
    ]
    with pytest.raises(CallbackError, match="b failed"):
        await run_before(callbacks, "before_model", START)
    assert [name for name, *_ in trace] == ["a", "b"]


async def test_without_continue_on_error_an_error_beats_a_kept_halt() -> None:
    """Rule 1: an error beats a Halt kept under continue_on_response."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_tool=halt("a")),
        Scripted("b", trace, before_tool=boom("b")),
        Scripted("c", trace, before_tool=halt("c")),
    ]
    with pytest.raises(CallbackError, match="b failed"):
        await run_before(callbacks, "before_tool", START, continue_on_response=True)
    assert [name for name, *_ in trace] == ["a", "b"]


async def test_continue_on_error_runs_on_and_raises_the_first_error_at_the_end() -> None:
    """Rules 2 and 4, run_before."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_model=boom("a")),
        Scripted("b", trace, before_model=add("b")),
        Scripted("c", trace, before_model=boom("c")),
        Scripted("d", trace, before_model=add("d")),
    ]
    with pytest.raises(CallbackError, match="a failed") as caught:
        await run_before(callbacks, "before_model", START, continue_on_error=True)
    assert caught.value.callback == "Scripted"
    # A failing callback leaves the context as it was.
    assert trace == [
        ("a", "before_model", ("start",)),
        ("b", "before_model", ("start",)),
        ("c", "before_model", ("start", "b")),
        ("d", "before_model", ("start", "b")),
    ]


async def test_continue_on_error_a_halt_after_an_error_wins_and_stops_the_chain(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Rule 3, run_before; without continue_on_response the Halt still stops the chain."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_tool=boom("a")),
        Scripted("b", trace, before_tool=halt("b")),
        Scripted("c", trace, before_tool=halt("c")),
    ]
    with caplog.at_level(logging.WARNING, logger="adk.callbacks.chain"):
        result = await run_before(callbacks, "before_tool", START, continue_on_error=True)
    assert result == Halt("b")
    assert [name for name, *_ in trace] == ["a", "b"]
    assert [r.getMessage() for r in caplog.records] == [
        "callback Scripted failed in before_tool: raised RuntimeError: a failed "
        "(ignored: continue_on_error and another callback answered)"
    ]


async def test_continue_on_error_and_on_response_the_last_halt_wins_over_errors() -> None:
    """Rules 3 and 5 together."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_tool=halt("a")),
        Scripted("b", trace, before_tool=boom("b")),
        Scripted("c", trace, before_tool=halt("c")),
        Scripted("d", trace, before_tool=boom("d")),
        Scripted("e", trace, before_tool=add("e")),
    ]
    result = await run_before(
        callbacks, "before_tool", START, continue_on_error=True, continue_on_response=True
    )
    assert result == Halt("c")
    assert [name for name, *_ in trace] == ["a", "b", "c", "d", "e"]


async def test_continue_on_error_a_wrong_result_is_kept_like_a_raise() -> None:
    """Rule 4 for a wrong result."""
    callbacks = [ReturnsRetry, Scripted("b", [], before_model=add("b"))]
    with pytest.raises(CallbackError, match="ReturnsRetry failed in before_model: returned Retry"):
        await run_before(callbacks, "before_model", START, continue_on_error=True)


async def test_after_default_an_error_stops_the_fold() -> None:
    """Rule 1, run_after."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, after_tool=wrap("a")),
        Scripted("b", trace, after_tool=boom("b")),
        Scripted("c", trace, after_tool=wrap("c")),
    ]
    with pytest.raises(CallbackError, match="b failed"):
        await run_after(callbacks, "after_tool", "v", START)
    assert [name for name, *_ in trace] == ["a", "b"]


async def test_after_continue_on_error_skips_the_failing_output_and_raises_the_first_error() -> None:
    """Rules 2 and 4, run_after."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, after_tool=boom("a")),
        AsyncScripted("b", trace, after_tool=wrap("b")),
        AsyncScripted("c", trace, after_tool=boom("c")),
        Scripted("d", trace, after_tool=wrap("d")),
    ]
    with pytest.raises(CallbackError, match="a failed"):
        await run_after(callbacks, "after_tool", "v", START, continue_on_error=True)
    assert [(name, value) for name, _, value, _ in trace] == [
        ("a", "v"),
        ("b", "v"),
        ("c", "b(v)"),
        ("d", "b(v)"),
    ]


async def test_on_error_default_an_error_stops_the_chain() -> None:
    """Rule 1, run_on_error."""
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, on_model_error=boom("a")),
        Scripted("b", trace, on_model_error=lambda err, ctx: Fallback("b")),
    ]
    original = ValueError("original")
    with pytest.raises(CallbackError, match="a failed") as caught:
        await run_on_error(callbacks, "on_model_error", original, START)
    assert caught.value.__context__ is original
    assert [name for name, *_ in trace] == ["a"]


async def test_on_error_continue_on_error_passes_the_unchanged_error_on_and_a_recovery_wins(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Rules 2 and 3, run_on_error."""
    trace: Trace = []
    original, replaced = ValueError("original"), KeyError("replaced")
    callbacks = [
        Scripted("a", trace, on_model_error=reraise(replaced)),
        Scripted("b", trace, on_model_error=boom("b")),
        Scripted("c", trace, on_model_error=lambda err, ctx: Retry(("again",))),
        Scripted("d", trace, on_model_error=lambda err, ctx: Fallback("too late")),
    ]
    with caplog.at_level(logging.WARNING, logger="adk.callbacks.chain"):
        result = await run_on_error(callbacks, "on_model_error", original, START, continue_on_error=True)
    assert result == Retry(("again",))
    assert [(name, err) for name, _, err, _ in trace] == [("a", original), ("b", replaced), ("c", replaced)]
    assert len(caplog.records) == 1
    assert "b failed" in caplog.records[0].getMessage()


async def test_on_error_continue_on_error_without_recovery_raises_the_first_callback_error() -> None:
    """Rules 2 and 4, run_on_error."""
    trace: Trace = []
    original = ValueError("original")
    callbacks = [
        Scripted("a", trace, on_tool_error=boom("a")),
        Scripted("b", trace, on_tool_error=lambda err, ctx: Raise(KeyError("b"))),
        Scripted("c", trace, on_tool_error=boom("c")),
    ]
    with pytest.raises(CallbackError, match="a failed") as caught:
        await run_on_error(callbacks, "on_tool_error", original, START, continue_on_error=True)
    assert caught.value.__context__ is original
    assert [name for name, *_ in trace] == ["a", "b", "c"]


# --- what the chains accept as callbacks ------------------------------------------------------


async def test_a_list_is_resolved_on_each_call_a_callbacks_once() -> None:
    built: list[object] = []

    class Counted:
        def __init__(self) -> None:
            built.append(self)

        def before_model(self, ctx: tuple[str, ...]) -> Cont[tuple[str, ...]]:
            return Cont((*ctx, "counted"))

    resolved = Callbacks.of([Counted])
    for _ in range(3):
        assert await run_before(resolved, "before_model", START) == Cont(("start", "counted"))
    assert len(built) == 1
    await run_before([Counted], "before_model", START)
    await run_before([Counted], "before_model", START)
    assert len(built) == 3


async def test_the_same_callback_twice_runs_twice() -> None:
    trace: Trace = []
    twice = Scripted("t", trace, before_model=add("t"))
    assert await run_before([twice, twice], "before_model", START) == Cont(("start", "t", "t"))
    assert len(trace) == 2
