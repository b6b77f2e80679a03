"""The ready-made recovery callbacks: fall back to other models, retry then fall back, answer with a
fixed response, and skip a failing model for a while (a circuit breaker)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from adk.callbacks.results import Cont, Fallback, Raise, Retry
from adk.context import ModelContext
from adk.errors import CircuitOpenError, RetriesExhausted
from adk.events import LlmResponse
from adk.limits.timeouts import positive
from adk.models.base import Model
from adk.recovery.policy import RetryPolicy

__all__ = ["CircuitBreaker", "FallbackModels", "FixedFallback", "RetryThenFallback"]


def _next_model(models: Sequence[Model], error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
    """A retry at once on the model after `ctx.model` in `models`, or `Raise` when there is none."""
    index = next((i + 1 for i, model in enumerate(models) if model is ctx.model), 0)
    if index >= len(models):
        return Raise(error)
    return Retry(dataclasses.replace(ctx, model=models[index]), delay=0.0)


@dataclass(frozen=True, slots=True)
class FallbackModels:
    """On any model error, retry at once with the next of `models` (in order), each with its own bound."""

    models: Sequence[Model]

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        return _next_model(self.models, error, ctx)


@dataclass(frozen=True, slots=True)
class RetryThenFallback:
    """Retry each model as `retry` says (Retry-After honoured), then move on to the next of `models`.

    E.g. `RetryThenFallback([b, c], RetryPolicy(stop=stop_after_attempt(3)))` on an agent whose
    model is `a`: up to three attempts on `a`, then on `b`, then on `c`.
    """

    models: Sequence[Model]
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        if not isinstance(error, RetriesExhausted):
            wait = self.retry._judge(error, ctx)  # on `retry`'s own state, its wait
            if wait is not None:
                return Retry(ctx, wait)
        return _next_model(self.models, error, ctx)


@dataclass(frozen=True, slots=True)
class FixedFallback:
    """On a model error that `when` accepts (any, by default), answer with a fixed response."""

    response: LlmResponse | str
    when: Callable[[Exception], bool] = lambda error: True

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Fallback[LlmResponse] | Raise:
        if not self.when(error):
            return Raise(error)
        response = self.response
        return Fallback(LlmResponse.text(response) if isinstance(response, str) else response)


class CircuitBreaker:
    """Skip a model after `failures` consecutive failed calls, for `cooldown` seconds.

    While a model's circuit is open, `before_model` sends the request to the next model of
    `fallbacks` whose circuit is closed (or raises `CircuitOpenError` if there is none). After the
    cool-down one call is let through: success closes the circuit, failure opens it again.
    Place it before other recovery callbacks so that it sees every failure.
    """

    def __init__(
        self,
        *,
        failures: int = 5,
        cooldown: float = 30.0,
        fallbacks: Sequence[Model] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if type(failures) is not int or failures < 1:  # a bool is no count
            raise ValueError(f"CircuitBreaker: failures must be a whole number above 0, got {failures!r}")
        self.failures = failures
        positive(cooldown, "CircuitBreaker: cooldown")  # a ValueError unless seconds above 0
        self.cooldown = float(cooldown)
        self.fallbacks = list(fallbacks)
        self._clock = clock
        self._count: dict[str, int] = {}
        self._opened: dict[str, float] = {}

    def is_open(self, model: Model) -> bool:
        opened = self._opened.get(model.name)
        return opened is not None and self._clock() - opened < self.cooldown

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        if not self.is_open(ctx.model):
            return Cont(ctx)
        for model in self.fallbacks:
            if not self.is_open(model):
                return Cont(dataclasses.replace(ctx, model=model))
        raise CircuitOpenError(f"circuit open for model {ctx.model.name!r} and every fallback")

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self._count.pop(ctx.model.name, None)
        self._opened.pop(ctx.model.name, None)
        return response

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        name = ctx.model.name
        count = self._count[name] = self._count.get(name, 0) + 1
        if count >= self.failures:
            self._opened[name] = self._clock()
        return Raise(error)
