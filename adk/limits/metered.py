"""The model a `Budget` puts in the call's context: each attempt reserves, then settles.

Every attempt of the call goes through it (the first, and each `Retry` that keeps the model), so
each attempt's real usage counts once: its reservation is made as it starts and settled to the
usage its response reports as it ends. An attempt that fails before any output releases its
reservation; one that fails after partial output, is cancelled, or reports no usage keeps it
(fail closed: the provider may have charged it).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from adk.callbacks.decisions import BudgetWarning
from adk.context import current_invocation
from adk.events import LlmResponse
from adk.models.base import LlmRequest, Model

if TYPE_CHECKING:
    from adk.limits.budget import Budget

__all__ = ["Metered"]

UNREPORTED = "the model reported no usage: its reservation counts as spent"


class Metered:
    """`model`, metered by `budget`; its `name` is the model's, so events read the same."""

    __slots__ = ("budget", "model", "notes")

    def __init__(self, budget: Budget, model: Model) -> None:
        self.budget = budget
        self.model = model
        self.notes: list[BudgetWarning] = []
        """Decisions for the call's event (warnings), taken by the budget's after hooks."""

    @property
    def name(self) -> str:
        return self.model.name

    async def generate(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        budget, invocation = self.budget, current_invocation()
        model = request.model or self.model.name
        if budget.store is None:  # a run budget: no coroutine between the check and the update
            reserved, sent = budget.reserve_run(invocation, model, request)
        else:
            reserved, sent = await budget.reserve_call(invocation, model, request)
        response: LlmResponse | None = None
        output = False
        try:
            async for chunk in self.model.generate(sent):
                if chunk.is_partial:
                    output = True
                else:
                    response = chunk
                yield chunk
        except BaseException as error:
            if response is None and not output and isinstance(error, Exception):  # not a cancelled call
                await budget.adjust(invocation, {name: -amount for name, amount in reserved.items()})
            raise
        if budget.store is None:
            notes = budget.settle_run(invocation, model, reserved, response)
        else:
            notes = await budget.settle(invocation, model, reserved, response)
        if notes:
            self.notes += notes
