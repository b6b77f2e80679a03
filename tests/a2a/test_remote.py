"""`RemoteA2aAgent` and `A2aTool` against A2A servers on 127.0.0.1: one made with the a2a-sdk's own
server classes (an echo agent), and adk's own; failures through `on_tool_error` with exact traces."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from adk import LlmAgent, Runner
from adk.a2a import A2aTool, RemoteA2aAgent, create_app
from adk.callbacks.results import Cont, Fallback, Raise, Retry
from adk.context import ToolContext
from adk.errors import RemoteAgentConnectionError, RemoteAgentError, RemoteAgentTimeoutError
from adk.testing import ScriptedModel, call_tool, transfer_to
from tests.a2a.support import echo_app, serving, unused_url

pytestmark = pytest.mark.usefixtures("testing")


async def texts(runner: Runner, message: str, session: str = "s") -> list[tuple[str, str]]:
    """The complete assistant messages of one run, as (author, text)."""
    out = []
    async for event in runner.run("u", session, message):
        m = event.message
        if m is not None and m.role == "assistant" and m.content:
            out.append((event.author, m.content))
    return out


async def test_a_remote_sub_agent_answers_and_keeps_its_context_across_turns() -> None:
    with serving(echo_app) as url:
        remote = RemoteA2aAgent(url, name="echo", description="echoes")
        root = LlmAgent(
            "root", model=ScriptedModel([transfer_to("echo"), transfer_to("echo")]), sub_agents=[remote]
        )
        runner = Runner(root)
        first = await texts(runner, "hello")
        second = await texts(runner, "again")  # the same remote context: its second turn
    assert first == [("echo", "echo: hello (turn 1)")]
    assert second == [("echo", "echo: again (turn 2)")]


async def test_a_remote_adk_agent_answers_through_adks_own_server() -> None:
    served = Runner(LlmAgent("far", model=ScriptedModel(["from far away"])))
    with serving(lambda url: create_app(served, url=url)) as url:
        runner = Runner(RemoteA2aAgent(url, name="far"))
        assert await texts(runner, "hi") == [("far", "from far away")]


class Trace:
    """Records each tool hook as (hook, what it saw) and answers as told."""

    def __init__(self, on_error: list[Any]) -> None:
        self.seen: list[tuple[Any, ...]] = []
        self.on_error = on_error

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self.seen.append(("before_tool", ctx.tool.name, ctx.args, ctx.attempt))
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        self.seen.append(("after_tool", ctx.tool.name, result))
        return result

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Any:
        self.seen.append(("on_tool_error", type(error).__name__, str(error), ctx.attempt))
        answer = self.on_error.pop(0)
        return Retry(ctx) if answer == "retry" else Fallback(answer) if answer else Raise(error)


def tool_agent(tool: A2aTool, trace: Trace) -> tuple[Runner, ScriptedModel]:
    model = ScriptedModel([call_tool(tool.name, call_id="c1", request="hello"), "done"])
    return Runner(LlmAgent("root", model=model, tools=[tool], callbacks=[trace])), model


def tool_results(model: ScriptedModel) -> list[str]:
    return [m.content for m in model.requests[-1].messages if m.role == "tool"]


async def test_a_remote_agent_as_a_tool_passes_through_the_tool_hooks() -> None:
    trace = Trace([])
    with serving(echo_app) as url:
        runner, model = tool_agent(RemoteA2aAgent(url, name="echo").as_tool(), trace)
        await texts(runner, "go")
    assert trace.seen == [
        ("before_tool", "echo", {"request": "hello"}, 1),
        ("after_tool", "echo", "echo: hello (turn 1)"),
    ]
    assert tool_results(model) == ["echo: hello (turn 1)"]


async def test_an_unreachable_remote_is_retried_then_falls_back_through_on_tool_error() -> None:
    url = unused_url()
    trace = Trace(["retry", "offline, sorry"])
    runner, model = tool_agent(A2aTool(url, name="far"), trace)
    await texts(runner, "go")
    refused = f"A2A agent at {url}: unreachable (All connection attempts failed)"
    assert trace.seen == [  # a Retry with the same arguments does not pass before_tool again
        ("before_tool", "far", {"request": "hello"}, 1),
        ("on_tool_error", "RemoteAgentConnectionError", refused, 1),
        ("on_tool_error", "RemoteAgentConnectionError", refused, 2),
        ("after_tool", "far", "offline, sorry"),
    ]
    assert issubclass(RemoteAgentConnectionError, ConnectionError)  # transient: the default policy retries it
    assert tool_results(model) == ["offline, sorry"]


async def test_a_failed_remote_task_reaches_on_tool_error_and_then_the_model() -> None:
    trace = Trace([None])
    with serving(echo_app) as url:
        tool = A2aTool(url, name="echo")
        model = ScriptedModel([call_tool("echo", call_id="c1", request="fail"), "sorry"])
        runner = Runner(LlmAgent("root", model=model, tools=[tool], callbacks=[trace]))
        await texts(runner, "go")
    (error,) = [s for s in trace.seen if s[0] == "on_tool_error"]
    assert error[:2] == ("on_tool_error", "RemoteAgentError")
    assert error[2].startswith(f"A2A agent at {url}: task ") and error[2].endswith(" failed: boom")
    assert "after_tool" not in [s[0] for s in trace.seen]  # an unrecovered error goes to the model
    assert "failed: boom" in tool_results(model)[0]


async def test_a_remote_that_times_out_is_a_timeout_error() -> None:
    def timing_out(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("read timed out", request=request)

    trace = Trace(["it took too long"])
    async with httpx.AsyncClient(transport=httpx.MockTransport(timing_out)) as http:
        runner, _ = tool_agent(A2aTool("http://127.0.0.1:9/", name="slow", httpx_client=http), trace)
        await texts(runner, "go")
    assert trace.seen[1][:2] == ("on_tool_error", "RemoteAgentTimeoutError")
    assert trace.seen[-1] == ("after_tool", "slow", "it took too long")
    assert issubclass(RemoteAgentTimeoutError, TimeoutError) and issubclass(
        RemoteAgentTimeoutError, RemoteAgentError
    )


def test_bad_arguments_are_one_line_naming_the_tool() -> None:
    with pytest.raises(
        Exception, match=r"invalid arguments for tool 'far': expected \{'request': <text>\}, got \['q'\]"
    ):
        A2aTool("http://127.0.0.1:9/", name="far").validate({"q": 1})
