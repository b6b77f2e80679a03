"""The one driver of an agent's steps, which the runner, `BaseAgent.run` and `LlmAgent` all use.

An agent's run is a sequence of steps (`Steps`): each gives its events at once (a list), or the
generator of a step that streams them. `Driver.batch()` hands out the next events either way, so
that whoever drives a run has one loop, and a step answered at once needs no generator.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

if TYPE_CHECKING:
    from adk.events import Event

__all__ = ["Driver", "OneStep", "Step", "Steps"]

Step: TypeAlias = "list[Event] | AsyncGenerator[Event, None]"
"""What a step gives: its events, or the generator of a step that streams them."""


class Steps(Protocol):
    """An agent's run as steps (`BaseAgent._steps`): await `next()` until `over`; each step gives
    its events, or the generator of a step that streams them (exhausted before the next)."""

    over: bool

    def next(self) -> Awaitable[Step]: ...


class OneStep:
    """The steps of a body that is one generator: a single step, the generator."""

    __slots__ = ("_events", "over")

    def __init__(self, events: AsyncGenerator[Event, None]) -> None:
        self._events = events
        self.over = False

    async def next(self) -> AsyncGenerator[Event, None]:
        self.over = True
        return self._events


class Driver:
    """Drives `steps`: `await batch()` until `over`; `aclose()` after, however it ended.

    A batch is a step's list of events, or the next event of a step that streams (one at a
    time: a consumer that stops mid-stream stops the step there).
    """

    __slots__ = ("over", "steps", "stream")

    def __init__(self, steps: Steps) -> None:
        self.steps = steps
        self.over = steps.over
        """Whether the run's steps are over: set by `batch()` (an attribute, not a property: it is
        read before every batch)."""
        self.stream: AsyncGenerator[Event, None] | None = None
        """A step that streams, being iterated: `aclose()` is needed only while there is one."""

    async def batch(self) -> Sequence[Event]:
        """The next events of the run; none once its steps are over."""
        steps = self.steps
        while True:
            stream = self.stream
            if stream is not None:
                try:
                    return (await anext(stream),)
                except StopAsyncIteration:
                    self.stream = None
            elif steps.over:
                self.over = True
                return ()
            else:
                step = await steps.next()
                if isinstance(step, list):
                    self.over = steps.over
                    return step
                self.stream = step

    async def aclose(self) -> None:
        """Close the step that streams, if one was left unfinished: now (its agents below, their
        tool tasks), not when it is collected."""
        stream = self.stream
        if stream is not None:
            self.stream = None
            await stream.aclose()
