"""A conversation that outgrows a real server's context (llama.cpp started with `--n_ctx 512`, as
.ci/live does) goes on: the server's own refusal is recovered, by a `Compact` (its fold stored) or
by the default drop of the oldest turns; or a `Compact` with a threshold folds before the server
refuses. Checked for shape: a tiny model's words are noise."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk import LlmAgent, ObjectType, Runner
from adk.callbacks.decisions import Compacted, Retried
from adk.compaction import Compact
from adk.errors import ContextOverflowError
from adk.events import Event
from adk.models.openai import OpenAIModel
from adk.sessions import SqliteSessionService

pytestmark = pytest.mark.live

TOPICS = ["rivers", "mountains", "forests", "deserts"]
ANSWERED = ["chat.completion", "chat.completion", "runner.completion"]
"""A turn that went through at once: the user's message, the answer, the run's end."""
RECOVERED = ["chat.completion", "attempt.failed", "chat.completion", "runner.completion"]
"""A turn whose first call the server refused for its length, and whose retry it answered."""


def question(n: int) -> str:
    """A user message of about 170 tokens: three of them, with their answers, pass 512."""
    facts = " ".join(
        f"Fact {i} about {TOPICS[n]}: they shape the land and the lives around them." for i in range(10)
    )
    return f"Turn {n}. {facts} Answer in one word."


async def converse(runner: Runner) -> list[list[Event]]:
    """Four turns in one session: each turn's events."""
    return [[e async for e in runner.run("live", "s", question(n))] for n in range(len(TOPICS))]


def objects(events: list[Event]) -> list[str]:
    return [e.object for e in events if e.object != ObjectType.COMPACTION]


def overflow_retried(event: Event, by: str) -> None:
    """`event` carries one decision: a retry after the server's overflow, by the hook `by`."""
    [decision] = event.decisions
    assert isinstance(decision, Retried)
    assert (decision.by, decision.error) == (by, ContextOverflowError.__name__)
    assert "longer than the model's context (HTTP 400)" in decision.message


def compacted(events: list[Event]) -> list[Compacted]:
    return [
        d
        for e in events
        if e.object == ObjectType.COMPACTION
        for d in e.decisions
        if isinstance(d, Compacted)
    ]


async def test_the_servers_overflow_is_answered_by_compact_and_the_fold_is_stored(
    small_model: OpenAIModel, tmp_path: Path
) -> None:
    store = SqliteSessionService(tmp_path / "s.sqlite3")
    agent = LlmAgent("chat", model=small_model, callbacks=[Compact(keep_last=1)])  # no threshold: on overflow
    turns = await converse(Runner(agent, session_service=store))

    # The third turn passed 512 tokens: the server refused it, the two turns before were folded
    # (dropped: no summary model), and the retry went through.
    assert [objects(t) for t in turns] == [ANSWERED, ANSWERED, RECOVERED, ANSWERED]
    failed, answer = turns[2][1], turns[2][3]
    overflow_retried(failed, "callback:Compact.on_model_error")
    assert answer.decisions == failed.decisions
    [fold] = compacted(turns[2])
    assert (fold.by, fold.folded) == ("callback:Compact.on_model_error", 4)
    assert fold.tokens_saved > 0
    # The fourth turn went through at once: its history starts from the stored fold (whole, it
    # would pass 512 again).
    session = await store.get("live", "s")
    assert session is not None
    # The refused attempt is not stored; the fold is, before the answer of the call it shortened.
    assert [e.object for e in session.events] == [
        *ANSWERED * 2,
        "chat.completion",
        "compaction",
        *ANSWERED[1:],
        *ANSWERED,
    ]
    assert compacted(session.events) == [fold]
    assert [m.content for m in session.history("chat") if m.role == "user"] == [question(2), question(3)]


async def test_a_compact_with_a_threshold_folds_before_the_server_refuses(
    small_model: OpenAIModel, tmp_path: Path
) -> None:
    store = SqliteSessionService(tmp_path / "s.sqlite3")
    agent = LlmAgent("chat", model=small_model, callbacks=[Compact(keep_last=1, threshold_tokens=400)])
    turns = await converse(Runner(agent, session_service=store))

    assert [objects(t) for t in turns] == [ANSWERED, ANSWERED, ANSWERED, ANSWERED]
    before_model = ["callback:Compact.before_model"]
    assert [[d.by for d in compacted(t)] for t in turns] == [[], [], before_model, before_model]
    session = await store.get("live", "s")
    assert session is not None
    assert [e.object for e in session.events].count(ObjectType.COMPACTION) == 2


@pytest.mark.parametrize("told", ["agent", "model"])
async def test_without_compact_the_default_recovery_drops_the_oldest_turns_of_each_call(
    small_model: OpenAIModel, told: str
) -> None:
    if told == "agent":
        agent = LlmAgent("chat", model=small_model, max_context_tokens=512)
    else:  # llama-cpp-python's server does not say its n_ctx (/v1/models lists ids only): told here
        small_model.context_window = 512  # as OpenAIModel(..., context_window=512)
        agent = LlmAgent("chat", model=small_model)
    turns = await converse(Runner(agent))

    # Nothing is stored: the fourth turn overflows again, and is recovered again.
    assert [objects(t) for t in turns] == [ANSWERED, ANSWERED, RECOVERED, RECOVERED]
    for turn in turns[2:]:
        overflow_retried(turn[1], "callback:DropOldestTurns.on_model_error")
    assert all(e.object != ObjectType.COMPACTION for t in turns for e in t)
