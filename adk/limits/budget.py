"""`Budget`: a ready-made callback whose limits no call crosses (docs/limits.md).

Before each model attempt it reserves the call's worst case (the prompt's tokens, estimated by
`estimate_tokens`, plus the `max_tokens` it allows) and lowers the request's `max_tokens` to
what is left; after it, it settles to the usage the model reported. A call it cannot afford is
not made: a `BudgetExceededError` goes to `on_model_error`, and unrecovered ends the run with a
`BudgetExceeded` decision. Tool calls are counted in `before_tool`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from adk.callbacks.decisions import BudgetExceeded, BudgetWarning
from adk.callbacks.registry import decided_by
from adk.callbacks.results import Cont, Halt, Raise
from adk.errors import BudgetExceededError
from adk.events import LlmResponse, Usage
from adk.limits.metered import UNREPORTED, Metered
from adk.limits.options import LIMITS, Scope, UnknownModel, check_limits, check_options, check_prices
from adk.limits.usage import estimate_tokens
from adk.models.base import LlmRequest, Model, new_request
from adk.recovery.attempts import judging
from adk.sessions.budgets import BudgetStore, Ledger

if TYPE_CHECKING:
    from adk.context import Invocation, ModelContext, ToolContext

__all__ = ["Budget"]

_RACES = 16
"""How many times a stored reservation is recomputed when another worker changed the use first."""


class Budget:
    """Limits on tokens, cost, model calls and tool calls for a run, session, user or app."""

    def __init__(
        self,
        *,
        total_tokens: int | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        usd: float | None = None,
        prices: Mapping[str, tuple[float, float]] | None = None,
        unknown_model: UnknownModel = "refuse",
        model_calls: int | None = None,
        tool_calls: int | None = None,
        per_tool: Mapping[str, int] | None = None,
        scope: Scope = "run",
        warn_at: float = 0.8,
        store: BudgetStore | None = None,
        name: str = "budget",
    ) -> None:
        given = dict(
            zip(
                LIMITS, (total_tokens, input_tokens, output_tokens, usd, model_calls, tool_calls), strict=True
            )
        )
        self.limits = check_limits(given, per_tool)
        """The limits set, by name (`tool:<name>` per tool); USD as given."""
        self.prices = check_prices(prices)
        """Per model: USD per input token, per output token."""
        check_options(scope, unknown_model, warn_at, store)
        self.unknown_model = unknown_model
        self.scope = scope
        self.warn_at = float(warn_at)
        self.store = store if scope != "run" else None
        self.name = name
        self._key = f"adk.limits.budget:{name}:{id(self)}"
        self._warned = self._key + ":warned"
        self._warn = bool(self.limits)
        self._by = decided_by(self, "after_model")
        """Who the warnings are by: they go on the call's event in `after_model` (or in
        `on_model_error`, when the call fails after all)."""

    def __repr__(self) -> str:
        return f"Budget({self.name!r}, scope={self.scope!r}, limits={self.limits})"

    def meter(self, model: Model) -> Model:
        """`model`, metered by this budget: for a `Retry` or `FallbackModels` that switches to it."""
        return model if isinstance(model, Metered) and model.budget is self else Metered(self, model)

    # the hooks

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        """Meter the call: its model is wrapped so that each attempt reserves and settles."""
        if isinstance(ctx.model, Metered) and ctx.model.budget is self:
            return Cont(ctx)
        return Cont(dataclasses.replace(ctx, model=Metered(self, ctx.model)))

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        """Put the call's warnings on its event."""
        _decide(ctx, "after_model")
        return response

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        """Record a refusal of this budget's as a `BudgetExceeded` decision; pass the error on."""
        _decide(ctx, "on_model_error")
        attempts = judging.get()
        if isinstance(error, BudgetExceededError) and error.budget == self.name and attempts is not None:
            by, target = decided_by(self, "on_model_error"), f"model:{ctx.model.name}"
            attempts.decided(BudgetExceeded(by, target, self.name, error.limit, error.allowed, error.spent))
        return Raise(error)

    async def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:
        """Count the tool call; over a cap, it does not run and the run ends."""
        tool = ctx.tool.name
        over = await self.reserve(ctx.invocation, {"tool_calls": 1.0, f"tool:{tool}": 1.0})
        if over is None:
            return Cont(ctx)
        ctx.end_invocation()
        spent = (await self.used(ctx.invocation)).get(over, 0.0)
        attempts = judging.get()
        if attempts is not None:  # on the call's result, beside the Halted the chain records
            by = decided_by(self, "before_tool")
            attempts.decided(BudgetExceeded(by, f"tool:{tool}", self.name, over, self.limits[over], spent))
        return Halt(
            f"budget {self.name!r} refused the call to {tool}: {over} {spent:g} of {self.limits[over]:g}"
        )

    # the ledger: the run's, on the invocation, or the store's

    def _ledger(self, invocation: Invocation) -> Ledger:
        ledger = invocation.get_state(self._key)
        if ledger is None:
            ledger = Ledger()
            invocation.set_state(self._key, ledger)
        return ledger  # type: ignore[no-any-return]  # only this budget sets its key

    def _scope_key(self, invocation: Invocation) -> str:
        session = invocation.session
        match self.scope:
            case "session":
                return f"{self.name}:session:{session.user_id}:{session.id}"
            case "user":
                return f"{self.name}:user:{session.user_id}"
            case _:
                return f"{self.name}:app"

    async def used(self, invocation: Invocation) -> dict[str, float]:
        """What this budget has used in `invocation`'s scope: spent plus reserved, per limit."""
        if self.store is None:
            return dict(self._ledger(invocation).used)
        return await self.store.budget_used(self._scope_key(invocation))

    def report(self, invocation: Invocation) -> dict[str, float]:
        """This run's use (run scope: the budget's own; else what this run reserved and settled)."""
        return dict(self._ledger(invocation).used)

    async def reserve(self, invocation: Invocation, amounts: Mapping[str, float]) -> str | None:
        """Add `amounts` unless one crosses its limit: then return that limit's name."""
        if self.store is None:
            return self._ledger(invocation).reserve(amounts, self.limits)
        over = await self.store.reserve_budget(self._scope_key(invocation), amounts, self.limits)
        if over is None:
            self._ledger(invocation).adjust(amounts)
        return over

    async def adjust(self, invocation: Invocation, amounts: Mapping[str, float]) -> None:
        """Add `amounts` (negative ones release) to the use."""
        self._ledger(invocation).adjust(amounts)
        if self.store is not None:
            await self.store.adjust_budget(self._scope_key(invocation), amounts)

    # a model call: reserve, settle

    def reserve_run(
        self, invocation: Invocation, model: str, request: LlmRequest
    ) -> tuple[dict[str, float], LlmRequest]:
        """`reserve_call` for a run budget: no `await` between the check and the update."""
        ledger = self._ledger(invocation)
        amounts, room = self._worst_case(ledger.used, model, estimate_tokens(request), request.max_tokens)
        ledger.adjust(amounts)  # computed from what is left: it cannot cross
        return amounts, lowered(request, room)

    async def reserve_call(
        self, invocation: Invocation, model: str, request: LlmRequest
    ) -> tuple[dict[str, float], LlmRequest]:
        """Reserve a call's worst case: the amounts reserved, and the request with `max_tokens`
        lowered to what is left. Raises `BudgetExceededError` when it cannot be afforded."""
        if self.store is None:
            return self.reserve_run(invocation, model, request)
        prompt = estimate_tokens(request)
        for _ in range(_RACES):  # another worker may take what was left between the read and the reservation
            used = await self.used(invocation)
            amounts, room = self._worst_case(used, model, prompt, request.max_tokens)
            if await self.reserve(invocation, amounts) is None:
                return amounts, lowered(request, room)
        raise BudgetExceededError(
            self.name, "usd", 0.0, 0.0, f"budget {self.name!r}: too many races for one reservation"
        )

    def _worst_case(
        self, used: Mapping[str, float], model: str, prompt: int, asked: int | None
    ) -> tuple[dict[str, float], int | None]:
        """The amounts a call reserves and the `max_tokens` it may have (None: unbounded)."""
        limits = self.limits
        price = self._price(used, model)
        room = math.inf if asked is None else float(asked)
        binding = "max_tokens"
        for name, cap in limits.items():
            left = cap - used.get(name, 0.0)
            if name == "output_tokens":
                out = left
            elif name == "total_tokens":
                out = left - prompt
            elif name == "usd":
                out = _usd_room(left, price, prompt)
            elif (name == "model_calls" and left < 1) or (name == "input_tokens" and left < prompt):
                out = -1.0  # nothing is left of it at all
            else:
                continue
            if out < room:
                room, binding = out, name
        if room < 1:
            raise self._refusal(used, binding)
        tokens = 0 if room == math.inf else math.floor(room)
        amounts = {"model_calls": 1.0, "input_tokens": float(prompt), "output_tokens": float(tokens)}
        amounts["total_tokens"] = float(prompt + tokens)
        if price is not None:
            amounts["usd"] = prompt * price[0] + tokens * price[1]
        return amounts, None if room == math.inf else tokens

    def _price(self, used: Mapping[str, float], model: str) -> tuple[float, float] | None:
        price = self.prices.get(model)
        if price is None and "usd" in self.limits and self.unknown_model == "refuse":
            spent = used.get("usd", 0.0)
            raise BudgetExceededError(
                self.name,
                "usd",
                self.limits["usd"],
                spent,
                f"budget {self.name!r} has no price for model {model!r}",
            )
        return price

    def cost(self, model: str, usage: Usage) -> float | None:
        """What `usage` on `model` costs in USD at this budget's prices; None without a price."""
        price = self.prices.get(model)
        if price is None:
            return None
        return usage.prompt_tokens * price[0] + usage.completion_tokens * price[1]

    def _refusal(self, used: Mapping[str, float], limit: str) -> BudgetExceededError:
        allowed = self.limits.get(limit, 0.0)
        return BudgetExceededError(self.name, limit, allowed, used.get(limit, 0.0))

    def settle_run(
        self, invocation: Invocation, model: str, reserved: dict[str, float], response: LlmResponse | None
    ) -> list[BudgetWarning]:
        """`settle` for a run budget, without an `await`."""
        ledger = self._ledger(invocation)
        usage = None if response is None else response.usage
        if usage is None:  # fail closed: the reservation stays spent
            return [
                self._note(model, "output_tokens", UNREPORTED, ledger.used),
                *self._warnings(invocation, model, ledger.used),
            ]
        ledger.adjust(self._overage(model, reserved, usage))
        return self._warnings(invocation, model, ledger.used) if self._warn else []

    async def settle(
        self, invocation: Invocation, model: str, reserved: dict[str, float], response: LlmResponse | None
    ) -> list[BudgetWarning]:
        """Settle a call to its reported usage; the decisions it gives (warnings)."""
        if self.store is None:
            return self.settle_run(invocation, model, reserved, response)
        usage = None if response is None else response.usage
        notes: list[BudgetWarning] = []
        if usage is None:  # fail closed: the reservation stays spent
            notes.append(self._note(model, "output_tokens", UNREPORTED, await self.used(invocation)))
        else:
            await self.adjust(invocation, self._overage(model, reserved, usage))
        return notes + self._warnings(invocation, model, await self.used(invocation))

    def _overage(self, model: str, reserved: dict[str, float], usage: Usage) -> dict[str, float]:
        """What the call used beyond (or, negative, short of) what it reserved."""
        prompt, completion = usage.prompt_tokens, usage.completion_tokens
        overage = {
            "model_calls": 0.0,
            "input_tokens": prompt - reserved["input_tokens"],
            "output_tokens": completion - reserved["output_tokens"],
            "total_tokens": prompt + completion - reserved["total_tokens"],
        }
        if "usd" in reserved:
            overage["usd"] = (self.cost(model, usage) or 0.0) - reserved["usd"]
        return overage

    def _warnings(self, invocation: Invocation, model: str, used: Mapping[str, float]) -> list[BudgetWarning]:
        warned: set[str] | None = invocation.get_state(self._warned)
        notes: list[BudgetWarning] = []
        for name, cap in self.limits.items():
            if used.get(name, 0.0) >= self.warn_at * cap and (warned is None or name not in warned):
                if warned is None:
                    warned = set()
                    invocation.set_state(self._warned, warned)
                warned.add(name)
                notes.append(self._note(model, name, "", used))
        return notes

    def _note(self, model: str, limit: str, note: str, used: Mapping[str, float]) -> BudgetWarning:
        allowed = self.limits.get(limit, 0.0)
        return BudgetWarning(
            self._by, f"model:{model}", self.name, limit, allowed, used.get(limit, 0.0), note
        )


def lowered(request: LlmRequest, max_tokens: int | None) -> LlmRequest:
    """`request` with `max_tokens`: a copy made through `new_request`, a third of what
    `dataclasses.replace` costs (tests/limits check that it keeps every other field)."""
    if max_tokens == request.max_tokens:
        return request
    sent = new_request(
        request.instruction, request.messages, request.tools, request.stream, request.response_format
    )
    sent.model = request.model
    sent.temperature = request.temperature
    sent.tool_choice = request.tool_choice
    sent.max_tokens = max_tokens
    return sent


def _usd_room(left: float, price: tuple[float, float] | None, prompt: int) -> float:
    """How many output tokens the USD left affords after the prompt (unbounded without a price)."""
    if price is None or left == math.inf:
        return math.inf
    rest = left - prompt * price[0]
    if price[1] == 0:
        return math.inf if rest >= 0 else -1.0
    return rest / price[1]


def _decide(ctx: ModelContext, hook: str) -> None:
    """Move the warnings of the call's metered model onto the call's decisions."""
    model, attempts = ctx.model, judging.get()
    if isinstance(model, Metered) and model.notes and attempts is not None:
        by = decided_by(model.budget, hook)
        for note in model.notes:
            attempts.decided(note if note.by == by else dataclasses.replace(note, by=by))
        model.notes.clear()
