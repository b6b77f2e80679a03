"""The summary model's call is an envelope of its own: its hooks run, its attempts are retried as
its policy says, and what they decided is stored with the `Compacted` decision."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import tenacity

from adk.agents import LlmAgent
from adk.callbacks.decisions import Compacted, Retried
from adk.callbacks.results import Cont, Raise
from adk.compaction import SUMMARY, Compact
from adk.context import ModelContext
from adk.errors import ContextOverflowError
from adk.events import LlmResponse, Message, ObjectType
from adk.models.base import estimate_tokens
from adk.recovery import RetryPolicy, set_testing
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests.context.support import WORDS, said, turn

Q = [f"q{n} {WORDS}" for n in range(6)]
NO_WAIT = tenacity.wait_none()


@pytest.fixture(autouse=True)
def no_waits() -> Iterator[None]:
    with set_testing(True):
        yield


class Trace:
    """Writes each model hook it sees into `lines`, under its `label`."""

    def __init__(self, label: str, lines: list[str]) -> None:
        self.label, self.lines = label, lines

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        self.lines.append(f"{self.label} before_model {ctx.model.name} attempt {ctx.attempt}")
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self.lines.append(f"{self.label} after_model {ctx.model.name}: {response.content}")
        return response

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        self.lines.append(f"{self.label} on_model_error {ctx.model.name} attempt {ctx.attempt}: {error!r}")
        return Raise(error)


async def test_the_summary_runs_its_own_hooks_and_is_retried_by_its_own_policy() -> None:
    lines: list[str] = []
    summarizer = ScriptedModel([ConnectionError("reset"), "S1"], name="summarizer")
    model = ScriptedModel(["a1", "a2", "a3"])
    compact = Compact(
        keep_last=1,
        summarize=summarizer,
        threshold_tokens=150,
        callbacks=[Trace("summary", lines)],
        retry_policy=RetryPolicy(wait=NO_WAIT),
    )
    runner = Runner(LlmAgent("a", model=model, callbacks=[Trace("agent", lines), compact]))
    await turn(runner, Q[1])
    await turn(runner, Q[2])
    lines.clear()
    events = await turn(runner, Q[3])

    # The agent's hooks do not see the summary's call; the summary's see its failure, the policy's
    # retry, then the summary; the agent's call goes on with it.
    assert lines == [
        "agent before_model scripted attempt 1",
        "summary before_model summarizer attempt 1",
        "summary on_model_error summarizer attempt 1: ConnectionError('reset')",
        "summary after_model summarizer: S1",
        "agent after_model scripted: a3",
    ]
    assert len(summarizer.requests) == 2 and said(summarizer.requests[1]) == said(summarizer.requests[0])
    assert said(model.requests[2]) == [
        f"user: {SUMMARY}S1",
        f"user: {Q[2]}",
        "assistant: a2",
        f"user: {Q[3]}",
    ]
    [compaction] = [e for e in events if e.object == ObjectType.COMPACTION]
    whole = [*model.requests[1].messages, Message.assistant("a2"), Message.user(Q[3])]  # 227 tokens
    assert compaction.decisions == (
        Retried(
            "callback:RetryPolicy.on_model_error", "model:summarizer", 2, 0.0, "ConnectionError", "reset"
        ),
        Compacted(
            "callback:Compact.before_model",
            "model:scripted",
            folded=2,
            tokens_saved=estimate_tokens(whole) - estimate_tokens(model.requests[2].messages),
            kept_from=compaction.decisions[-1].kept_from,  # type: ignore[union-attr]
        ),
    )


async def test_a_summary_that_fails_past_its_bound_leaves_the_request_and_an_overflow_names_both() -> None:
    lines: list[str] = []
    summarizer = ScriptedModel([ConnectionError("reset")] * 2, name="summarizer")
    model = ScriptedModel(["a1", "a2", ContextOverflowError("too long", status_code=400)])
    compact = Compact(
        keep_last=0,
        summarize=summarizer,
        threshold_tokens=150,
        callbacks=[Trace("summary", lines)],
        retry_policy=RetryPolicy(stop=tenacity.stop_after_attempt(2), wait=NO_WAIT),
    )
    runner = Runner(LlmAgent("a", model=model, callbacks=[compact]))
    await turn(runner, Q[1])
    await turn(runner, Q[2])
    events = await turn(runner, Q[3])

    assert lines == [
        "summary before_model summarizer attempt 1",
        "summary on_model_error summarizer attempt 1: ConnectionError('reset')",
        "summary on_model_error summarizer attempt 2: ConnectionError('reset')",
        "summary on_model_error summarizer attempt 2:"
        " RetriesExhausted('gave up after 2 attempt(s): ConnectionError: reset')",
    ]
    assert said(model.requests[2]) == [
        f"user: {Q[1]}",
        "assistant: a1",
        f"user: {Q[2]}",
        "assistant: a2",
        f"user: {Q[3]}",
    ]
    error = events[-1].error
    assert error is not None and error.type == "ContextOverflowError"
    assert error.message == (
        "too long; and compaction could not shorten it: the summary model failed:"
        " RetriesExhausted: gave up after 2 attempt(s): ConnectionError: reset"
    )
    assert len(summarizer.requests) == 2


async def test_a_budget_meters_the_summary_call_as_the_agent_s_own() -> None:
    # One model call a run: the third turn's summary takes it, so its own call is not made.
    from adk.limits import Budget

    summarizer = ScriptedModel(["S1"], name="summarizer")
    model = ScriptedModel(["a1", "a2"])
    compact = Compact(keep_last=1, summarize=summarizer, threshold_tokens=150)
    runner = Runner(LlmAgent("a", model=model, callbacks=[Budget(model_calls=1), compact]))
    for q in Q[1:3]:
        assert (await turn(runner, q))[-1].object == ObjectType.RUNNER_COMPLETION
    events = await turn(runner, Q[3])
    summarizer.assert_done()
    model.assert_done()  # the third turn's call was refused: only a1 and a2 were asked for
    assert events[-1].object == ObjectType.ERROR
    assert events[-1].error is not None and events[-1].error.type == "BudgetExceededError"
