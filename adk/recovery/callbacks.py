"""The ready-made recovery callbacks: fall back to other models, retry then fall back, answer with a
fixed response (the circuit breaker, which skips a failing model for a while, is in `breaker`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from adk.callbacks.results import Fallback, Raise, Retry
from adk.context import ModelContext
from adk.errors import RetriesExhausted
from adk.events import LlmResponse
from adk.models.base import Model
from adk.recovery.policy import RetryPolicy

__all__ = ["FallbackModels", "FixedFallback", "RetryThenFallback"]


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
