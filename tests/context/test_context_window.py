"""A model that says its context (`context_window`) stands in for an agent's `max_context_tokens`;
the agent's setting wins."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from adk.agents import LlmAgent
from adk.compaction import SUMMARY, Compact
from adk.errors import ContextOverflowError
from adk.events import ObjectType
from adk.models.openai import OpenAIModel
from adk.recovery import set_testing
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests.context.support import WORDS, said, turn

Q = [f"q{n} {WORDS}" for n in range(6)]


@pytest.fixture(autouse=True)
def no_waits() -> Iterator[None]:
    with set_testing(True):
        yield


async def three_turns(runner: Runner) -> None:
    for q in Q[1:4]:
        await turn(runner, q)


async def test_a_compact_starts_at_the_models_context_window() -> None:
    summarizer = ScriptedModel(["S1"], name="summarizer")
    model = ScriptedModel(["a1", "a2", "a3"], context_window=150)
    await three_turns(
        Runner(LlmAgent("a", model=model, callbacks=[Compact(keep_last=1, summarize=summarizer)]))
    )

    # [q1, a1, q2, a2, q3] is 174 tokens > 150: the first turn is folded.
    assert said(model.requests[2]) == [
        f"user: {SUMMARY}S1",
        f"user: {Q[2]}",
        "assistant: a2",
        f"user: {Q[3]}",
    ]


async def test_the_agents_max_context_tokens_wins_over_the_models_window() -> None:
    summarizer = ScriptedModel([], name="summarizer")
    model = ScriptedModel(["a1", "a2", "a3"], context_window=150)
    agent = LlmAgent(
        "a", model=model, callbacks=[Compact(keep_last=1, summarize=summarizer)], max_context_tokens=400
    )
    runner = Runner(agent)
    await three_turns(runner)

    assert len(model.requests[2].messages) == 5 and summarizer.requests == []
    session = await runner.session_service.get("u", "s")
    assert session is not None and not [e for e in session.events if e.object == ObjectType.COMPACTION]


async def test_the_default_recovery_keeps_just_enough_turns_for_the_models_window() -> None:
    refused = ContextOverflowError("too long", status_code=400)
    model = ScriptedModel(["a1", "a2", refused, "a3"], context_window=60)
    await three_turns(Runner(LlmAgent("a", model=model)))

    # Without the window the older half would be kept ([q2, a2, q3], 115 tokens); 60 fits q3 only.
    assert said(model.requests[3]) == [f"user: {Q[3]}"]


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (
            lambda: OpenAIModel("m", base_url="http://127.0.0.1:1/v1", context_window=0),
            "OpenAIModel('m'): context_window must be more than 0, got 0",
        ),
        (
            lambda: LlmAgent(
                "a",
                model=ScriptedModel([], context_window=8192),
                callbacks=[Compact(threshold_tokens=9000)],
            ),
            "agent 'a': Compact(keep_last=2, summarize=None, drop_tool_results=False, threshold_tokens=9000)"
            " starts past the model's context (model 'scripted' context_window=8192)",
        ),
    ],
)
def test_a_window_that_cannot_work_is_refused_where_it_is_made(make: object, line: str) -> None:
    with pytest.raises(ValueError, match=re.escape(line)) as info:
        make()  # type: ignore[operator]
    assert str(info.value) == line


def test_an_openai_model_says_the_window_it_was_given() -> None:
    assert OpenAIModel("m", base_url="http://127.0.0.1:1/v1", context_window=512).context_window == 512
    assert OpenAIModel("m", base_url="http://127.0.0.1:1/v1").context_window is None
