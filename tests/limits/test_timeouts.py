"""Nothing hangs: tool timeouts (MCP tools too), model attempt timeouts, run deadlines (docs/limits.md).

Waits are an event that never fires under a tiny timeout; retry waits go through the testing switch.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adk import Fallback, LlmAgent, LlmResponse, Runner, ToolContext
from adk.errors import ToolTimeoutError
from adk.mcp import McpToolset
from adk.models.base import LlmRequest
from adk.models.openai import OpenAIModel
from adk.recovery import RetryPolicy, Testing
from adk.testing import ScriptedModel, call_tool
from adk.tools import FunctionTool, tool
from tests.recovery.support import Recorder

ROOT = Path(__file__).parents[2]
MUST = "must be a number of seconds above 0, got"


def hanging(hangs: int) -> Any:
    """A tool body that hangs on its first `hangs` calls, then answers "done"."""
    calls: list[int] = []

    async def slow() -> str:
        """Hangs, then answers."""
        calls.append(len(calls) + 1)
        if len(calls) <= hangs:
            await asyncio.Event().wait()  # never set
        return "done"

    return slow, calls


async def run(runner: Runner) -> list[Any]:
    return [e async for e in runner.run("u", "s", "hi")]


async def test_a_tool_past_its_timeout_is_cancelled_not_retried_if_not_idempotent(testing: Testing) -> None:
    body, calls = hanging(1)
    slow = tool(timeout=0.01)(body)
    rec = Recorder()
    model = ScriptedModel([call_tool("slow", call_id="c1"), "ok"])
    events = await run(Runner(LlmAgent("a", model=model, tools=[slow], callbacks=[rec])))
    assert [t for t in rec.trace if "tool" in t[0]] == [
        ("before_tool", "slow", 1),
        ("on_tool_error", "slow:ToolTimeoutError", 1),
    ]
    assert calls == [1]  # not idempotent: never re-run automatically after a timeout
    told = "Error: ToolTimeoutError: tool 'slow' did not finish within its timeout of 0.01 s"
    assert model.requests[1].messages[-1].content == told
    response = next(e for e in events if e.object == "tool.response")
    assert response.error is not None
    assert (response.error.type, response.error.where) == ("ToolTimeoutError", "tool:slow")
    assert testing.waits == []


async def test_an_idempotent_tool_is_retried_after_a_timeout(testing: Testing) -> None:
    body, calls = hanging(1)
    slow = FunctionTool(body, idempotent=True, timeout=0.01)
    rec = Recorder()
    model = ScriptedModel([call_tool("slow", call_id="c1"), "ok"])
    await run(Runner(LlmAgent("a", model=model, tools=[slow], callbacks=[rec])))
    assert [t for t in rec.trace if "tool" in t[0]] == [
        ("before_tool", "slow", 1),
        ("on_tool_error", "slow:ToolTimeoutError", 1),
        ("after_tool", "slow", 2),
    ]
    assert calls == [1, 2]
    assert model.requests[1].messages[-1].content == "done"
    assert len(testing.waits) == 1


async def test_a_fallback_stands_in_for_a_timed_out_tool(testing: Testing) -> None:
    seen: list[tuple[str, float]] = []

    class Cached:
        def on_tool_error(self, error: Exception, ctx: ToolContext) -> Fallback[str]:
            assert isinstance(error, ToolTimeoutError)
            seen.append((error.tool, error.timeout))
            return Fallback("cached")

    body, calls = hanging(5)
    slow = tool(timeout=0.01)(body)
    model = ScriptedModel([call_tool("slow", call_id="c1"), "ok"])
    await run(Runner(LlmAgent("a", model=model, tools=[slow], callbacks=[Cached()])))
    assert seen == [("slow", 0.01)]
    assert calls == [1]
    assert model.requests[1].messages[-1].content == "cached"


async def test_an_mcp_call_obeys_its_toolsets_timeout(tmp_path: Path, testing: Testing) -> None:
    env = {"PYTHONPATH": str(ROOT), "ADK_MCP_MARK": str(tmp_path / "mark"), "PATH": ""}
    toolset = McpToolset.stdio(sys.executable, "-m", "tests.mcp_server", env=env, name="test", timeout=0.2)
    model = ScriptedModel([call_tool("slow", call_id="c1"), "ok"])
    async with Runner(LlmAgent("a", model=model, tools=[toolset])) as runner:
        events = await run(runner)
    told = "Error: ToolTimeoutError: tool 'slow' did not finish within its timeout of 0.2 s"
    assert model.requests[1].messages[-1].content == told  # `slow` never answers: the run went on
    assert events[-2].content == "ok"


@pytest.mark.parametrize("bad", [0, -1, 0.0, float("nan"), "5", True])
def test_a_timeout_that_is_not_above_zero_is_refused_where_it_is_given(bad: Any) -> None:
    def f() -> str:
        """F."""
        return "x"

    with pytest.raises(ValueError, match=r"^tool 'f'") as raised:
        FunctionTool(f, timeout=bad)
    assert str(raised.value) == f"tool 'f': timeout must be a number of seconds above 0, got {bad!r}"
    with pytest.raises(ValueError, match=r"^tool 'f': timeout must be"):
        tool(timeout=bad)(f)
    with pytest.raises(ValueError, match=r"^McpToolset") as raised:
        McpToolset.http("http://127.0.0.1:9/mcp", timeout=bad)
    assert str(raised.value) == f"McpToolset: timeout must be a number of seconds above 0, got {bad!r}"


async def never(request: LlmRequest) -> str:
    """A model step that never answers: a server that accepted the request and went quiet."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


class Stalls:
    """A model whose first stream stops after one chunk and never ends; then it answers "ok"."""

    name = "stalls"

    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        self.calls += 1
        if self.calls == 1:
            yield LlmResponse.chunk("Hel", model=self.name)
            await asyncio.Event().wait()
        yield LlmResponse.text("ok", model=self.name)


async def test_a_model_attempt_past_its_timeout_is_a_transient_error_retried(testing: Testing) -> None:
    rec = Recorder()
    model = ScriptedModel([never, "ok"], name="m")
    policy = RetryPolicy(attempt_timeout=0.01)
    events = await run(Runner(LlmAgent("a", model=model, callbacks=[rec]), retry_policy=policy))
    assert rec.trace == [
        ("before_model", "m", 1),
        ("on_model_error", "m:ModelTimeoutError", 1),
        ("after_model", "m", 2),
    ]
    failed = next(e for e in events if e.object == "attempt.failed")
    assert failed.error is not None
    assert (failed.error.type, failed.error.message, failed.error.where) == (
        "ModelTimeoutError",
        "model 'm' did not answer within the attempt timeout of 0.01 s",
        "model:m",
    )
    assert events[-2].content == "ok"
    assert len(testing.waits) == 1


async def test_a_model_that_never_answers_fails_the_run_within_the_policys_bound(testing: Testing) -> None:
    model = ScriptedModel([never, never, never], name="m")
    policy = RetryPolicy(attempt_timeout=0.01)
    events = await run(Runner(LlmAgent("a", model=model), retry_policy=policy))
    error = events[-1].error
    assert error is not None
    assert (error.type, error.message) == (
        "RetriesExhausted",
        "gave up after 3 attempt(s): ModelTimeoutError: model 'm' did not answer within the attempt"
        " timeout of 0.01 s",
    )
    model.assert_done()


async def test_a_stream_that_stalls_between_chunks_is_cut_and_retried(testing: Testing) -> None:
    model = Stalls()
    policy = RetryPolicy(attempt_timeout=0.01)
    runner = Runner(LlmAgent("a", model=model), retry_policy=policy)
    events = [e async for e in runner.run("u", "s", "hi", stream=True)]
    assert [(e.object, e.content or (e.error and e.error.type)) for e in events[1:]] == [
        ("chat.completion.chunk", "Hel"),
        ("attempt.failed", "ModelTimeoutError"),
        ("attempt.discarded", "AttemptDiscarded"),
        ("chat.completion", "ok"),
        ("runner.completion", None),
    ]
    assert model.calls == 2


def test_the_openai_client_waits_120_seconds_not_600() -> None:
    model = OpenAIModel("gpt", base_url="http://127.0.0.1:9/v1")
    assert model._client.timeout == 120.0


@pytest.mark.parametrize("bad", [0, -0.5, "1"])
def test_an_attempt_timeout_not_above_zero_is_refused_where_it_is_given(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^RetryPolicy") as raised:
        RetryPolicy(attempt_timeout=bad)
    assert (
        str(raised.value) == f"RetryPolicy: attempt_timeout must be a number of seconds above 0, got {bad!r}"
    )
    with pytest.raises(ValueError, match=r"^OpenAIModel") as raised:
        OpenAIModel("gpt", base_url="http://127.0.0.1:9/v1", timeout=bad)
    assert (
        str(raised.value) == f"OpenAIModel('gpt'): timeout must be a number of seconds above 0, got {bad!r}"
    )


async def test_a_run_past_its_deadline_ends_with_a_run_timeout_keeping_what_was_stored(
    testing: Testing,
) -> None:
    body, calls = hanging(1)
    slow = tool(body)
    model = ScriptedModel([call_tool("slow", call_id="c1")])
    runner = Runner(LlmAgent("a", model=model, tools=[slow]))
    events = [e async for e in runner.run("u", "s", "hi", timeout=0.01)]
    assert [e.object for e in events] == ["chat.completion", "chat.completion", "error"]  # user, model, error
    error = events[-1].error
    assert error is not None
    assert (error.type, error.message, error.where) == (
        "RunTimeout",
        "the run did not finish within its timeout of 0.01 s",
        "run",
    )
    session = await runner.session_service.get("u", "s")
    assert session is not None
    assert [e.id for e in session.events] == [e.id for e in events]  # the error event stored too
    assert calls == [1]


async def test_the_runners_timeout_is_every_runs_deadline(testing: Testing) -> None:
    model = ScriptedModel([never], name="m")
    runner = Runner(LlmAgent("a", model=model), timeout=0.01)
    events = [e async for e in runner.run("u", "s", "hi")]
    assert events[-1].error is not None
    assert events[-1].error.type == "RunTimeout"


@pytest.mark.parametrize("bad", [0, -3])
def test_a_run_timeout_not_above_zero_is_refused(bad: int) -> None:
    agent = LlmAgent("a", model=ScriptedModel([]))
    with pytest.raises(ValueError, match=r"^Runner: timeout") as raised:
        Runner(agent, timeout=bad)
    assert str(raised.value) == f"Runner: timeout {MUST} {bad!r}"
    with pytest.raises(ValueError, match=r"^runner.run: timeout") as raised:
        Runner(agent).run("u", "s", "hi", timeout=bad)
    assert str(raised.value) == f"runner.run: timeout {MUST} {bad!r}"
