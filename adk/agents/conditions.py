"""Conditions that end a `LoopAgent` (`until=`), composable with `&`, `|` and `~`.

A condition is judged after each sub-agent of the loop, on the session state and the complete
events that sub-agent just gave: `state_set("approved") | mentioned("APPROVED")`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from adk.events import Event

__all__ = ["Condition", "last_event", "mentioned", "state_set"]

_ANY: Any = object()


class Condition:
    """Whether a loop should end, from the state and the events of the sub-agent that just ran."""

    __slots__ = ("_test", "_text")

    def __init__(self, test: Callable[[Mapping[str, Any], Sequence[Event]], bool], text: str) -> None:
        self._test = test
        self._text = text

    def __call__(self, state: Mapping[str, Any], events: Sequence[Event]) -> bool:
        return bool(self._test(state, events))

    def __and__(self, other: Condition) -> Condition:
        return Condition(lambda s, e: self(s, e) and other(s, e), f"({self} & {other})")

    def __or__(self, other: Condition) -> Condition:
        return Condition(lambda s, e: self(s, e) or other(s, e), f"({self} | {other})")

    def __invert__(self) -> Condition:
        return Condition(lambda s, e: not self(s, e), f"~{self}")

    def __repr__(self) -> str:
        return self._text


def state_set(key: str, value: Any = _ANY) -> Condition:
    """The session state has `key` (equal to `value`, if one is given)."""
    if value is _ANY:
        return Condition(lambda state, events: key in state, f"state_set({key!r})")
    return Condition(lambda state, events: state.get(key, _ANY) == value, f"state_set({key!r}, {value!r})")


def mentioned(text: str, *, case_sensitive: bool = False) -> Condition:
    """The sub-agent's last answer contains `text` (ignoring case, unless `case_sensitive`)."""
    wanted = text if case_sensitive else text.casefold()

    def test(state: Mapping[str, Any], events: Sequence[Event]) -> bool:
        for event in reversed(events):
            message = event.message
            if message is not None and message.role == "assistant" and message.content:
                said = message.content if case_sensitive else message.content.casefold()
                return wanted in said
        return False

    return Condition(test, f"mentioned({text!r})")


def last_event(predicate: Callable[[Event], bool]) -> Condition:
    """`predicate` holds for the last complete event the sub-agent gave."""
    name = getattr(predicate, "__name__", repr(predicate))
    return Condition(lambda state, events: bool(events) and predicate(events[-1]), f"last_event({name})")
