"""`Scripted`: a callback built in a test from plain functions, recording each hook call in a trace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Trace = list[tuple[Any, ...]]
"""What ran, in order: (callback name, hook, *arguments)."""


class Scripted:
    """A callback whose hooks are `answers[hook](*args)`, each call appended to `trace`.

    With `is_async=True` every hook is an `async def`. Give a hook as `None` to leave it out.
    """

    def __init__(
        self, name: str, trace: Trace, *, is_async: bool = False, **answers: Callable[..., Any]
    ) -> None:
        self.name = name
        for hook, answer in answers.items():
            setattr(self, hook, _hook(name, hook, answer, trace, is_async))

    def __repr__(self) -> str:
        return f"Scripted({self.name!r})"


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


def fail(error: Exception) -> Callable[..., Any]:
    """An answer that raises `error`."""

    def answer(*args: Any) -> Any:
        raise error

    return answer
