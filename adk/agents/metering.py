"""The model call's one hook point for meters: each attempt of every model reserves, then settles.

A callback with a `reserve_attempt` method (adk.limits.Budget) is a `ModelMeter`. The model
call (adk.agents.model_call) asks each of the run's meters, as every attempt starts, on whatever
model that attempt uses (the agent's, a `Retry`'s other model, a `FallbackModels`' or a
`CircuitBreaker`'s), to reserve it; the request it sends is the one the meters hand back (a
budget lowers `max_tokens`). As the attempt ends, the reservations are settled to the response
(its usage), or released when the attempt failed before any output; an attempt that failed after
partial output, or was cancelled, keeps them (fail closed: the provider may have charged it).
The meters are found once, with the agent's callbacks (`meter_of`: several act as one); a call
without any pays one test for None. No wrapper model and no context copy: the call's own attempt
does it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, cast

from adk.callbacks.decisions import Decision
from adk.events import LlmResponse
from adk.models.base import LlmRequest

if TYPE_CHECKING:
    from adk.context import Invocation

__all__ = ["MeteredAttempt", "Meters", "ModelMeter", "meter_of"]


class MeteredAttempt(Protocol):
    """One attempt's reservation: the request to send, and how to settle or release it."""

    @property
    def request(self) -> LlmRequest: ...

    async def settle(self, response: LlmResponse | None) -> Sequence[Decision]:
        """Settle to `response`'s usage (None: the stream ended without one); the decisions to
        put on the call's response (warnings)."""
        ...

    async def release(self) -> None:
        """Give the reservation back: the attempt failed before the model produced anything."""
        ...


class ModelMeter(Protocol):
    """A callback that meters every model attempt of a run (adk.limits.Budget is one)."""

    async def reserve_attempt(
        self, invocation: Invocation, model: str, request: LlmRequest
    ) -> MeteredAttempt:
        """Reserve an attempt of `model` with `request`; raising refuses it (the attempt fails
        with that error, which `on_model_error` sees)."""
        ...


def meter_of(objects: Sequence[object]) -> ModelMeter | None:
    """The meter of registered callbacks: the one among them, all of them in order as one
    (`Meters`), or None."""
    meters = cast(list[ModelMeter], [o for o in objects if callable(getattr(o, "reserve_attempt", None))])
    if not meters:
        return None
    return meters[0] if len(meters) == 1 else Meters(meters)


class Meters:
    """Several meters as one: each reserves in turn, on the request the one before handed back;
    one that refuses releases those made before it."""

    def __init__(self, meters: Sequence[ModelMeter]) -> None:
        self.meters = tuple(meters)

    async def reserve_attempt(
        self, invocation: Invocation, model: str, request: LlmRequest
    ) -> MeteredAttempt:
        held: list[MeteredAttempt] = []
        try:
            for meter in self.meters:
                reserved = await meter.reserve_attempt(invocation, model, request)
                request = reserved.request
                held.append(reserved)
        except Exception:
            await _Held(request, held).release()
            raise
        return _Held(request, held)


class _Held:
    """The reservations of `Meters`."""

    def __init__(self, request: LlmRequest, held: list[MeteredAttempt]) -> None:
        self.request = request
        self.held = held

    async def settle(self, response: LlmResponse | None) -> Sequence[Decision]:
        return [decision for reserved in self.held for decision in await reserved.settle(response)]

    async def release(self) -> None:
        for reserved in self.held:
            await reserved.release()
