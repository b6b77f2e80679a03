"""The agent `adk worker` runs in tests/durable/test_crash.py: a model that answers from the
request (so that a restarted worker answers the same), and a tool with a counted effect.

ADK_TEST_BLOCK names where each run stops for the test to kill the worker: `model1` (the first
model call), `tool` (after the tool's effect, before it returns), `after_tool` (its step
recorded, its event not stored), `append` (inside the store's append of the tool's event, its
row committed), `model2` (after the tool completed), `stream` (a streamed answer, after its
first chunk), `model3` (for ADK_TEST_SHAPE=loop: after a tool escalated), or `parallel` (for
ADK_TEST_SHAPE=parallel: branch `a`'s first model call, once branch `b` has answered); the
worker then says `BLOCKED <where>` on stderr and waits forever.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from adk import (
    BaseAgent,
    Cont,
    FunctionTool,
    Halt,
    LlmAgent,
    LlmResponse,
    LoopAgent,
    ParallelAgent,
    ToolContext,
)
from adk.events import Event
from adk.limits import Budget
from adk.models.base import LlmRequest
from adk.sessions.base import Session
from adk.sessions.budgets import BudgetStore
from adk.sessions.postgres import PostgresSessionService
from adk.testing import call_tool


async def _block(where: str) -> None:
    if os.environ.get("ADK_TEST_BLOCK") == where:
        print(f"BLOCKED {where}", file=sys.stderr, flush=True)
        await asyncio.Event().wait()


async def _hold() -> None:
    """With ADK_TEST_HOLD, a model call that takes that many seconds, marked `+` and `-` in the
    ADK_TEST_ACTIVE file (appends from every worker, in order): how many calls overlap."""
    hold = os.environ.get("ADK_TEST_HOLD")
    if hold:
        _write("+", "ADK_TEST_ACTIVE")
        await asyncio.sleep(float(hold))
        _write("-", "ADK_TEST_ACTIVE")


class Planned:
    """Calls `effect` once, then answers with what it returned; word by word when asked to stream."""

    name = "planned"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        last = request.messages[-1]
        if last.role == "user":
            await _block("model1")
            await _hold()
            response = call_tool("effect", call_id="call-1", note=str(last.content))
        else:
            await _block("model2")
            response = LlmResponse.text(f"done: {last.content}", model=self.name)
        for i, chunk in enumerate(response.word_chunks() if request.stream else ()):
            yield chunk
            if i == 0 and response.content:
                await _block("stream")
        yield response


def _write(note: str, file: str = "ADK_TEST_COUNTER") -> None:
    with open(os.environ[file], "a") as counter:
        counter.write(f"{note}\n")
        counter.flush()
        os.fsync(counter.fileno())


async def effect(note: str) -> str:
    """Append a line to the counter file: the effect that must happen at most once.

    Args:
        note: what to write.
    """
    _write(note)
    await _block("tool")
    return f"wrote {note}"


class Escalating:
    """Calls `effect`, then `approve` (which ends the enclosing loop), then answers."""

    name = "escalating"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        answered = [m for m in request.messages if m.role == "tool"]
        if not answered:
            yield call_tool("effect", call_id="call-1", note=str(request.messages[-1].content))
        elif len(answered) == 1:
            yield call_tool("approve", call_id="call-2")
        else:
            await _block("model3")
            yield LlmResponse.text("approved", model=self.name)


_ANSWERED: dict[str, asyncio.Event] = {}
"""Per run (its user message): set once branch `b` has answered."""


class Branch:
    """The model of a `ParallelAgent` branch: calls `effect` with the branch's note, then answers.
    With ADK_TEST_BLOCK=parallel, branch `a`'s first call waits for branch `b`'s answer, then
    blocks: the worker is killed with `a`'s step in flight and `b`'s, made after it, recorded."""

    def __init__(self, branch: str) -> None:
        self.branch = branch
        self.name = f"branch-{branch}"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        run, last = str(request.messages[0].content), request.messages[-1]
        answered = _ANSWERED.setdefault(run, asyncio.Event())
        if last.role == "user":
            if self.branch == "a" and os.environ.get("ADK_TEST_BLOCK") == "parallel":
                await answered.wait()
                await _block("parallel")
            yield call_tool("effect", call_id=f"call-{self.branch}", note=f"{self.branch} {run}")
        else:
            answered.set()
            yield LlmResponse.text(f"{self.branch} done: {last.content}", model=self.name)


def branches(effect_tool: Any) -> BaseAgent:
    """The `parallel` shape: branches `a` and `b`, each calling `effect_tool`."""
    return ParallelAgent(
        "crash", sub_agents=[LlmAgent(b, model=Branch(b), tools=[effect_tool]) for b in ("a", "b")]
    )


def approve(ctx: ToolContext) -> str:
    """Approve: ends the loop after this round."""
    ctx.escalate()
    return "ok"


class Pause:
    """With ADK_TEST_BLOCK=after_tool, a run stops once its tool call's step is recorded, before
    the call's event is stored."""

    async def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        await _block("after_tool")
        return result


class Gate:
    """Lets tool calls through until the clock passes ADK_TEST_OPEN_UNTIL (seconds since the
    epoch), then halts them: a hook that reads the clock, so a restarted worker may answer
    otherwise than the one that was killed."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
        if time.time() < float(os.environ["ADK_TEST_OPEN_UNTIL"]):
            return Cont(ctx)
        return Halt("closed")


def make(shape: str) -> BaseAgent:
    """`crash` (one agent), `approval` (the same, its tool approved first), `loop` (a loop
    whose agent escalates), `gate` (its tool calls behind `Gate`), `budget` (under a
    session-scoped `Budget` kept in the PostgreSQL store at ADK_TEST_BUDGET_URL) or `parallel`
    (two branches: `branches`), all named `crash`."""
    if shape == "budget":
        return LlmAgent("crash", model=Planned(), tools=[effect], callbacks=[budget(_budget_store())])
    if shape == "gate":
        return LlmAgent("crash", model=Planned(), tools=[effect], callbacks=[Gate()])
    if shape == "approval":  # every call to `effect` waits for a person's approval
        return LlmAgent("crash", model=Planned(), tools=[FunctionTool(effect, requires_approval=True)])
    if shape == "parallel":
        return branches(effect)
    if shape == "loop":
        inner = LlmAgent("looped", model=Escalating(), tools=[effect, approve])
        return LoopAgent("crash", max_iterations=3, sub_agents=[inner])
    return LlmAgent("crash", model=Planned(), tools=[effect], callbacks=[Pause()])


def budget(store: BudgetStore) -> Budget:
    """The `budget` shape's budget: room for every call, kept in `store` per session."""
    return Budget(model_calls=10, tool_calls=10, scope="session", store=store)


def _budget_store() -> BudgetStore:
    return PostgresSessionService(os.environ["ADK_TEST_BUDGET_URL"])


def _blocking_append() -> None:
    """With ADK_TEST_BLOCK=append, the worker's store blocks once a tool's event is committed."""
    append = PostgresSessionService.append_event

    async def append_event(self: PostgresSessionService, session: Session, event: Event) -> None:
        await append(self, session, event)
        if event.object == "tool.response":
            await _block("append")

    PostgresSessionService.append_event = append_event  # type: ignore[method-assign]


if os.environ.get("ADK_TEST_BLOCK") == "append":
    _blocking_append()

agent = make(os.environ.get("ADK_TEST_SHAPE", "crash"))
