"""A Budget reserves before each model attempt and settles after: no call crosses it (docs/limits.md)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adk import LlmAgent, LlmResponse, Runner
from adk.callbacks.decisions import BudgetExceeded, BudgetWarning, FellBack, Halted
from adk.errors import ServerError
from adk.events import Event, ObjectType
from adk.limits import Budget
from adk.models.base import LlmRequest
from adk.recovery import FallbackModels
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel, call_tool
from tests._runtime import run
from tests.limits import used

pytestmark = pytest.mark.usefixtures("testing")

PRICES = {"big": (10.0, 30.0), "small": (1.0, 2.0)}


def kinds(events: list[Event]) -> list[tuple[str, tuple[Any, ...]]]:
    return [(e.object, tuple(d for d in e.decisions)) for e in events if not e.is_partial]


async def test_each_call_is_sent_with_max_tokens_lowered_to_what_is_left_and_settled_to_its_usage() -> None:
    model = ScriptedModel([used(1, 30, call_tool("echo", call_id="c1", x=1)), used(40, 20)])
    budget = Budget(total_tokens=100)
    agent = LlmAgent(name="a", model=model, tools=[echo])
    runner = Runner(agent, callbacks=[budget])
    events = await run(runner)
    first, second = (r.estimated_tokens for r in model.requests)
    # the request's own estimate (`estimated_tokens`): ceil(chars / 4) over the messages and the
    # tool's declaration, plus 4 tokens a message (one, then three)
    assert (first, second) == (31 + 4, 34 + 12)
    assert [r.max_tokens for r in model.requests] == [100 - 35, 100 - 31 - 46]  # 31 spent after the first
    invocation_report = events[-1]
    assert invocation_report.object == ObjectType.RUNNER_COMPLETION
    assert events[-2].decisions == (
        BudgetWarning("callback:Budget.after_model", "model:scripted", "budget", "total_tokens", 100.0, 91.0),
    )


async def test_a_call_that_cannot_be_afforded_is_not_made_and_the_run_ends_with_budget_exceeded() -> None:
    model = ScriptedModel([used(30, 8, call_tool("echo", call_id="c1", x=1)), used(1, 1)])
    agent = LlmAgent(name="a", model=model, tools=[echo])
    runner = Runner(agent, callbacks=[Budget(total_tokens=40, warn_at=1)])
    events = await run(runner)
    # the second (the first's 38 tokens and the tool's result, 53) would cross 40: it is not made
    assert [r.max_tokens for r in model.requests] == [40 - 35]
    last = events[-1]
    assert last.object == ObjectType.ERROR and last.error is not None
    assert (last.error.type, last.error.message) == (
        "BudgetExceededError",
        "budget 'budget' cannot afford the call: total_tokens 38 of 40",
    )
    assert last.decisions == (
        BudgetExceeded(
            "callback:Budget.on_model_error", "model:scripted", "budget", "total_tokens", 40.0, 38.0
        ),
    )
    stored = await runner.session_service.get("u", "s")
    assert stored is not None and [e.object for e in stored.events][-2:] == ["tool.response", "error"]


async def test_a_fallback_to_a_cheaper_model_is_metered_at_its_own_price() -> None:
    big, small = ScriptedModel([], name="big"), ScriptedModel([used(4, 10)], name="small")
    budget = Budget(usd=0.001, prices=PRICES, warn_at=1)
    agent = LlmAgent(name="a", model=big, callbacks=[FallbackModels([small])])
    # 104 tokens (100 of text, 4 for the message): over $0.001 on big before any output
    events = await run(Runner(agent, callbacks=[budget]), "x" * 400)
    assert big.requests == []
    # small: 104 tokens in at $1/1M = $0.000104; the $0.000896 left buys 448 tokens at $2/1M
    assert [r.max_tokens for r in small.requests] == [448]
    final = [e for e in events if e.object == ObjectType.CHAT_COMPLETION][-1]
    exceeded = BudgetExceeded("callback:Budget.on_model_error", "model:big", "budget", "usd", 0.001, 0.0)
    assert final.decisions[0] == exceeded
    assert isinstance(final.decisions[1], FellBack) and final.decisions[1].to == "model:small"


async def test_each_retry_attempt_counts_its_own_usage_once() -> None:
    model = ScriptedModel([ServerError("503"), used(1, 5)])
    budget = Budget(total_tokens=50, warn_at=1)
    agent = LlmAgent(name="a", model=model)
    seen: list[dict[str, float]] = []

    class Watch:
        def after_model(self, response: LlmResponse, ctx: Any) -> LlmResponse:
            seen.append(budget.report(ctx.invocation))
            return response

    await run(Runner(agent, callbacks=[budget, Watch()]))
    assert [r.max_tokens for r in model.requests] == [45, 45]  # the failed attempt's reservation was released
    assert seen == [{"model_calls": 1.0, "input_tokens": 1.0, "output_tokens": 5.0, "total_tokens": 6.0}]


async def test_a_model_whose_generate_raises_before_it_streams_releases_its_reservation() -> None:
    class RaisesOnCall:
        """A model whose `generate` is a plain function: the first call raises at once."""

        name = "m"

        def __init__(self) -> None:
            self.sent: list[int | None] = []

        def generate(self, request: LlmRequest) -> Any:
            self.sent.append(request.max_tokens)
            if len(self.sent) == 1:
                raise ServerError("503 before any stream")
            return ScriptedModel([used(1, 5)]).generate(request)

    model, budget, seen = RaisesOnCall(), Budget(total_tokens=50), []

    class Watch:
        def after_model(self, response: LlmResponse, ctx: Any) -> LlmResponse:
            seen.append(budget.report(ctx.invocation))
            return response

    agent = LlmAgent(name="a", model=model)
    events = await run(Runner(agent, callbacks=[budget, Watch()]))
    assert events[-1].object == ObjectType.RUNNER_COMPLETION
    assert model.sent == [45, 45]  # the first attempt's reservation was released, not kept
    assert seen == [{"model_calls": 1.0, "input_tokens": 1.0, "output_tokens": 5.0, "total_tokens": 6.0}]


async def test_a_model_that_reports_no_usage_spends_its_reservation_and_says_so() -> None:
    model = ScriptedModel(["no usage here"])
    budget = Budget(output_tokens=100)
    events = await run(Runner(LlmAgent(name="a", model=model), callbacks=[budget]))
    answer = [e for e in events if e.object == ObjectType.CHAT_COMPLETION][-1]
    note = "the model reported no usage: its reservation counts as spent"
    assert answer.decisions == (
        BudgetWarning(
            "callback:Budget.after_model", "model:scripted", "budget", "output_tokens", 100.0, 100.0, note
        ),
        BudgetWarning(
            "callback:Budget.after_model", "model:scripted", "budget", "output_tokens", 100.0, 100.0
        ),
    )


async def test_parallel_reservations_are_exact() -> None:
    budget = Budget(model_calls=3)

    async def slow(request: LlmRequest) -> LlmResponse:
        await asyncio.sleep(0)
        return used(1, 1)

    models = [ScriptedModel([slow], name=f"m{i}") for i in range(5)]
    from adk import ParallelAgent

    agent = ParallelAgent(
        name="p", sub_agents=[LlmAgent(name=f"a{i}", model=m) for i, m in enumerate(models)]
    )
    events = await run(Runner(agent, callbacks=[budget]))
    assert [len(m.requests) for m in models] == [1, 1, 1, 0, 0]  # the fourth branch's call is refused
    assert events[-1].decisions == (
        BudgetExceeded("callback:Budget.on_model_error", "model:m3", "budget", "model_calls", 3.0, 3.0),
    )


async def test_a_models_own_max_tokens_is_what_a_call_reserves_and_is_never_raised() -> None:
    # OpenAIModel(max_tokens=64) bounds every call it makes: the budget reserves those 64, not all
    # that is left, and lowers them only when less is left (a provider refuses a max_tokens above
    # its model's own limit, so raising it would fail every call).
    seen: list[dict[str, float]] = []
    budget = Budget(total_tokens=1000)

    class Report:
        async def after_model(self, response: LlmResponse, ctx: Any) -> LlmResponse:
            seen.append(budget.report(ctx.invocation))
            return response

    model = ScriptedModel([used(1, 3), used(1, 3)], max_tokens=64)
    runner = Runner(LlmAgent(name="a", model=model), callbacks=[budget, Report()])
    await run(runner, "hi", session="s1")
    assert [r.max_tokens for r in model.requests] == [64]  # its own, as it would have sent it
    assert seen == [{"model_calls": 1.0, "input_tokens": 1.0, "output_tokens": 3.0, "total_tokens": 4.0}]
    tight = Budget(total_tokens=30)
    low = ScriptedModel([used(1, 3)], max_tokens=64)
    await run(Runner(LlmAgent(name="a", model=low), callbacks=[tight]), "hi", session="s2")
    assert [r.max_tokens for r in low.requests] == [30 - 5]  # less is left than the model's own


async def test_parallel_calls_each_reserve_their_models_max_tokens_not_all_that_is_left() -> None:
    from adk import ParallelAgent

    gate = asyncio.Event()

    async def held(request: LlmRequest) -> LlmResponse:
        await gate.wait()  # both calls are in flight at once, each holding its reservation
        return used(1, 1)

    async def opens(request: LlmRequest) -> LlmResponse:
        gate.set()
        return used(1, 1)

    capped = [
        ScriptedModel([held], name="m0", max_tokens=100),
        ScriptedModel([opens], name="m1", max_tokens=100),
    ]
    agent = ParallelAgent(
        name="p", sub_agents=[LlmAgent(name=f"a{i}", model=m) for i, m in enumerate(capped)]
    )
    events = await run(Runner(agent, callbacks=[Budget(total_tokens=250)]))
    assert [[r.max_tokens for r in m.requests] for m in capped] == [[100], [100]]
    assert events[-1].object == ObjectType.RUNNER_COMPLETION

    async def slow(request: LlmRequest) -> LlmResponse:
        await asyncio.sleep(0)  # in flight while the other branch's call starts
        return used(1, 1)

    uncapped = [ScriptedModel([slow], name=f"m{i}") for i in range(2)]
    agent = ParallelAgent(
        name="p", sub_agents=[LlmAgent(name=f"a{i}", model=m) for i, m in enumerate(uncapped)]
    )
    events = await run(Runner(agent, callbacks=[Budget(total_tokens=250)]))
    # without a max_tokens anywhere, the first call reserves all that is left: the second is refused
    assert [[r.max_tokens for r in m.requests] for m in uncapped] == [[250 - 5], []]
    assert events[-1].decisions == (
        BudgetExceeded("callback:Budget.on_model_error", "model:m1", "budget", "total_tokens", 250.0, 250.0),
    )


async def test_a_tool_cap_that_is_reached_ends_the_run() -> None:
    model = ScriptedModel([call_tool("echo", call_id="c1", x=1), call_tool("echo", call_id="c2", x=2)])
    runner = Runner(LlmAgent(name="a", model=model, tools=[echo]), callbacks=[Budget(per_tool={"echo": 1})])
    events = await run(runner)
    results = [e for e in events if e.object == ObjectType.TOOL_RESPONSE]
    assert len(model.requests) == 2
    last_result = results[-1].choices[0].message
    assert last_result is not None
    assert last_result.content == "budget 'budget' refused the call to echo: tool:echo 1 of 1"
    assert results[-1].decisions == (
        BudgetExceeded("callback:Budget.before_tool", "tool:echo", "budget", "tool:echo", 1.0, 1.0),
        Halted("callback:Budget.before_tool", "tool:echo"),
    )
    assert results[0].decisions == ()
    assert events[-1].object == ObjectType.RUNNER_COMPLETION


@pytest.mark.parametrize(
    ("kwargs", "line"),
    [
        ({"usd": 0}, "Budget: usd must be a positive number, not 0"),
        ({"total_tokens": -5}, "Budget: total_tokens must be a positive number, not -5"),
        ({"model_calls": "3"}, "Budget: model_calls must be a positive number, not '3'"),
        ({"per_tool": {"pay": 0}}, "Budget: per_tool['pay'] must be a positive whole number, not 0"),
        (
            {"prices": {"m": ("1", 2)}},
            "Budget: prices['m'] must be (usd_per_1M_input, usd_per_1M_output), two numbers not below 0,"
            " not ('1', 2)",
        ),
        ({"scope": "galaxy"}, "Budget: scope must be one of 'run', 'session', 'user', 'app', not 'galaxy'"),
        ({"warn_at": 0}, "Budget: warn_at must be a number in (0, 1], not 0"),
        ({"warn_at": 1.5}, "Budget: warn_at must be a number in (0, 1], not 1.5"),
        ({"unknown_model": "free"}, "Budget: unknown_model must be 'refuse' or 'tokens_only', not 'free'"),
    ],
)
def test_bad_input_is_one_line_naming_the_argument(kwargs: dict[str, Any], line: str) -> None:
    with pytest.raises(ValueError, match=r"^Budget: ") as raised:
        Budget(**kwargs)
    assert str(raised.value) == line


def echo(x: int) -> int:
    """Echo x."""
    return x


def test_budget_decisions_round_trip_through_event_json() -> None:
    decisions = (
        BudgetWarning("callback:Budget.after_model", "model:m", "budget", "usd", 1.0, 0.8),
        BudgetExceeded("callback:Budget.on_model_error", "model:m", "budget", "usd", 1.0, 0.99),
    )
    event = Event.new("inv", "agent", decisions=decisions)
    assert Event.model_validate_json(event.model_dump_json()).decisions == decisions


async def test_a_user_budget_in_the_store_holds_across_runs_and_sessions() -> None:
    store = InMemorySessionService()
    budget = Budget(model_calls=2, scope="user", store=store)
    model = ScriptedModel([used(1, 1), used(1, 1)])
    runner = Runner(LlmAgent(name="a", model=model), session_service=store, callbacks=[budget])
    for session in ("s1", "s2", "s3"):
        await run(runner, session=session)
    assert len(model.requests) == 2
    assert await store.budget_used("budget:user:u") == {
        "model_calls": 2.0,
        "input_tokens": 2.0,
        "output_tokens": 2.0,
        "total_tokens": 4.0,
    }
    with pytest.raises(ValueError, match=r"^Budget: scope='user' needs store="):
        Budget(model_calls=2, scope="user")
