"""One model attempt's reservation under a `Budget`: what it reserved, and how it is settled.

The model call reserves each attempt as it starts (adk.agents.metering), whichever model the
attempt uses, and settles it as it ends to the usage its response reports. An attempt that fails
before any output releases its reservation; one that fails after partial output, is cancelled,
or reports no usage keeps it (fail closed: the provider may have charged it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from adk.callbacks.decisions import BudgetWarning
from adk.events import LlmResponse
from adk.limits.ledger import RunUse
from adk.models.base import LlmRequest

if TYPE_CHECKING:
    from adk.context import Invocation
    from adk.limits.budget import Budget

__all__ = ["UNREPORTED", "Reservation"]

UNREPORTED = "the model reported no usage: its reservation counts as spent"


class Reservation:
    """What one attempt reserved: the prompt's estimate, the output tokens it may use (its
    `max_tokens`), their price, and `request`, the request to send."""

    __slots__ = ("budget", "invocation", "model", "price", "prompt", "request", "tokens", "usd", "use")

    def __init__(
        self,
        budget: Budget,
        invocation: Invocation,
        use: RunUse,
        model: str,
        request: LlmRequest,
        prompt: float,
        tokens: int | None,
        price: tuple[float, float] | None,
    ) -> None:
        self.budget = budget
        self.invocation = invocation
        self.use = use
        """This run's use (a stored scope's reservations are added to it too)."""
        self.model = model
        self.request = request
        self.prompt = prompt
        self.tokens = tokens or 0
        """The output tokens reserved (0 for an unbounded call: it is settled to what it used)."""
        self.price = price
        self.usd = 0.0 if price is None else prompt * price[0] + self.tokens * price[1]

    def amounts(self, sign: float = 1.0) -> dict[str, float]:
        """The reservation by limit name (negated with `sign=-1`: a release)."""
        prompt, tokens = self.prompt, self.tokens
        amounts = {
            "model_calls": sign,
            "input_tokens": sign * prompt,
            "output_tokens": sign * tokens,
            "total_tokens": sign * (prompt + tokens),
        }
        if self.price is not None:
            amounts["usd"] = sign * self.usd
        return amounts

    def overage(self, response: LlmResponse) -> dict[str, float] | None:
        """What the attempt used beyond (or, negative, short of) what it reserved; None when the
        model reported no usage."""
        usage = response.usage
        if usage is None:
            return None
        prompt, completion = usage.prompt_tokens, usage.completion_tokens
        overage: dict[str, float] = {
            "input_tokens": prompt - self.prompt,
            "output_tokens": completion - self.tokens,
            "total_tokens": prompt + completion - self.prompt - self.tokens,
        }
        price = self.price
        if price is not None:
            overage["usd"] = prompt * price[0] + completion * price[1] - self.usd
        return overage

    async def settle(self, response: LlmResponse | None) -> Sequence[BudgetWarning]:
        """Settle to `response`'s usage; the warnings it gives (and a note if there was none)."""
        budget, use = self.budget, self.use
        if budget.store is not None:
            return await self._settle_stored(response)
        usage = None if response is None else response.usage
        if usage is None:  # fail closed: the reservation stays spent
            note = budget.note(self.model, "output_tokens", UNREPORTED, use)
            return [note, *budget.warnings(self.model, use, use)]
        # the run's use, written out: the reservation added to each of these (total: their sum)
        prompt, completion = usage.prompt_tokens, usage.completion_tokens
        use.input_tokens += prompt - self.prompt
        use.output_tokens += completion - self.tokens
        price = self.price
        if price is not None:
            use.usd += prompt * price[0] + completion * price[1] - self.usd
        total, inputs, output, usd, calls = budget.quiet_lines
        if (
            use.input_tokens + use.output_tokens < total
            and use.input_tokens < inputs
            and use.output_tokens < output
            and use.usd < usd
            and use.model_calls < calls
        ):
            return ()  # below every warning line, as nearly every settlement is
        return budget.warnings(self.model, use, use)

    async def _settle_stored(self, response: LlmResponse | None) -> list[BudgetWarning]:
        budget, invocation = self.budget, self.invocation
        overage = None if response is None else self.overage(response)
        if overage is not None:
            await budget.adjust(invocation, overage)
        used = RunUse(self.use.priced, await budget.used(invocation))
        notes = budget.warnings(self.model, used, self.use)
        if overage is None:  # fail closed: the reservation stays spent
            notes.insert(0, budget.note(self.model, "output_tokens", UNREPORTED, used))
        return notes

    async def release(self) -> None:
        """Give the reservation back: the attempt failed before any output."""
        await self.budget.adjust(self.invocation, self.amounts(-1.0))
