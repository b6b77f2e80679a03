"""`Compact`: what it folds, what the model then receives, and what the session keeps."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from adk.agents import LlmAgent
from adk.callbacks.decisions import Compacted
from adk.cli.display import Display
from adk.compaction import DROPPED, SUMMARY, Compact
from adk.events import Event, Message, ObjectType
from adk.models.base import estimate_tokens
from adk.runner import Runner
from adk.sessions import InMemorySessionService, SqliteSessionService
from adk.testing import ScriptedModel, call_tool
from tests.context.support import WORDS, said, turn

Q = [f"q{n} {WORDS}" for n in range(6)]
"""User messages of 203 characters: 51 tokens by the character rule, 55 with the message's own."""


async def test_older_turns_are_summarised_stored_and_read_from_the_compaction_on(tmp_path: Path) -> None:
    store = SqliteSessionService(tmp_path / "s.sqlite3")
    summarizer = ScriptedModel(["S1", "S2"], name="summarizer")
    model = ScriptedModel(["a1", "a2", "a3", "a4"])
    compact = Compact(keep_last=1, summarize=summarizer, threshold_tokens=150)
    runner = Runner(LlmAgent("a", model=model, callbacks=[compact]), session_service=store)
    for q in Q[1:4]:
        events = await turn(runner, q)

    # The third turn passed 150 tokens: the turn before the last whole one was folded.
    s1 = SUMMARY + "S1"
    assert said(model.requests[2]) == [f"user: {s1}", f"user: {Q[2]}", "assistant: a2", f"user: {Q[3]}"]
    assert said(summarizer.requests[0]) == [f"user: user: {Q[1]}\nassistant: a1"]
    assert [(e.author, e.object) for e in events] == [
        ("user", "chat.completion"),
        ("a", "compaction"),  # stored before the response of the call it shortened
        ("a", "chat.completion"),
        ("a", "runner.completion"),
    ]
    session = await store.get("u", "s")
    assert session is not None
    compactions = [e for e in session.events if e.object == ObjectType.COMPACTION]
    assert len(compactions) == 1 and [c.message for c in compactions[0].choices] == [Message.user(s1)]
    whole = [
        Message.user(Q[1]),
        Message.assistant("a1"),
        Message.user(Q[2]),
        Message.assistant("a2"),
        Message.user(Q[3]),
    ]
    before = estimate_tokens(whole)  # 174 > 150
    q2_event = next(e for e in session.events if e.content == Q[2])
    assert compactions[0].decisions == (
        Compacted(
            "callback:Compact.before_model",
            "model:scripted",
            folded=2,
            tokens_saved=before - estimate_tokens(model.requests[2].messages),
            kept_from=q2_event.id,
        ),
    )
    # Nothing was deleted: every user message is still stored, before the compaction.
    assert [e.content for e in session.events if e.author == "user"] == Q[1:4]

    # Another worker reads the same store: its history starts at the compaction; the fourth turn
    # passes the threshold again, and the summary is folded with the turn after it.
    other = Runner(
        LlmAgent("a", model=model, callbacks=[compact]),
        session_service=SqliteSessionService(tmp_path / "s.sqlite3"),
    )
    await turn(other, Q[4])
    assert said(summarizer.requests[1]) == [f"user: user: {s1}\nuser: {Q[2]}\nassistant: a2"]
    assert said(model.requests[3]) == [
        f"user: {SUMMARY}S2",
        f"user: {Q[3]}",
        "assistant: a3",
        f"user: {Q[4]}",
    ]
    model.assert_done()


async def test_a_compaction_in_the_middle_of_a_turn_keeps_each_call_with_its_result() -> None:
    lookup_calls: list[str] = []

    def lookup(q: str) -> str:
        lookup_calls.append(q)
        return "r" * 400

    model = ScriptedModel(["a1", call_tool("lookup", q="x"), "a2"])
    compact = Compact(keep_last=0, threshold_tokens=150)
    runner = Runner(LlmAgent("a", model=model, tools=[lookup], callbacks=[compact]))
    await turn(runner, Q[1])
    await turn(runner, Q[2])

    # The second call of the second turn passes 150 tokens: the first turn is dropped (no summary
    # model), and the current turn, its call and result together, stays whole.
    assert said(model.requests[1]) == [f"user: {Q[1]}", "assistant: a1", f"user: {Q[2]}"]
    assert said(model.requests[2]) == [f"user: {Q[2]}", "assistant:  -> lookup", f"tool: {'r' * 400}"]
    session = await runner.session_service.get("u", "s")
    assert session is not None
    [compaction] = [e for e in session.events if e.object == ObjectType.COMPACTION]
    assert compaction.choices == [] and session.history("a") == [
        m for r in model.requests[2:] for m in r.messages
    ] + [Message.assistant("a2")]


async def test_old_tool_results_are_dropped_first_and_that_is_not_stored() -> None:
    def lookup(q: str) -> str:
        return "r" * 600

    model = ScriptedModel([call_tool("lookup", q="x"), "a1", "a2"])
    compact = Compact(keep_last=0, drop_tool_results=True, threshold_tokens=100)
    runner = Runner(
        LlmAgent("a", model=model, tools=[lookup], callbacks=[compact]),
        session_service=InMemorySessionService(),
    )
    await turn(runner, "first")
    await turn(runner, "second")

    assert said(model.requests[2]) == [
        "user: first",
        "assistant:  -> lookup",
        f"tool: {DROPPED}",
        "assistant: a1",
        "user: second",
    ]
    session = await runner.session_service.get("u", "s")
    assert session is not None and not [e for e in session.events if e.object == ObjectType.COMPACTION]


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (lambda: Compact(threshold_tokens=0), "Compact: threshold_tokens must be more than 0, got 0"),
        (lambda: Compact(keep_last=-1), "Compact: keep_last must be 0 or more, got -1"),
        (
            lambda: LlmAgent("a", model=ScriptedModel([]), max_context_tokens=0),
            "agent 'a': max_context_tokens must be more than 0, got 0",
        ),
        (
            lambda: LlmAgent(
                "a",
                model=ScriptedModel([]),
                callbacks=[Compact(threshold_tokens=9000)],
                max_context_tokens=8192,
            ),
            "agent 'a': Compact(keep_last=2, summarize=None, drop_tool_results=False, threshold_tokens=9000)"
            " starts past the model's context (max_context_tokens=8192)",
        ),
    ],
)
def test_a_threshold_that_cannot_work_is_refused_where_it_is_made(make: object, line: str) -> None:
    with pytest.raises(ValueError, match=re.escape(line)) as info:
        make()  # type: ignore[operator]
    assert str(info.value) == line


async def test_the_compaction_event_round_trips_and_the_cli_shows_what_it_folded() -> None:
    model = ScriptedModel(["a1", "a2"])
    runner = Runner(LlmAgent("a", model=model, callbacks=[Compact(keep_last=0, threshold_tokens=100)]))
    await turn(runner, Q[1])
    events = await turn(runner, Q[2])

    [compaction] = [e for e in events if e.object == ObjectType.COMPACTION]
    assert Event.model_validate_json(compaction.model_dump_json()) == compaction
    out = io.StringIO()
    Display(out, io.StringIO(), color=False).show(compaction)
    saved = estimate_tokens(
        [Message.user(Q[1]), Message.assistant("a1"), Message.user(Q[2])]
    ) - estimate_tokens([Message.user(Q[2])])
    assert (
        out.getvalue()
        == f"  ⇊ Compact.before_model folded 2 message(s) before model scripted, {saved} tokens saved\n"
    )
