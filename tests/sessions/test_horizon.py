"""A run's copy of a session starts at the store's horizon: after a compaction, a worker that did
not hold the session reads only the events its readers need, and every reader sees what it would
see in the whole session (docs/decisions.md, "A run reads a session from its horizon")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from adk import Approve, LlmAgent, Runner
from adk.agents.transfer import active_agent
from adk.approvals import waiting_calls
from adk.callbacks.decisions import Compacted
from adk.compaction import SUMMARY, Compact
from adk.events import Choice, Event, Message, ObjectType
from adk.runner_start import unfinished
from adk.sessions import SessionService
from adk.sessions.base import Session
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import ScriptedModel
from adk.web import create_web_app
from tests._runtime import Tool, call, calls
from tests.context.support import WORDS, said, turn
from tests.test_approvals import LargeNeedApproval

Opener = Callable[[], SessionService]
Q = [f"q{n} {WORDS}" for n in range(6)]
"""User messages of 51 tokens: the third turn passes 150 and folds the first (keep_last=1)."""
S1 = SUMMARY + "S1"


def agent(script: list[Any], **kw: Any) -> tuple[LlmAgent, ScriptedModel]:
    model = ScriptedModel(script)
    compact = Compact(keep_last=1, summarize=ScriptedModel(["S1"], name="summarizer"), threshold_tokens=150)
    return LlmAgent("a", model=model, callbacks=[compact], **kw), model


async def both(store: SessionService, owner: str = "w") -> tuple[Session, Session]:
    """A run's copy of session s (the lease let go again) and the whole session."""
    cut = await store.acquire("u", "s", owner)
    await store.release(cut)
    whole = await store.get("u", "s")
    assert whole is not None and whole.skipped == 0
    return cut, whole


def same_readings(cut: Session, whole: Session) -> None:
    """`cut` is `whole` from its horizon on, and every branch's history reads the same."""
    assert cut.events == whole.events[cut.skipped :] and cut.last_seq == whole.last_seq
    for branch in {e.branch for e in whole.events} | {""}:
        assert cut.history(branch) == whole.history(branch), branch


async def test_a_new_worker_reads_from_the_event_the_compaction_kept_and_the_turn_is_the_same(
    worker: Opener,
) -> None:
    first, _ = agent(["a1", "a2", "a3"])
    for q in Q[1:4]:
        await turn(Runner(first, session_service=worker()), q)

    cut, whole = await both(worker())
    # The compaction (turn 3) kept turn 2: q2's event is the first a run reads; q1 and a1 are past.
    assert [e.content for e in whole.events[:2]] == [Q[1], "a1"]
    assert cut.skipped == 3 and cut.events[0].content == Q[2]
    same_readings(cut, whole)
    assert [m.content for m in cut.history("")] == [S1, Q[2], "a2", Q[3], "a3"]

    later, model = agent(["a4"])
    await turn(Runner(later, session_service=worker()), Q[4])
    # It passed 150 again: turn 3 folded into a new summary, turn 3 kept (q3's event, number 7).
    assert said(model.requests[0]) == [f"user: {S1}", f"user: {Q[3]}", "assistant: a3", f"user: {Q[4]}"]
    again, whole = await both(worker())
    assert again.skipped == 6 and again.events[0].content == Q[3]
    same_readings(again, whole)


async def test_an_invocation_cut_short_after_its_compaction_is_resumed_by_a_new_worker(
    worker: Opener,
) -> None:
    first, _ = agent(["a1", "a2", "never stored"])
    for q in Q[1:3]:
        await turn(Runner(first, session_service=worker()), q)
    runner = Runner(first, session_service=worker())
    events = runner.run("u", "s", Q[3])
    async for event in events:
        if event.object == ObjectType.COMPACTION:
            cut_at = event.invocation_id
            break  # the worker died after storing the compaction, before the answer
    await events.aclose()

    cut, whole = await both(worker())
    assert cut.skipped == 3
    assert unfinished(cut) == unfinished(whole) == (cut_at, Message.user(Q[3]))
    later, model = agent(["a3"])
    resumed = [e async for e in Runner(later, session_service=worker()).resume("u", "s")]
    assert [(e.invocation_id, e.author, e.content) for e in resumed] == [
        (cut_at, "a", "a3"),
        (cut_at, "a", ""),  # its runner.completion
    ]
    assert said(model.requests[0]) == [f"user: {S1}", f"user: {Q[2]}", "assistant: a2", f"user: {Q[3]}"]


async def test_a_run_paused_after_its_compaction_is_answered_by_a_new_worker(worker: Opener) -> None:
    pay = Tool("pay")
    first, _ = agent(["a1", "a2", calls(call("pay", "c1", amount=5000))], tools=[pay])
    for q in Q[1:4]:
        events = await turn(
            Runner(first, session_service=worker(), callbacks=[LargeNeedApproval("cb", [])]), q
        )
    assert [e.object for e in events][-2:] == [ObjectType.APPROVAL_REQUEST, ObjectType.RUNNER_PAUSED]

    cut, whole = await both(worker())
    assert cut.skipped == 3 and waiting_calls(cut) == waiting_calls(whole) == {
        "c1": ("tool.approval_request", "pay")
    }
    later, model = agent(["paid"], tools=[pay])
    trace: list[Any] = []
    runner = Runner(later, session_service=worker(), callbacks=[LargeNeedApproval("cb", trace)])
    answered = [e async for e in runner.run("u", "s", None, approvals={"c1": Approve()})]
    assert [(e.object, e.content) for e in answered] == [
        (ObjectType.TOOL_RESPONSE, '{"echo":{"amount":5000}}'),
        (ObjectType.COMPACTION, S1),  # past 150 again: the old summary folded into a new one
        (ObjectType.CHAT_COMPLETION, "paid"),
        (ObjectType.RUNNER_COMPLETION, ""),
    ]
    assert pay.calls == [{"amount": 5000}]
    assert said(model.requests[0]) == [
        f"user: {S1}",
        f"user: {Q[2]}",
        "assistant: a2",
        f"user: {Q[3]}",
        "assistant:  -> pay",
        'tool: {"echo":{"amount":5000}}',
    ]


def event(invocation: str, author: str, text: str = "", branch: str = "") -> Event:
    message = Message.user(text) if author == "user" else Message.assistant(text)
    return Event.new(invocation, author, branch=branch, choices=[Choice(message=message)])


def compaction(invocation: str, author: str, kept: Event, branch: str = "") -> Event:
    folded = Event.new(invocation, author, branch=branch, object=ObjectType.COMPACTION)
    folded.choices = [Choice(message=Message.user(SUMMARY + f"before {kept.content}"))]
    folded.decisions = (
        Compacted("callback:Compact.before_model", f"model:{author}", 2, 10, kept_from=kept.id),
    )
    return folded


async def stored(store: SessionService, events: list[Event]) -> None:
    session = await store.acquire("u", "s", "writer")
    for e in events:
        await store.append_event(session, e)
    await store.release(session)


async def test_each_agent_that_answered_keeps_its_latest_answer_for_the_next_message(worker: Opener) -> None:
    # b may not go back to its parent: the next message goes to the last agent before it that may (a).
    b = LlmAgent("b", model=ScriptedModel([]), disallow_transfer_to_parent=True)
    root = LlmAgent("root", model=ScriptedModel([]), sub_agents=[LlmAgent("a", model=ScriptedModel([])), b])
    q3 = event("i3", "user", "q3")
    events = [
        event("i1", "user", "q1"),
        event("i1", "a", "a1"),
        event("i2", "user", "q2"),
        event("i2", "b", "b2"),
        q3,
    ]
    await stored(worker(), [*events, compaction("i3", "b", q3)])

    cut, whole = await both(worker())
    assert cut.skipped == 1 and cut.events[0].content == "a1"  # not 3 (b2's): a's answer is a reader's
    assert active_agent(root, cut).name == active_agent(root, whole).name == "a"
    same_readings(cut, whole)


async def test_a_branch_reads_from_its_own_latest_compaction_and_one_without_any_keeps_every_event(
    worker: Opener,
) -> None:
    e = [event("i1", "user", "q1"), event("i1", "p", "x1", "par.x"), event("i1", "p", "y1", "par.y")]
    e += [event("i1", "root", "r1"), event("i2", "user", "q2"), event("i2", "p", "x2", "par.x")]
    # par.y folds its own history: the root's has no compaction, so nothing is skipped.
    await stored(worker(), [*e, compaction("i2", "p", e[2], "par.y")])
    cut, whole = await both(worker())
    assert cut.skipped == 0
    # The root folds up to q2; but par.x's later compaction kept from its x1, which stays readable.
    more = [event("i2", "root", "r2"), compaction("i2", "root", e[4]), compaction("i2", "p", e[1], "par.x")]
    await stored(worker(), more)
    cut, whole = await both(worker())
    assert cut.skipped == 1 and cut.events[0].content == "x1"
    assert [m.content for m in cut.history("par.x")] == [SUMMARY + "before x1", "x1", "r1", "q2", "x2", "r2"]
    same_readings(cut, whole)
    # A branch first seen later (below the root) reads from the root's compaction: q2 on.
    await stored(worker(), [event("i2", "p", "z1", "par.z"), compaction("i2", "p", e[4], "par.x")])
    cut, whole = await both(worker())
    assert cut.skipped == 4 and cut.events[0].content == "q2"
    assert [m.content for m in cut.history("par.z")] == [SUMMARY + "before q2", "q2", "r2", "z1"]
    same_readings(cut, whole)


async def test_the_web_page_lists_every_event_of_a_session_read_from_its_horizon(tmp_path: Path) -> None:
    store = SqliteSessionService(tmp_path / "s.sqlite3")
    first, _ = agent(["a1", "a2", "a3"])
    runner = Runner(first, session_service=store)
    for q in Q[1:4]:
        await turn(runner, q)
    other = SqliteSessionService(tmp_path / "s.sqlite3")
    app = create_web_app(Runner(first, session_service=other), identity=lambda request: "u")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
        opened = (await c.get("/api/sessions/s")).json()
        listed = (await c.get("/api/sessions")).json()
    whole = await store.get("u", "s")
    assert whole is not None and (await other.acquire("u", "s", "w")).skipped == 3
    assert [e["id"] for e in opened["events"]] == [e.id for e in whole.events]
    assert len(opened["events"]) == 10  # three turns, the third with its compaction
    assert [(s["id"], s["title"]) for s in listed] == [("s", Q[1][:80])]
    store.close()
    other.close()


async def test_the_last_invocation_keeps_its_first_event_though_its_compaction_kept_from_later(
    worker: Opener,
) -> None:
    # Its compaction kept from the agent's answer only (a hand-made fold): the invocation, cut
    # short since, is resumed with its user message, which comes before.
    e = [event("i1", "user", "q1"), event("i1", "a", "a1"), event("i2", "user", "q2"), event("i2", "a", "a2")]
    await stored(worker(), [*e, compaction("i2", "a", e[3])])
    cut, whole = await both(worker())
    assert cut.skipped == 2 and cut.events[0].content == "q2"
    assert unfinished(cut) == unfinished(whole) == (e[2].invocation_id, Message.user("q2"))
    same_readings(cut, whole)
