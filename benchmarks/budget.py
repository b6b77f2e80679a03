"""What a `Budget` adds to a turn: S1 (one text turn, in memory) with and without a run budget.

Run from the project root: `python -m benchmarks.budget` (`--quick` for a smoke run). Prints the
median CPU µs per turn of each, and the difference (docs/limits.md; target: under 2 µs), beside
what two meters that do less add: `NullMeter`, which reserves nothing (the model call's hook
point alone), and `FloorMeter`, the least a meter that reserves before the call can do (the
prompt's estimate, the request with `max_tokens` lowered, one total).
`python -m benchmarks.instructions B0 BN BF B1` counts the same in machine instructions.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from collections.abc import AsyncIterator

from adk import LlmAgent, LlmRequest, LlmResponse, Runner
from adk.callbacks.results import Raise
from adk.context import Invocation, ModelContext
from adk.events import Usage
from adk.limits import Budget
from adk.models.base import with_max_tokens
from adk.sessions import InMemorySessionService
from benchmarks.runner import InstantModel, median_run_us

__all__ = ["make_runner"]

BILLED = LlmResponse.text("hello", usage=Usage(prompt_tokens=1, completion_tokens=1, total_tokens=2))


class BilledModel(InstantModel):
    """S1's model, reporting its usage as real models do (else every call is a fail-closed warning)."""

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        yield BILLED


class _Held:
    """`FloorMeter`'s reservation: the run's one number, and what to settle it by."""

    __slots__ = ("prompt", "request", "tokens", "use")

    def __init__(self, use: list[float], request: LlmRequest, prompt: int, tokens: int) -> None:
        self.use, self.request, self.prompt, self.tokens = use, request, prompt, tokens

    async def settle(self, response: LlmResponse | None) -> tuple[()]:
        usage = None if response is None else response.usage
        if usage is not None:
            self.use[0] += usage.total_tokens - self.prompt - self.tokens
        return ()

    async def release(self) -> None:
        self.use[0] -= self.prompt + self.tokens


class FloorMeter:
    """The least a meter does through the model call's hook point (adk.agents.metering), for
    comparison with `Budget`: one run-scoped total, the prompt's estimate, the lowered request,
    no prices, warnings or other limits."""

    async def reserve_attempt(self, invocation: Invocation, model: str, request: LlmRequest) -> _Held:
        use: list[float] | None = invocation.get_state("floor")
        if use is None:
            use = [0.0]
            invocation.set_state("floor", use)
        prompt = request.estimated_tokens
        tokens = int(10**9 - use[0] - prompt)
        use[0] += prompt + tokens
        return _Held(use, with_max_tokens(request, tokens), prompt, tokens)

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        return Raise(error)  # a callback implements a hook: this one passes every error on


class _Nothing:
    """`NullMeter`'s reservation: the request as it was asked, nothing to settle."""

    __slots__ = ("request",)

    def __init__(self, request: LlmRequest) -> None:
        self.request = request

    async def settle(self, response: LlmResponse | None) -> tuple[()]:
        return ()

    async def release(self) -> None:
        return None


class NullMeter:
    """A meter that reserves nothing: what the model call's hook point costs by itself."""

    async def reserve_attempt(self, invocation: Invocation, model: str, request: LlmRequest) -> _Nothing:
        return _Nothing(request)

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        return Raise(error)  # as FloorMeter: the same hooks registered


def make_runner(budget: bool, floor: bool = False, null: bool = False) -> Runner:
    """S1's runner; with a run budget on tokens and cost when `budget` (`FloorMeter` if `floor`,
    `NullMeter` if `null`)."""
    priced = Budget(total_tokens=10**9, usd=10**6, prices={"instant": (1.0, 2.0)})
    meter: NullMeter | FloorMeter | Budget = NullMeter() if null else FloorMeter() if floor else priced
    agent = LlmAgent("bench", model=BilledModel(use_tool=False))
    return Runner(agent, session_service=InMemorySessionService(), callbacks=[meter] if budget else [])


RUNNERS = {
    "S1 without a budget": lambda: make_runner(False),
    "S1 with a NullMeter": lambda: make_runner(True, null=True),
    "S1 with a FloorMeter": lambda: make_runner(True, floor=True),
    "S1 with a run budget": lambda: make_runner(True),
}


async def main(quick: bool) -> None:
    n, rounds = (200, 3) if quick else (3000, 9)
    times: dict[str, list[float]] = {name: [] for name in RUNNERS}
    for _ in range(3):  # interleaved, so that the machine's drift falls on all alike
        for name, make in RUNNERS.items():
            times[name].append(await median_run_us(make, n, rounds))
    us = {name: statistics.median(t) for name, t in times.items()}
    for name, median in us.items():
        print(f"{name:<22} {median:8.2f} µs a turn")
    without = us["S1 without a budget"]
    print(f"a NullMeter adds       {us['S1 with a NullMeter'] - without:8.2f} µs a turn (the hook point)")
    print(f"a FloorMeter adds      {us['S1 with a FloorMeter'] - without:8.2f} µs a turn (reserving at all)")
    print(f"a Budget adds          {us['S1 with a run budget'] - without:8.2f} µs a turn (target < 2 µs)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    asyncio.run(main(parser.parse_args().quick))
