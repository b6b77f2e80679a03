"""The chain helpers: thread a context (or a result, or an error) through a list of callbacks.

Every chain runs in one loop, `run_chain`, pluggy's `_multicall` for typed answers: the answers
that go on (a `Cont` of the context's own type, an `after` output of its hook's usual type, a
`Raise` of an exception, a `replace` hook's None) are taken by exact-type checks inside the loop;
any other answer is judged (answers.py) and kept by `_Verdicts`. `run_before`, `run_after` and
`run_on_error` are its typed doors for the agent, model and tool hooks; the run-level and AG-UI
hooks call it directly.

Rules (docs/callbacks.md), in list order, callbacks without the hook skipped:

- `before`: `Cont(ctx)` passes `ctx` on; the first `Halt` stops the chain and is returned; an
  empty chain returns `Cont(ctx)`.
- `after`: a left fold; each callback gets the previous one's output.
- `on_error`: `Raise(e)` passes `e` on; the first `Retry` or `Fallback` wins; if none recovers,
  `Raise(last_error)` is returned.
- `replace` (AG-UI translate hooks): None keeps the value; the first other answer replaces it.
  Every hook sees the original value.

Every answer is checked where it is given, against its hook's declaration (registry.py): the
result kind, the value in a `Halt` or `Fallback` or returned by an `after` or `replace` hook, the
context in a `Cont` or `Retry` (the type the hook received), the error in a `Raise`. A hook that
raises, or answers what its hook may not, fails: that is a `CallbackError` naming the callback,
the hook and the cause (what it raised is `__cause__`). Precedence:

1. By default the first failure stops the chain and is raised, even when a `Halt` was already
   kept under `continue_on_response`: an error beats a response.
2. With `continue_on_error`, a failing callback is passed over: its context, output or error is
   not threaded on, and the chain goes on.
3. With `continue_on_error`, a response (`Halt`, `Retry`, `Fallback`, a replacement) wins over
   the failures, which are logged as warnings.
4. With `continue_on_error` and no response, the first failure is raised when the chain ends
   (for an `after` chain, although the fold went on to the end).
5. With `continue_on_response` (`before` and `replace` chains), a response does not stop the
   chain: the `Cont`s after a `Halt` go on threading the context, and the last response wins.
6. `Defer(reason)` (`before_tool`) is a response like `Halt`, with two exceptions: under
   `continue_on_response` a `Halt` beats a `Defer` whatever their order (the call does not run,
   so nobody need be asked), and on a call already approved (`ctx.approved`) a `Defer` goes on
   as `Cont(ctx)`: the approval answers it, and the rest of the chain still has its say.

Who decided is data for events: given a list as `deciders`, a chain appends the callback whose
answer won (a `Halt`, `Retry`, `Fallback` or replacement), or, in an `after` chain, each one that
returned another object than it was given. It costs an identity check per `after` hook, nothing
more, when nobody decides.

`asyncio.CancelledError` is never caught. A hook name that is not declared, or a hook of
another chain (`run_before(..., "after_model", ...)`), is a `ValueError`, raised by the door
when it is called: the chain would silently do nothing, or do the wrong thing.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, overload

from adk.callbacks.answers import ANSWER, GO_ON, judge
from adk.callbacks.registry import (
    AFTER,
    BEFORE,
    DECLARED,
    ON_ERROR,
    Callbacks,
    Hook,
    HookImpl,
    HookName,
    callback_name,
    hook_impls,
    hook_raised,
    unknown_hook,
)
from adk.callbacks.results import Cont, Defer, Fallback, Halt, Raise, Retry
from adk.errors import CallbackError

if TYPE_CHECKING:
    from adk.callbacks.protocols import AnyCallback, Content
    from adk.context import AgentContext, ModelContext, ToolContext
    from adk.events import LlmResponse, Message

__all__ = ["run_after", "run_before", "run_chain", "run_on_error"]

log = logging.getLogger(__name__)

C = TypeVar("C")
V = TypeVar("V")


async def run_chain(
    impls: Iterable[HookImpl],
    hook: Hook,
    value: Any,
    ctx: Any = None,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
    threaded: list[Any] | None = None,
) -> Any:
    """Run `hook`'s chain over `impls`: the one loop behind every chain (see the module docstring).

    `value` is what is threaded: the context of a `before` chain (whose `ctx` is unused), the
    value of an `after` or `replace` chain, the error of an `on_error` chain. Returns the
    answer that won, else what was threaded, as `Cont(ctx)`, the value, or `Raise(error)`.
    Given a list as `threaded`, an answer that wins appends what was threaded when it won (the
    call a `Defer` holds back, as the hooks before it left it).
    """
    # read once: the loop tests them on every call
    before, after, on_error, replace, exact, anything, unary = hook.plan
    received = type(value)  # for a `before` chain, the context type its Conts must keep
    verdicts: _Verdicts | None = None  # made by the first answer the exact-type checks do not take
    out: Any = None
    for fn, is_async, owner in impls:
        try:
            out = fn(value) if unary else fn(value, ctx)
            if is_async:
                out = await out
        except Exception as e:
            out = _Raised(hook_raised(owner, hook.name, e))
        else:
            # The answers that go on, checked by exact type; any other is judged by _Verdicts.
            if before and type(out) is Cont and type(out.ctx) is received:
                value = out.ctx
                continue
            if after and (type(out) is exact or anything):
                if out is not value and deciders is not None:
                    deciders.append(owner)
                value = out
                continue
            if on_error and type(out) is Raise and isinstance(out.error, Exception):
                value = out.error
                continue
            if replace and out is None:
                continue
        verdicts = verdicts or _Verdicts(
            hook, received if before else type(ctx), continue_on_error, continue_on_response, deciders
        )
        value = verdicts.take(out, owner, value)
        if verdicts.won:
            return verdicts.won_at(value, threaded)
    if verdicts is not None and verdicts.end():
        return verdicts.won_at(value, threaded)
    # a `before` chain gives back its last hook's own Cont (frozen) if it holds what was threaded
    kept = before and type(out) is Cont and out.ctx is value
    return out if kept else Cont(value) if before else Raise(value) if on_error else value


class _Raised:
    """A hook that raised, as `run_chain` hands it to `_Verdicts` (apart from any answer)."""

    __slots__ = ("error",)

    def __init__(self, error: CallbackError) -> None:
        self.error = error


class _Verdicts:
    """One chain's judgement of the answers its exact-type checks did not take, and what it keeps:
    the answer kept under `continue_on_response`, the first failure under `continue_on_error`."""

    __slots__ = ("answer", "by", "deciders", "failure", "hook", "on_error", "on_response", "received", "won")

    def __init__(
        self,
        hook: Hook,
        received: type,
        on_error: bool,
        on_response: bool,
        deciders: list[object] | None,
    ) -> None:
        self.hook, self.received, self.deciders = hook, received, deciders
        self.on_error, self.on_response = on_error, on_response
        self.answer: Any = None  # an answer is never None: a result, or a replacement
        self.by: object = None
        self.failure: CallbackError | None = None
        self.won = False
        """Whether `answer` won and stops the chain."""

    def take(self, out: Any, owner: object, value: Any) -> Any:
        """Judge `owner`'s answer `out`, given `value`: the value threaded on (or kept)."""
        hook = self.hook
        if type(out) is _Raised:
            error = out.error
        else:
            verdict, judged = judge(hook, out, self.received)
            if verdict == GO_ON:
                if hook.chain == AFTER and judged is not value and self.deciders is not None:
                    self.deciders.append(owner)
                return judged
            if verdict == ANSWER:
                self._answered(out, owner, value)
                return value
            error = CallbackError(callback_name(owner), hook.name, judged)
        if hook.chain == ON_ERROR:
            error.__context__ = value  # the error that was being handled
        if not self.on_error:
            raise error
        self.failure = self.failure or error
        return value

    def _answered(self, out: Any, owner: object, value: Any) -> None:
        if type(out) is Defer and (getattr(value, "approved", False) or type(self.answer) is Halt):
            return  # answered by the approval, or beaten by a Halt kept (rule 6)
        self.answer, self.by = out, owner
        if not self.on_response:
            self._win()

    def won_at(self, value: Any, threaded: list[Any] | None) -> Any:
        """The answer that won, `value` (what was threaded then) appended to `threaded` if given."""
        if threaded is not None:
            threaded.append(value)
        return self.answer

    def end(self) -> bool:
        """At the chain's end: whether an answer kept wins; else the first failure is raised."""
        if self.answer is not None:
            self._win()
            return True
        if self.failure is not None:
            raise self.failure
        return False

    def _win(self) -> None:
        if self.failure is not None:
            log.warning("%s (ignored: continue_on_error and another callback answered)", self.failure)
        if self.deciders is not None:
            self.deciders.append(self.by)
        self.won = True


def _not_of(name: str, chain: int) -> ValueError:
    """The error for a hook name that the door of `chain` cannot run: unknown, or of another chain."""
    hook = DECLARED.get(name)
    if hook is None:
        return unknown_hook(name)
    door, kind = _DOORS[chain]
    return ValueError(f"{door} runs {kind} hooks; {name} is not one ({hook!r})")


_DOORS: Final = {
    BEFORE: ("run_before", "before"),
    AFTER: ("run_after", "after"),
    ON_ERROR: ("run_on_error", "on_error"),
}


@overload
def run_before(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["before_agent"],
    ctx: AgentContext,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Cont[AgentContext] | Halt[Content]]: ...
@overload
def run_before(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["before_model"],
    ctx: ModelContext,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Cont[ModelContext] | Halt[LlmResponse]]: ...
@overload
def run_before(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["before_tool"],
    ctx: ToolContext,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Cont[ToolContext] | Halt[Any] | Defer]: ...
@overload
def run_before(
    callbacks: Callbacks | Iterable[object],
    hook: HookName,
    ctx: C,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Cont[C] | Halt[Any] | Defer]: ...
def run_before(
    callbacks: Callbacks | Iterable[object],
    hook: str,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Cont[Any] | Halt[Any] | Defer]:
    """Thread `ctx` through each callback's `hook`; return `Cont(ctx')` or the winning `Halt` (or `Defer`).

    The callback whose `Halt` won is appended to `deciders`, if given.
    """
    spec = DECLARED.get(hook)
    if spec is None or spec.chain != BEFORE:
        raise _not_of(hook, BEFORE)
    return run_chain(
        hook_impls(callbacks, hook), spec, ctx, None, continue_on_error, continue_on_response, deciders
    )


@overload
def run_after(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["after_agent"],
    result: Message | None,
    ctx: AgentContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Message | None]: ...
@overload
def run_after(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["after_model"],
    result: LlmResponse,
    ctx: ModelContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, LlmResponse]: ...
@overload
def run_after(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["after_tool"],
    result: Any,
    ctx: ToolContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Any]: ...
@overload
def run_after(
    callbacks: Callbacks | Iterable[object],
    hook: HookName,
    result: V,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, V]: ...
def run_after(
    callbacks: Callbacks | Iterable[object],
    hook: str,
    result: Any,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Any]:
    """Fold `result` through each callback's `hook`, left to right; return the last output.

    With `continue_on_error`, a failing callback leaves the value as it was, the fold goes on,
    and the first error is raised at the end. Each callback that returned another object than it
    was given is appended to `deciders`, if given.
    """
    spec = DECLARED.get(hook)
    if spec is None or spec.chain != AFTER:
        raise _not_of(hook, AFTER)
    return run_chain(hook_impls(callbacks, hook), spec, result, ctx, continue_on_error, False, deciders)


@overload
def run_on_error(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["on_model_error"],
    error: Exception,
    ctx: ModelContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Retry[ModelContext] | Fallback[LlmResponse] | Raise]: ...
@overload
def run_on_error(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["on_tool_error"],
    error: Exception,
    ctx: ToolContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Retry[ToolContext] | Fallback[Any] | Raise]: ...
@overload
def run_on_error(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["on_agent_error"],
    error: Exception,
    ctx: AgentContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Fallback[Content] | Raise]: ...
@overload
def run_on_error(
    callbacks: Callbacks | Iterable[object],
    hook: HookName,
    error: Exception,
    ctx: C,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Retry[C] | Fallback[Any] | Raise]: ...
def run_on_error(
    callbacks: Callbacks | Iterable[object],
    hook: str,
    error: Exception,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Retry[Any] | Fallback[Any] | Raise]:
    """Offer `error` to each callback's `hook`: the first `Retry` or `Fallback` wins.

    `Raise(e)` passes `e` (possibly a new error) to the next callback; if nobody recovers,
    `Raise(last_error)` is returned for the caller to raise. The callback whose `Retry` or
    `Fallback` won is appended to `deciders`, if given.
    """
    spec = DECLARED.get(hook)
    if spec is None or spec.chain != ON_ERROR:
        raise _not_of(hook, ON_ERROR)
    return run_chain(hook_impls(callbacks, hook), spec, error, ctx, continue_on_error, False, deciders)
