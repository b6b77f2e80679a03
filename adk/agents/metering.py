"""The model call's one hook point for meters: each attempt of every model reserves, then settles.

A callback with a `reserve_attempt` method (adk.limits.Budget) is a `ModelMeter`. The model
call (adk.agents.model_call) asks each of the run's meters, as every attempt starts, on whatever
model that attempt uses (the agent's, a `Retry`'s other model, a `FallbackModels`' or a
`CircuitBreaker`'s), to reserve it; the request it sends is the one the meters hand back (a
budget lowers `max_tokens`). As the attempt ends, the reservations are settled to the response
(its usage), or released when the attempt failed before any output; an attempt that failed after
partial output, or was cancelled, keeps them (fail closed: the provider may have charged it).
The meters are found once, with the agent's callbacks (`meters_of`); a call without any pays
one test of an empty tuple. No wrapper model and no context copy: the call's own attempt does it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from adk.callbacks.decisions import Decision
from adk.events import LlmResponse
from adk.models.base import LlmRequest

if TYPE_CHECKING:
    from adk.context import Invocation
    from adk.recovery import Attempts

__all__ = ["MeteredAttempt", "ModelMeter", "meters_of", "release", "reserve", "settle"]


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


def meters_of(objects: Sequence[object]) -> tuple[ModelMeter, ...]:
    """The meters among registered callbacks, in order."""
    return tuple(o for o in objects if callable(getattr(o, "reserve_attempt", None)))  # type: ignore[misc]


async def reserve(
    meters: tuple[ModelMeter, ...], invocation: Invocation, model: str, request: LlmRequest
) -> tuple[LlmRequest, list[MeteredAttempt]]:
    """Reserve an attempt with every meter, in order: the request to send and the reservations.
    One that refuses releases those made before it."""
    if len(meters) == 1:  # the common case, a coroutine less
        reserved = await meters[0].reserve_attempt(invocation, model, request)
        return reserved.request, [reserved]
    held: list[MeteredAttempt] = []
    try:
        for meter in meters:
            reserved = await meter.reserve_attempt(invocation, model, request)
            request = reserved.request
            held.append(reserved)
    except Exception:
        await release(held)
        raise
    return request, held


async def settle(held: list[MeteredAttempt], response: LlmResponse | None, attempts: Attempts | None) -> None:
    """Settle an attempt's reservations to `response`; their decisions go on the call's
    (`attempts`, which a call with meters always has)."""
    for reserved in held:
        for decision in await reserved.settle(response):
            if attempts is not None:
                attempts.decided(decision)


async def release(held: list[MeteredAttempt]) -> None:
    """Release an attempt's reservations: it failed before any output."""
    for reserved in held:
        await reserved.release()
