"""Random chains against a reference model of the rules (docs/callbacks.md and chain.py's docstring).

The model is written as the rules read, not as the loop runs: a chain runs a prefix of its
callbacks, ended by the first answer that stops it; what it returns is read off that prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from adk.callbacks import Callbacks, Cont, Fallback, Halt, Raise, Retry, run_after, run_before, run_on_error
from adk.errors import CallbackError
from tests.callbacks.scripted import AsyncScripted, Scripted, Trace


@dataclass(frozen=True)
class Act:
    """What one callback does in its hook: `kind`, and whether the hook is `async def`."""

    kind: str
    is_async: bool


BEFORE_KINDS = ["skip", "cont", "halt", "raise", "wrong", "wrong_ctx"]
AFTER_KINDS = ["skip", "map", "raise"]
ERROR_KINDS = ["skip", "pass", "replace", "retry", "fallback", "raise", "wrong", "wrong_ctx"]
FAILS = {"raise", "wrong", "wrong_ctx"}


def acts(kinds: list[str]) -> st.SearchStrategy[list[Act]]:
    return st.lists(st.builds(Act, st.sampled_from(kinds), st.booleans()), max_size=8)


def complete(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a chain whose hooks never suspend, without an event loop; it must not suspend either."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise AssertionError("the chain suspended")


def failing_index(error: CallbackError) -> int:
    """Which callback failed: each failure carries `#i#` in what it raised or returned."""
    found = re.search(r"#(\d+)#", str(error))
    assert found, error
    return int(found[1])


def build(
    hook: str, chain: list[Act], answers: dict[str, Callable[[int], Callable[..., Any]]]
) -> tuple[list[Scripted], Trace]:
    """One Scripted callback per act; a "skip" callback implements another hook instead."""
    trace: Trace = []
    callbacks = []
    for i, act in enumerate(chain):
        other = "after_tool" if hook != "after_tool" else "before_tool"
        hooks = {other: lambda *a: None} if act.kind == "skip" else {hook: answers[act.kind](i)}
        callbacks.append((AsyncScripted if act.is_async else Scripted)(str(i), trace, **hooks))
    return callbacks, trace


def raises(i: int) -> Callable[..., Any]:
    def answer(*args: Any) -> Any:
        raise RuntimeError(f"#{i}#")

    return answer


def stop_at(chain: list[Act], stops: Callable[[Act], bool]) -> int:
    """The index of the first act that stops the chain, or len(chain) if none does."""
    return next((i for i, act in enumerate(chain) if stops(act)), len(chain))


# --- run_before -------------------------------------------------------------------------------


BEFORE_ANSWERS: dict[str, Callable[[int], Callable[..., Any]]] = {
    "cont": lambda i: lambda ctx: Cont((*ctx, i)),
    "halt": lambda i: lambda ctx: Halt(i),
    "raise": raises,
    "wrong": lambda i: lambda ctx: Fallback(f"#{i}#"),
    "wrong_ctx": lambda i: lambda ctx: Cont(f"#{i}#"),  # not the tuple it received
}


def before_rules(
    chain: list[Act], coe: bool, cor: bool
) -> tuple[tuple[str, Any], list[tuple[int, tuple[Any, ...]]]]:
    """The rules: (outcome, [(index, ctx it received) for each callback that ran])."""
    stop = stop_at(chain, lambda a: (a.kind == "halt" and not cor) or (a.kind in FAILS and not coe))
    ran = [i for i, act in enumerate(chain[: stop + 1]) if act.kind != "skip"]
    # Each callback receives the start context plus the marks of the Conts before it.
    seen = [(i, ("start", *(j for j in ran if j < i and chain[j].kind == "cont"))) for i in ran]
    halts = [i for i in ran if chain[i].kind == "halt"]
    errors = [i for i in ran if chain[i].kind in FAILS]
    if stop < len(chain) and chain[stop].kind in FAILS:
        return ("error", stop), seen  # without continue_on_error, an error beats any response
    if halts:
        return ("halt", halts[-1]), seen  # the first when it stops, the last with continue_on_response
    if errors:
        return ("error", errors[0]), seen
    return ("cont", ("start", *(i for i in ran if chain[i].kind == "cont"))), seen


@given(acts(BEFORE_KINDS), st.booleans(), st.booleans(), st.booleans())
def test_run_before_follows_the_rules(chain: list[Act], coe: bool, cor: bool, resolved: bool) -> None:
    callbacks, trace = build("before_tool", chain, BEFORE_ANSWERS)
    expected, seen = before_rules(chain, coe, cor)
    chain_of = Callbacks.of(callbacks) if resolved else callbacks
    try:
        result = complete(
            run_before(chain_of, "before_tool", ("start",), continue_on_error=coe, continue_on_response=cor)
        )
    except CallbackError as e:
        outcome: tuple[str, Any] = ("error", failing_index(e))
    else:
        outcome = ("cont", result.ctx) if isinstance(result, Cont) else ("halt", result.value)
    assert outcome == expected
    assert [(int(name), ctx) for name, _, ctx in trace] == seen


# --- run_after --------------------------------------------------------------------------------


AFTER_ANSWERS: dict[str, Callable[[int], Callable[..., Any]]] = {
    "map": lambda i: lambda value, ctx: (*value, i),
    "raise": raises,
}


def after_rules(chain: list[Act], coe: bool) -> tuple[tuple[str, Any], list[tuple[int, tuple[Any, ...]]]]:
    stop = stop_at(chain, lambda a: a.kind == "raise" and not coe)
    ran = [i for i, act in enumerate(chain[: stop + 1]) if act.kind != "skip"]
    # Each callback receives the fold of the outputs before it; a failing one leaves it as it was.
    seen = [(i, tuple(j for j in ran if j < i and chain[j].kind == "map")) for i in ran]
    errors = [i for i in ran if chain[i].kind == "raise"]
    if errors:
        return ("error", errors[0]), seen
    return ("value", tuple(i for i in ran if chain[i].kind == "map")), seen


@given(acts(AFTER_KINDS), st.booleans(), st.booleans())
def test_run_after_follows_the_rules(chain: list[Act], coe: bool, resolved: bool) -> None:
    callbacks, trace = build("after_tool", chain, AFTER_ANSWERS)
    expected, seen = after_rules(chain, coe)
    chain_of = Callbacks.of(callbacks) if resolved else callbacks
    try:
        outcome: tuple[str, Any] = (
            "value",
            complete(run_after(chain_of, "after_tool", (), "ctx", continue_on_error=coe)),
        )
    except CallbackError as e:
        outcome = ("error", failing_index(e))
    assert outcome == expected
    assert [(int(name), value) for name, _, value, _ in trace] == seen


# --- run_on_error -----------------------------------------------------------------------------


class Tagged(Exception):
    """The error handed to the chain, or one a callback put in its place (tag: who)."""


ERROR_ANSWERS: dict[str, Callable[[int], Callable[..., Any]]] = {
    "pass": lambda i: lambda error, ctx: Raise(error),
    "replace": lambda i: lambda error, ctx: Raise(Tagged(i)),
    "retry": lambda i: lambda error, ctx: Retry(f"ctx {i}", delay=i),
    "fallback": lambda i: lambda error, ctx: Fallback(i),
    "raise": raises,
    "wrong": lambda i: lambda error, ctx: Halt(f"#{i}#"),
    "wrong_ctx": lambda i: lambda error, ctx: Retry((f"#{i}#",)),  # not the str it received
}
RECOVERS = {"retry", "fallback"}


def on_error_rules(chain: list[Act], coe: bool) -> tuple[tuple[str, Any], list[tuple[int, Any]]]:
    stop = stop_at(chain, lambda a: a.kind in RECOVERS or (a.kind in FAILS and not coe))
    ran = [i for i, act in enumerate(chain[: stop + 1]) if act.kind != "skip"]

    def error_before(i: int) -> Any:
        """The tag of the error callback `i` receives: the last replacement before it."""
        return next((j for j in reversed(ran) if j < i and chain[j].kind == "replace"), "original")

    seen = [(i, error_before(i)) for i in ran]
    errors = [i for i in ran if chain[i].kind in FAILS]
    if stop < len(chain):
        kind = chain[stop].kind
        if kind == "retry":
            return ("retry", stop), seen
        if kind == "fallback":
            return ("fallback", stop), seen
        return ("error", stop), seen
    if errors:
        return ("error", errors[0]), seen
    return ("raise", error_before(len(chain))), seen


@given(acts(ERROR_KINDS), st.booleans(), st.booleans())
def test_run_on_error_follows_the_rules(chain: list[Act], coe: bool, resolved: bool) -> None:
    callbacks, trace = build("on_tool_error", chain, ERROR_ANSWERS)
    expected, seen = on_error_rules(chain, coe)
    chain_of = Callbacks.of(callbacks) if resolved else callbacks
    try:
        result = complete(
            run_on_error(chain_of, "on_tool_error", Tagged("original"), "ctx", continue_on_error=coe)
        )
    except CallbackError as e:
        outcome: tuple[str, Any] = ("error", failing_index(e))
    else:
        match result:
            case Retry(ctx, delay):
                assert ctx == f"ctx {delay}"
                outcome = ("retry", delay)
            case Fallback(value):
                outcome = ("fallback", value)
            case Raise(error):
                assert isinstance(error, Tagged)
                outcome = ("raise", error.args[0])
    assert outcome == expected
    assert [(int(name), error.args[0]) for name, _, error, _ in trace] == seen
