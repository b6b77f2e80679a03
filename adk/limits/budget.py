"""`Budget`: a ready-made callback whose limits no call crosses (docs/limits.md).

It is a model meter (adk.agents.metering): as each attempt of every model starts, the model
call asks it to reserve the attempt's worst case (the prompt's tokens, as the request estimates
them, `LlmRequest.estimated_tokens`, plus the `max_tokens` it allows), and it lowers the
request's `max_tokens` to what is left; as the attempt ends, the reservation is settled to the
usage the model reported (`adk.limits.metered.Reservation`). A call it cannot afford is not
made: a `BudgetExceededError` goes to `on_model_error`, and unrecovered ends the run with a
`BudgetExceeded` decision. Tool calls are counted in `before_tool`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from adk.callbacks.decisions import BudgetExceeded, BudgetWarning
from adk.callbacks.registry import decided_by
from adk.callbacks.results import Cont, Halt, Raise
from adk.errors import BudgetExceededError
from adk.events import Usage
from adk.limits.ledger import RunUse
from adk.limits.metered import Reservation
from adk.limits.options import LIMITS, Scope, UnknownModel, check_limits, check_options, check_prices
from adk.models.base import LlmRequest, with_max_tokens
from adk.recovery.attempts import judging
from adk.sessions.budgets import BudgetStore, crossed

if TYPE_CHECKING:
    from adk.context import Invocation, ModelContext, ToolContext

__all__ = ["Budget"]

_RACES = 16
"""How many times a stored reservation is recomputed when another worker changed the use first."""

_ROOM = ("total_tokens", "input_tokens", "output_tokens", "usd", "model_calls")
"""The limits that bound a model call, in the order a tie between them names the first."""


class Budget:
    """Limits on tokens, cost, model calls and tool calls for a run, session, user or app."""

    adds_decisions: ClassVar[bool] = True
    """Its hooks add decisions to the call's `Attempts` (`judging`): the envelope sets it for them."""

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
        self._priced = bool(self.prices)
        check_options(scope, unknown_model, warn_at, store)
        self.unknown_model = unknown_model
        self.scope = scope
        self.warn_at = float(warn_at)
        self.store = store if scope != "run" else None
        self.name = name
        self._key = f"adk.limits.budget:{name}:{id(self)}"
        self._caps = tuple(self.limits.get(name) for name in _ROOM)
        """The limits of `_ROOM`, None for one not set."""
        self._bounded = any(cap is not None for cap in self._caps)
        self._lines = tuple((name, self.warn_at * cap) for name, cap in self.limits.items())
        """Where each limit's warning is due."""
        tools_capped = any(name not in _ROOM for name in self.limits)
        self.quiet_lines = tuple(
            -math.inf if tools_capped else math.inf if cap is None else self.warn_at * cap
            for cap in self._caps
        )
        """The warning lines of `_ROOM`'s limits, in its order (inf: none): a settlement below them
        all warns of nothing (`Reservation.settle`). When the budget caps tools they are -inf:
        every settlement checks every limit."""
        self._by = decided_by(self, "after_model")
        """Who the warnings are by: they go on the call's event as its attempt is settled, which
        is after the model answered (the name `after_model` keeps the decision's meaning)."""

    def __repr__(self) -> str:
        return f"Budget({self.name!r}, scope={self.scope!r}, limits={self.limits})"

    # the hooks: the model call meters each attempt through `reserve_attempt` (adk.agents.metering)

    async def reserve_attempt(self, invocation: Invocation, model: str, request: LlmRequest) -> Reservation:
        """Reserve an attempt's worst case and lower its `max_tokens` to what is left; a
        `BudgetExceededError` (to `on_model_error`) when it cannot be afforded at all."""
        use = self._use(invocation)
        if self.store is not None:
            return await self._reserve_stored(invocation, use, model, request)
        # the run's use: checked and taken without an await between (parallel branches)
        prompt = float(request.estimated_tokens)  # a float: no int to convert in each sum below
        price = self.prices.get(model)
        if price is None:
            self._unpriced(use, model)
        tokens = self._room(use, price, prompt, request.max_tokens) if self._bounded else request.max_tokens
        reserved = Reservation(
            self, invocation, use, model, with_max_tokens(request, tokens), prompt, tokens, price
        )
        # the reservation taken: the run's use, written out
        use.model_calls += 1.0
        use.input_tokens += prompt
        use.output_tokens += reserved.tokens
        use.usd += reserved.usd
        return reserved

    async def _reserve_stored(
        self, invocation: Invocation, use: RunUse, model: str, request: LlmRequest
    ) -> Reservation:
        prompt = request.estimated_tokens
        lost = ""  # the limit the last race was lost on
        for _ in range(_RACES):  # another worker may take what was left between the read and the reservation
            used = RunUse(use.priced, await self.used(invocation))
            price = self.prices.get(model)
            if price is None:
                self._unpriced(used, model)
            tokens = self._room(used, price, prompt, request.max_tokens)
            sent = with_max_tokens(request, tokens)
            reserved = Reservation(self, invocation, use, model, sent, prompt, tokens, price)
            if (over := await self.reserve(invocation, reserved.amounts())) is None:
                return reserved
            lost = over
        why = f"budget {self.name!r}: {lost} lost {_RACES} races for one reservation to other workers"
        raise BudgetExceededError(self.name, lost, self.limits[lost], used.get(lost), why)

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        """Record a refusal of this budget's as a `BudgetExceeded` decision; pass the error on."""
        attempts = judging.get()
        if isinstance(error, BudgetExceededError) and error.budget == self.name and attempts is not None:
            by, target = decided_by(self, "on_model_error"), f"model:{ctx.model.name}"
            attempts.decided(BudgetExceeded(by, target, self.name, error.limit, error.allowed, error.spent))
        return Raise(error)

    async def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:
        """Count the tool call; over a cap, it does not run and the run ends."""
        tool = ctx.tool.name
        amounts = {"tool_calls": 1.0, f"tool:{tool}": 1.0}
        if ctx.tool.requires_approval and not ctx.approved:  # it waits: counted once approved, not twice
            over = crossed(await self.used(ctx.invocation), amounts, self.limits)
        else:  # a call that a resumed run makes again, on any worker, is counted once in a store
            once = None if self.store is None else ctx.idempotency_key
            over = await self.reserve(ctx.invocation, amounts, once=once)
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

    # the use: the run's, on the invocation, or the store's

    def _use(self, invocation: Invocation) -> RunUse:
        use = invocation.get_state(self._key)
        if use is None:
            use = RunUse(self._priced)
            invocation.set_state(self._key, use)
        return use  # type: ignore[no-any-return]  # only this budget sets its key

    def _scope_key(self, invocation: Invocation) -> str:
        session = invocation.session
        match self.scope:
            case "session":  # the user id's length first: ("a:b", "c") and ("a", "b:c") stay apart
                user = session.user_id
                return f"{self.name}:session:{len(user)}:{user}:{session.id}"
            case "user":
                return f"{self.name}:user:{session.user_id}"
            case _:
                return f"{self.name}:app"

    async def used(self, invocation: Invocation) -> dict[str, float]:
        """What this budget has used in `invocation`'s scope: spent plus reserved, per limit."""
        if self.store is None:
            return self._use(invocation).as_dict()
        return await self.store.budget_used(self._scope_key(invocation))

    def report(self, invocation: Invocation) -> dict[str, float]:
        """This run's use (run scope: the budget's own; else what this run reserved and settled)."""
        return self._use(invocation).as_dict()

    async def reserve(
        self, invocation: Invocation, amounts: Mapping[str, float], once: str | None = None
    ) -> str | None:
        """Add `amounts` unless one crosses its limit: then return that limit's name. With a store,
        `once` names the reservation: made already, by any worker, it is not made again (None)."""
        if self.store is None:
            return self._use(invocation).reserve(amounts, self.limits)
        over = await self.store.reserve_budget(self._scope_key(invocation), amounts, self.limits, once)
        if over is None:
            self._use(invocation).add(amounts)
        return over

    async def adjust(self, invocation: Invocation, amounts: Mapping[str, float]) -> None:
        """Add `amounts` (negative ones release) to the use."""
        self._use(invocation).add(amounts)
        if self.store is not None:
            await self.store.adjust_budget(self._scope_key(invocation), amounts)

    def _room(
        self, used: RunUse, price: tuple[float, float] | None, prompt: float, asked: int | None
    ) -> int | None:
        """The `max_tokens` a call may have (None: unbounded): what the request asks, lowered to
        what each limit has left; a `BudgetExceededError` when not one token is left."""
        room, binding = math.inf if asked is None else float(asked), "max_tokens"
        total, inputs, output, usd, calls = self._caps
        # written out, limit by limit in `_ROOM`'s order: a loop costs twice as much
        if total is not None and (out := total - used.input_tokens - used.output_tokens - prompt) < room:
            room, binding = out, "total_tokens"
        if inputs is not None and inputs - used.input_tokens < prompt and room > -1.0:
            room, binding = -1.0, "input_tokens"  # the prompt alone crosses it
        if output is not None and (out := output - used.output_tokens) < room:
            room, binding = out, "output_tokens"
        if usd is not None and price is not None:  # without a price, USD bounds no token
            left = usd - used.usd - prompt * price[0]  # after the prompt: output tokens at price[1]
            out = left / price[1] if price[1] else math.inf if left >= 0.0 else -1.0
            if out < room:
                room, binding = out, "usd"
        if calls is not None and calls - used.model_calls < 1.0 and room > -1.0:
            room, binding = -1.0, "model_calls"
        if room < 1.0:
            raise self._refusal(used, binding)
        return None if room == math.inf else math.floor(room)

    def _unpriced(self, used: RunUse, model: str) -> None:
        """Refuse a call of a model without a price, when `usd` is limited and such are refused."""
        if "usd" in self.limits and self.unknown_model == "refuse":
            raise BudgetExceededError(
                self.name,
                "usd",
                self.limits["usd"],
                used.usd,
                f"budget {self.name!r} has no price for model {model!r}",
            )

    def cost(self, model: str, usage: Usage) -> float | None:
        """What `usage` on `model` costs in USD at this budget's prices; None without a price."""
        price = self.prices.get(model)
        if price is None:
            return None
        return usage.prompt_tokens * price[0] + usage.completion_tokens * price[1]

    def _refusal(self, used: RunUse, limit: str) -> BudgetExceededError:
        allowed = self.limits.get(limit, 0.0)
        return BudgetExceededError(self.name, limit, allowed, used.get(limit))

    def warnings(self, model: str, used: RunUse, run: RunUse) -> list[BudgetWarning]:
        """A warning for each limit of which `warn_at` is `used`, once per limit and `run`."""
        notes: list[BudgetWarning] = []
        for name, line in self._lines:
            if name not in run.warned and used.get(name) >= line:
                run.warned += (name,)
                notes.append(self.note(model, name, "", used))
        return notes

    def note(self, model: str, limit: str, note: str, used: RunUse) -> BudgetWarning:
        """A `BudgetWarning` on `limit`, by this budget, about a call of `model`."""
        allowed = self.limits.get(limit, 0.0)
        return BudgetWarning(self._by, f"model:{model}", self.name, limit, allowed, used.get(limit), note)
