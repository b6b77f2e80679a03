"""What an answer the chain loop's exact-type checks did not take is: one that goes on, one that
answers, or one its hook may not give, with the one line that says what is wrong.

Every answer is checked against its hook's declaration (registry.py): the result kind, the value
in a `Halt` or `Fallback` or returned by an `after` or `replace` hook, the context in a `Cont` or
`Retry` (the type the hook received, a subclass included), the error in a `Raise`, the reason in
a `Defer`. A wrong answer is quoted short (`short_repr`): the message goes to events and logs.
"""

from __future__ import annotations

import inspect
from typing import Any, Final

from adk.callbacks.registry import AFTER, BEFORE, ON_ERROR, REPLACE, Hook, short_repr
from adk.callbacks.results import Cont, Defer, Fallback, Halt, Raise, Retry

__all__ = ["ANSWER", "GO_ON", "WRONG", "judge"]

GO_ON: Final = 0
"""The answer goes on: what it carries is threaded (a context, a value, an error)."""
ANSWER: Final = 1
"""The answer answers: a `Halt`, `Defer`, `Retry`, `Fallback` or replacement."""
WRONG: Final = 2
"""The answer is one its hook may not give."""


def judge(hook: Hook, out: Any, received: type) -> tuple[int, Any]:
    """An answer the fast checks did not take: `(GO_ON, value)`, `(ANSWER, out)` or `(WRONG, problem)`."""
    chain, cls = hook.chain, type(out)
    if chain == BEFORE:
        if cls is Cont:
            return _context(hook, out, out.ctx, received, GO_ON)
        if cls is Halt:
            return _carried(hook, out, out.value)
        if cls is Defer and hook.defer:
            return _deferred(hook, out)
    elif chain == ON_ERROR:
        if cls is Raise:
            return _raised(hook, out)
        if cls is Retry and hook.retry:
            return _context(hook, out, out.ctx, received, ANSWER)
        if cls is Fallback:
            return _carried(hook, out, out.value)
    elif hook.fits(out):
        return (GO_ON if chain == AFTER else ANSWER), out
    elif cls is Halt and hook.halt is not None:  # an `after` hook that may stop its fold
        types, allowed = hook.halt
        if isinstance(out.value, types):
            return ANSWER, out
        return WRONG, _problem(hook, out, "the value of a Halt", allowed, out.value)
    return WRONG, _wrong(hook, out)


def _deferred(hook: Hook, out: Any) -> tuple[int, Any]:
    """A `Defer` answers if its reason is text."""
    if isinstance(out.reason, str):
        return ANSWER, out
    return WRONG, _problem(hook, out, "the reason of a Defer", "a str", out.reason)


def _raised(hook: Hook, out: Any) -> tuple[int, Any]:
    """A `Raise` passes its error on if it is an exception."""
    if isinstance(out.error, Exception):
        return GO_ON, out.error
    return WRONG, _problem(hook, out, "the error of a Raise", "an Exception", out.error)


def _wrong(hook: Hook, out: Any) -> str:
    """What is wrong with an answer of a kind `hook` may not give."""
    if inspect.iscoroutine(out):
        out.close()  # never awaited: close it, or Python warns when it is collected
        return "returned a coroutine; a hook that returns one must be an `async def`"
    if hook.chain in (AFTER, REPLACE):
        return _problem(hook, out, hook.name, hook.allowed, out, "return")
    return f"returned {short_repr(out)}; {hook.name} may return only {hook.answers}"


def _context(hook: Hook, out: Any, new: object, received: type, verdict: int) -> tuple[int, Any]:
    if isinstance(new, received):
        return verdict, (new if verdict == GO_ON else out)
    what = f"the ctx of a {type(out).__name__}"
    return WRONG, _problem(hook, out, what, f"the {received.__name__} it received (or a copy)", new)


def _carried(hook: Hook, out: Any, value: object) -> tuple[int, Any]:
    if hook.fits(value):
        return ANSWER, out
    return WRONG, _problem(hook, out, f"the value of a {type(out).__name__}", hook.allowed, value)


def _problem(hook: Hook, out: object, what: str, allowed: str, wrong: object, verb: str = "be") -> str:
    """`returned <out>; <what> from <hook> must be <allowed>, not <type of wrong>`."""
    source = "" if what == hook.name else f" from {hook.name}"
    kind = "None" if wrong is None else type(wrong).__qualname__
    return f"returned {short_repr(out)}; {what}{source} must {verb} {allowed}, not {kind}"
