"""The attempts of one envelope, the retry clock that times them, and the testing switch.

An envelope counts its attempts per model (or on the tool), keeps one tenacity `RetryCallState`
per policy that judges its failures, and asks its bounding policy whether another attempt may
start. The testing switch turns the waits between attempts off (recorded, and added to the clock
that delay-based stops read) and may cap the attempts of every envelope.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING

from tenacity import RetryCallState

if TYPE_CHECKING:
    from adk.callbacks.decisions import Decision
    from adk.recovery.policy import RetryPolicy

__all__ = ["Attempts", "Testing", "judging", "now", "set_testing", "sleep", "wall_now"]


class Testing(contextlib.AbstractContextManager["Testing"]):
    """The state of the testing switch; as a context manager, it restores the previous one on exit."""

    __test__ = False  # not a pytest test class, though users import it into test modules

    def __init__(self, enabled: bool, attempts: int | None, previous: Testing | None) -> None:
        self.enabled = enabled
        self.attempts = attempts
        """Cap on the attempts of any envelope, whatever the policies say."""
        self.waits: list[float] = []
        """The waits that were asked for and skipped, in order (for assertions)."""
        self.slept = 0.0
        """Their sum: the retry clock runs ahead by it, so delay-based stops act as if they were slept."""
        self._previous = previous

    def __exit__(self, *exc: object) -> None:
        global _testing
        if self._previous is not None:
            _testing = self._previous


_testing = Testing(False, None, None)


def set_testing(testing: bool = True, *, attempts: int | None = None) -> Testing:
    """Turn retry waits off (and optionally cap attempts) for tests: nothing sleeps for real.

    The skipped waits are recorded in `.waits`, and the clock that policies' delay-based stops read
    advances by them. Also a context manager that restores the previous setting on exit:
    `with set_testing(True, attempts=1) as t: ...`.
    """
    global _testing
    _testing = Testing(testing, attempts if testing else None, _testing)
    return _testing


def now() -> float:
    """The retry clock: monotonic time, plus the waits the testing switch skipped."""
    return time.monotonic() + _testing.slept


def wall_now() -> float:
    """The clock of limits shared by worker processes (through a store): the wall clock, which
    every worker reads alike (a monotonic clock is per machine), plus the skipped waits."""
    return time.time() + _testing.slept


async def sleep(seconds: float) -> None:
    """Wait between attempts: asyncio's sleep, or, under `set_testing(True)`, none (recorded)."""
    testing = _testing
    if testing.enabled:
        testing.waits.append(seconds)
        testing.slept += seconds
        await asyncio.sleep(0)  # still a cancellation point, like a real wait
    else:
        await asyncio.sleep(seconds)


class _Track:
    """The attempts on one model (or on the tool) of an envelope, and each judging policy's state."""

    __slots__ = ("failed_at", "idle", "number", "start", "states", "target")

    def __init__(self, target: object, start: float) -> None:
        self.target = target
        """The model (None for a tool); held, since its id keys the track."""
        self.start = start
        self.number = 1
        self.idle = 0.0
        self.failed_at = start
        self.states: dict[int, tuple[object, RetryCallState]] = {}
        """Per policy (by id; the policy is held with it): its tenacity state."""

    def advance(self, wait: float) -> None:
        """The next attempt starts after `wait`: what tenacity does before it sleeps."""
        self.number += 1
        self.idle += wait
        for _, state in self.states.values():
            state.idle_for += wait
            state.prepare_for_next_attempt()


class Attempts:
    """The attempts of one envelope: whether another may start, how long to wait, what was decided.

    Most calls never fail: tenacity's states are built at the first failure, and `decisions` only
    when a callback decides something.
    """

    __slots__ = ("_start", "_track", "_tracks", "decisions", "policy")

    def __init__(self, policy: RetryPolicy, start: float | None = None) -> None:
        self.policy = policy
        """The policy whose `stop` bounds this envelope (the agent's or the runner's)."""
        # now(), inlined: every envelope pays it; `start`, a `time.monotonic()` reading, when
        # the envelope began before them
        self._start = (time.monotonic() if start is None else start) + _testing.slept
        self._track: _Track | None = None
        self._tracks: dict[int, _Track] | None = None
        self.decisions: list[Decision] | None = None
        """What callbacks decided in this envelope, in order; None until one does."""

    @property
    def number(self) -> int:
        """The number of the attempt in progress on the model in play (1 for the first)."""
        track = self._track
        return 1 if track is None else track.number

    def decided(self, decision: Decision) -> None:
        if self.decisions is None:
            self.decisions = [decision]
        else:
            self.decisions.append(decision)

    def failed(self, target: object) -> None:
        """The attempt in progress on `target` (a model, or None for a tool) failed."""
        track = self._track
        if track is None:
            track = self._track = _Track(target, self._start)
        track.failed_at = now()

    def state(self, policy: object, error: Exception) -> RetryCallState:
        """`policy`'s tenacity state for the failed attempt in progress, its outcome `error`."""
        track = self._failed()
        entry = track.states.get(id(policy))
        if entry is None:
            state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]  # needs no Retrying
            state.start_time = track.start
            state.attempt_number = track.number
            state.idle_for = track.idle
            track.states[id(policy)] = (policy, state)
        else:
            state = entry[1]
        outcome = state.outcome
        if outcome is None or outcome.exception() is not error:
            state.set_exception((type(error), error, error.__traceback__))
            state.outcome_timestamp = track.failed_at
        return state

    def retry(self, error: Exception, delay: float | None) -> float | None:
        """Whether the bound lets another attempt start, and the wait before it; None to stop.

        `delay` is the wait the answering callback chose; without one, the bounding policy's.
        """
        policy = self.policy
        state = self.state(policy, error)
        if delay is None:
            delay = policy._wait(state, error)
        state.upcoming_sleep = delay
        cap = _testing.attempts
        if (cap is not None and state.attempt_number >= cap) or policy.stop(state):
            return None
        self._failed().advance(delay)
        return delay

    def _failed(self) -> _Track:
        track = self._track
        if track is None:
            raise RuntimeError("no attempt of this envelope has failed yet")
        return track

    def switch(self, target: object, wait: float) -> None:
        """The next attempt goes to another model: its own bound, resumed if it was tried before."""
        tracks = self._tracks
        if tracks is None:
            current = self._failed()
            tracks = self._tracks = {id(current.target): current}
        track = tracks.get(id(target))
        if track is None:
            track = tracks[id(target)] = _Track(target, now())
        else:
            track.advance(wait)
        self._track = track


judging: ContextVar[Attempts | None] = ContextVar("adk_envelope", default=None)
"""The envelope whose failure the `on_*_error` chain is judging: where policies find their state."""
