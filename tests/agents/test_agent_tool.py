"""Agents as tools (docs/agents.md): a child branch, its own callbacks, events streamed, the result."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from adk import (
    AgentContext,
    AgentTool,
    LlmAgent,
    ModelContext,
    ObjectType,
    Runner,
    SequentialAgent,
    ToolContext,
)
from adk.errors import BadRequestError
from adk.testing import ScriptedModel, call_tool
from tests._runtime import Recorder, Tool, call, calls, run


class Trace(Recorder):
    """Records `(label, hook, agent)`, and the tool too for the tool hooks."""

    def record(self, hook: str, ctx: AgentContext | ModelContext | ToolContext) -> None:
        tool = (ctx.tool.name,) if isinstance(ctx, ToolContext) else ()
        self.trace.append((self.label, hook, ctx.agent.name, *tool))


def shape(event: Any) -> tuple[Any, ...]:
    return (event.object, event.author, event.branch, event.content, event.is_partial)


async def test_an_agent_tool_runs_on_a_child_branch_with_its_own_callbacks() -> None:
    trace: list[tuple[str, ...]] = []
    helper_model = ScriptedModel(["4"])
    helper = LlmAgent("helper", model=helper_model, description="Does sums.", callbacks=[Trace("own", trace)])
    root_model = ScriptedModel([call_tool("helper", call_id="c1", request="What is 2+2?"), "It is 4."])
    root = LlmAgent("root", model=root_model, tools=[helper])
    runner = Runner(root, callbacks=[Trace("runner", trace)])

    events = await run(runner, "Add 2 and 2")

    assert [shape(e) for e in events] == [
        (ObjectType.CHAT_COMPLETION, "user", "", "Add 2 and 2", False),
        (ObjectType.CHAT_COMPLETION, "root", "", "", False),
        (ObjectType.CHAT_COMPLETION, "root", "helper", "What is 2+2?", False),
        (ObjectType.CHAT_COMPLETION, "helper", "helper", "4", False),
        (ObjectType.TOOL_RESPONSE, "root", "", "4", False),
        (ObjectType.CHAT_COMPLETION, "root", "", "It is 4.", False),
        (ObjectType.RUNNER_COMPLETION, "root", "", "", False),
    ]
    assert events[2].message is not None
    assert events[2].message.role == "user"
    assert trace == [
        ("runner", "before_agent", "root"),
        ("runner", "before_model", "root"),
        ("runner", "after_model", "root"),
        ("runner", "before_tool", "root", "helper"),
        ("runner", "before_agent", "helper"),
        ("own", "before_agent", "helper"),
        ("runner", "before_model", "helper"),
        ("own", "before_model", "helper"),
        ("runner", "after_model", "helper"),
        ("own", "after_model", "helper"),
        ("runner", "after_agent", "helper"),
        ("own", "after_agent", "helper"),
        ("runner", "after_tool", "root", "helper"),
        ("runner", "before_model", "root"),
        ("runner", "after_model", "root"),
        ("runner", "after_agent", "root"),
    ]
    # The agent saw the request only, not the caller's conversation.
    assert [(m.role, m.content) for m in helper_model.requests[0].messages] == [("user", "What is 2+2?")]
    [declaration] = root._declarations
    assert (declaration.name, declaration.description, declaration.parameters["required"]) == (
        "helper",
        "Does sums.",
        ["request"],
    )
    stored = await runner.session_service.get("u", "s")
    assert stored is not None
    assert stored.events == events


async def test_the_caller_does_not_see_the_tool_agent_turns_later_and_keeps_the_conversation() -> None:
    helper = LlmAgent("helper", model=ScriptedModel(["4"]))
    root_model = ScriptedModel([call_tool("helper", call_id="c1", request="2+2?"), "It is 4.", "Bye."])
    runner = Runner(LlmAgent("root", model=root_model, tools=[AgentTool(helper)]))

    await run(runner)
    events = await run(runner, "thanks")

    assert [e.author for e in events] == ["user", "root", "root"]
    assert [(m.role, m.content) for m in root_model.requests[2].messages] == [
        ("user", "hi"),
        ("assistant", ""),
        ("tool", "4"),
        ("assistant", "It is 4."),
        ("user", "thanks"),
    ]


class Invoice(BaseModel):
    number: str
    total: float


async def test_a_structured_agent_tool_returns_the_typed_value() -> None:
    results: list[Any] = []

    class SeeResult:
        def after_tool(self, result: Any, ctx: ToolContext) -> Any:
            results.append(result)
            return result

    extractor = LlmAgent(
        "extractor", model=ScriptedModel(['{"number": "A-1", "total": 3}']), output_type=Invoice
    )
    root_model = ScriptedModel([call_tool("extractor", call_id="c1", request="A-1 for 3 €"), "Noted."])
    root = LlmAgent("root", model=root_model, tools=[extractor], callbacks=[SeeResult()])

    events = await run(Runner(root))

    assert results == [Invoice(number="A-1", total=3)]
    [response] = [e for e in events if e.object == ObjectType.TOOL_RESPONSE]
    assert response.content == '{"number":"A-1","total":3.0}'


async def test_streamed_events_of_the_agent_go_out_while_the_call_runs() -> None:
    helper = LlmAgent("helper", model=ScriptedModel(["four it is"]))
    root_model = ScriptedModel([call_tool("helper", call_id="c1", request="2+2?"), "4."])
    root = LlmAgent("root", model=root_model, tools=[helper])

    events = await run(Runner(root), stream=True)

    assert [shape(e) for e in events if e.branch] == [
        (ObjectType.CHAT_COMPLETION, "root", "helper", "2+2?", False),
        (ObjectType.CHAT_COMPLETION_CHUNK, "helper", "helper", "four", True),
        (ObjectType.CHAT_COMPLETION_CHUNK, "helper", "helper", " it", True),
        (ObjectType.CHAT_COMPLETION_CHUNK, "helper", "helper", " is", True),
        (ObjectType.CHAT_COMPLETION, "helper", "helper", "four it is", False),
    ]
    first_tool_response = next(i for i, e in enumerate(events) if e.object == ObjectType.TOOL_RESPONSE)
    assert max(i for i, e in enumerate(events) if e.branch) < first_tool_response


async def test_state_set_inside_the_agent_is_the_sessions_and_end_invocation_ends_the_caller() -> None:
    def finish(ctx: ToolContext) -> str:
        """Record the result and stop everything."""
        ctx.state["answer"] = 4
        ctx.end_invocation()
        return "stopped"

    helper = LlmAgent("helper", model=ScriptedModel([call_tool("finish", call_id="h1")]), tools=[finish])
    root_model = ScriptedModel([call_tool("helper", call_id="c1", request="go")])  # no second call
    runner = Runner(LlmAgent("root", model=root_model, tools=[helper]))

    events = await run(runner)

    assert [(e.object, e.author) for e in events][-2:] == [
        (ObjectType.TOOL_RESPONSE, "root"),
        (ObjectType.RUNNER_COMPLETION, "root"),
    ]
    stored = await runner.session_service.get("u", "s")
    assert stored is not None
    assert stored.state == {"answer": 4}
    assert sum(e.actions.state_delta == {"answer": 4} for e in stored.events) == 1


async def test_an_agent_that_fails_is_a_tool_error_the_caller_sees() -> None:
    helper = LlmAgent("helper", model=ScriptedModel([BadRequestError("no such thing", status_code=400)]))
    root_model = ScriptedModel([call_tool("helper", call_id="c1", request="go"), "It failed."])
    root = LlmAgent("root", model=root_model, tools=[helper])

    events = await run(Runner(root))

    [response] = [e for e in events if e.object == ObjectType.TOOL_RESPONSE]
    assert response.content == "Error: BadRequestError: no such thing"
    assert response.error is not None
    assert response.error.where == "model:scripted"
    assert events[-2].content == "It failed."


async def test_stopping_the_run_cancels_the_agent_tool() -> None:
    started = asyncio.Event()
    cancelled: list[bool] = []

    async def wait_forever(ctx: ToolContext) -> str:
        """Never returns."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    helper = LlmAgent("helper", model=ScriptedModel([call_tool("wait_forever")]), tools=[wait_forever])
    root = LlmAgent("root", model=ScriptedModel([call_tool("helper", request="go")]), tools=[helper])
    events = Runner(root).run("u", "s", "hi")

    async for event in events:
        if event.author == "helper" and event.tool_calls:
            await started.wait()  # the tool runs in its own task meanwhile
            break
    await events.aclose()

    assert cancelled == [True]


async def test_arguments_other_than_one_request_are_refused() -> None:
    helper = LlmAgent("helper", model=ScriptedModel([]))
    root_model = ScriptedModel([call_tool("helper", call_id="c1", text="go"), "ok"])
    events = await run(Runner(LlmAgent("root", model=root_model, tools=[helper])))
    assert events[2].content == (
        "Error: ToolArgumentsError: invalid arguments for tool 'helper': argument 'request': a string is"
        " required, got None; argument 'text': unexpected argument (parameters: 'request')"
    )


def test_an_agent_tool_takes_an_agent() -> None:
    with pytest.raises(TypeError, match="AgentTool takes an agent, got 'helper'"):
        AgentTool("helper")  # type: ignore[arg-type]
    assert AgentTool(LlmAgent("h", model=ScriptedModel([])), name="other").declaration.name == "other"


async def test_a_call_in_an_agent_tool_that_would_wait_is_an_error_the_model_sees_not_an_empty_answer() -> (
    None
):
    # An agent used as a tool cannot pause (nothing would resume its run): a call inside it that
    # asks for approval makes the agent tool's call fail, naming the call, and the run goes on.
    needs_approval = Tool("t")
    needs_approval.requires_approval = True
    inner = LlmAgent("a", model=ScriptedModel([calls(call("t", "k")), "a done"]), tools=[needs_approval])
    boss_model = ScriptedModel([call_tool("team", call_id="c1", request="go"), "sorry"])
    boss = LlmAgent("boss", model=boss_model, tools=[SequentialAgent("team", sub_agents=[inner])])

    events = await run(Runner(boss))

    result = next(
        e for e in events if e.author == "boss" and e.message is not None and e.message.role == "tool"
    )
    assert result.content.startswith(
        "Error: ToolError: agent tool 'team' stopped: inside it, call 'k' waits for an answer"
    )
    assert boss_model.requests[1].messages[-1].content == result.content
    assert events[-1].object == ObjectType.RUNNER_COMPLETION  # not paused: nothing waits
    assert needs_approval.calls == []
