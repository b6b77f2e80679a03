"""`CircuitBreaker`: skip a model that keeps failing, for a while, in every run that shares it.

Its state, per model (the failures in a row, and when the circuit opened), lives on the instance,
so every run of the process that registers it shares it; given `store=` (a session store that
keeps shared limits: `adk.sessions.budgets.SharedLimits`), it lives in the store instead, so that
every worker process sharing the store shares it too. Either way it is changed by the same small
functions, in the store in one atomic read-modify-write. docs/limits.md states the rules.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from adk.callbacks.results import Cont, Raise
from adk.context import ModelContext
from adk.errors import CircuitOpenError, RetriesExhausted
from adk.events import LlmResponse
from adk.limits.timeouts import positive
from adk.models.base import Model
from adk.recovery.attempts import wall_now
from adk.sessions.budgets import SharedLimits

__all__ = ["CircuitBreaker"]

R = TypeVar("R")


class CircuitBreaker:
    """Skip a model after `failures` consecutive failed calls, for `cooldown` seconds.

    While a model's circuit is open, `before_model` sends the request to the next model of
    `fallbacks` whose circuit is closed (or raises `CircuitOpenError` if there is none). After the
    cool-down calls are let through again: a success closes the circuit, a failure opens it again.
    Place it before other recovery callbacks so that it sees every failure. With `store=`, the
    circuits are shared by every worker process using that store (under `name`), and the clock
    is the wall clock (`adk.recovery.attempts.wall_now`) unless `clock=` is given.
    """

    def __init__(
        self,
        *,
        failures: int = 5,
        cooldown: float = 30.0,
        fallbacks: Sequence[Model] = (),
        clock: Callable[[], float] | None = None,
        store: SharedLimits | None = None,
        name: str = "breaker",
    ) -> None:
        if type(failures) is not int or failures < 1:  # a bool is no count
            raise ValueError(f"CircuitBreaker: failures must be a whole number above 0, got {failures!r}")
        self.failures = failures
        positive(cooldown, "CircuitBreaker: cooldown")  # a ValueError unless seconds above 0
        self.cooldown = float(cooldown)
        self.fallbacks = list(fallbacks)
        if store is not None and not isinstance(store, SharedLimits):
            raise ValueError(
                "CircuitBreaker: store must be a session store that keeps shared limits "
                f"(InMemorySessionService, SqliteSessionService, PostgresSessionService), got {store!r}"
            )
        self.store = store
        self.name = name
        self._prefix = f"adk:breaker:{name}:"
        """A model's key in the store, less the model's name."""
        self._clock = clock or (time.monotonic if store is None else wall_now)
        self._states: dict[str, dict[str, Any]] = {}
        """Without a store: per model name, `count` (failures in a row) and `opened` (when)."""

    async def _change(self, model: str, change: Callable[[dict[str, Any]], R]) -> R:
        """Apply `change` to `model`'s state: this instance's, or the store's, atomically."""
        if self.store is None:
            return change(self._states.setdefault(model, {}))
        return await self.store.update_shared(self._prefix + model, change)

    async def _read(self, model: str) -> dict[str, Any]:
        """`model`'s state, read without taking the store's lock: a check writes nothing."""
        if self.store is None:
            return self._states.get(model, {})
        return await self.store.read_shared(self._prefix + model)

    def _is_open(self, state: dict[str, Any]) -> bool:
        opened = state.get("opened")
        return opened is not None and self._clock() - opened < self.cooldown

    def is_open(self, model: Model) -> bool:
        """Whether `model`'s circuit is open, in this process (a breaker without a store)."""
        if self.store is not None:
            raise ValueError(
                "CircuitBreaker.is_open: this breaker's state is in its store; await opened(model)"
            )
        return self._is_open(self._states.get(model.name, {}))

    async def opened(self, model: Model) -> bool:
        """Whether `model`'s circuit is open, wherever the state lives."""
        return self._is_open(await self._read(model.name))

    async def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        if not await self.opened(ctx.model):
            return Cont(ctx)
        for model in self.fallbacks:
            if not await self.opened(model):
                return Cont(dataclasses.replace(ctx, model=model))
        raise CircuitOpenError(f"circuit open for model {ctx.model.name!r} and every fallback")

    async def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        if await self._read(ctx.model.name):  # else closed, no failure counted: nothing to write
            await self._change(ctx.model.name, _closed)
        return response

    async def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        if isinstance(error, RetriesExhausted):  # the failure it wraps was counted as it happened
            return Raise(error)
        at, failures = self._clock(), self.failures

        def failed(state: dict[str, Any]) -> None:
            count = state["count"] = state.get("count", 0) + 1
            if count >= failures:
                state["opened"] = at

        await self._change(ctx.model.name, failed)
        return Raise(error)


def _closed(state: dict[str, Any]) -> None:
    """A success: the failures in a row start again from none, and the circuit is closed."""
    state.clear()
