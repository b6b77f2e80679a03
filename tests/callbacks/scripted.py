"""`Scripted`: a callback built in a test from plain functions, recording each hook call in a trace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Trace = list[tuple[Any, ...]]
"""What ran, in order: (callback name, hook, *arguments)."""


class Scripted:
    """A callback whose hooks are `answers[hook](*args)`, each call appended to `trace`."""

    is_async = False

    def __init__(self, name: str, trace: Trace, /, **answers: Callable[..., Any]) -> None:
        self.name = name
        for hook, answer in answers.items():
            setattr(self, hook, _hook(name, hook, answer, trace, self.is_async))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class AsyncScripted(Scripted):
    """A Scripted callback whose hooks are `async def`."""

    is_async = True


def _hook(
    name: str, hook: str, answer: Callable[..., Any], trace: Trace, is_async: bool
) -> Callable[..., Any]:
    def sync_hook(*args: Any) -> Any:
        trace.append((name, hook, *args))
        return answer(*args)

    async def async_hook(*args: Any) -> Any:
        trace.append((name, hook, *args))
        return answer(*args)

    return async_hook if is_async else sync_hook


def fail(error: BaseException) -> Callable[..., Any]:
    """An answer that raises `error`."""

    def answer(*args: Any) -> Any:
        raise error

    return answer
