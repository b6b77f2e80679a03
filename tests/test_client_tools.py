"""What a caller brings to a run: tools it runs itself (the run waits for their results) and state."""

from __future__ import annotations

import pytest

from adk.agents import LlmAgent
from adk.context import RunContext
from adk.events import Message, ToolDeclaration
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, reply, run, shapes, summary

CONFIRM = ToolDeclaration(name="confirm", description="Ask the user to confirm")


def runner_with(*steps: object) -> tuple[Runner, ScriptedModel, Tool]:
    model = ScriptedModel(steps)  # type: ignore[arg-type]  # the steps are valid ones
    echo = Tool("echo")
    return Runner(LlmAgent("root", model=model, tools=[echo])), model, echo


def result(call_id: str, content: str) -> Message:
    return Message(role="tool", content=content, tool_call_id=call_id)


async def test_a_call_to_a_client_tool_ends_the_run_waiting_and_the_next_run_answers_it() -> None:
    runner, model, echo = runner_with(
        calls(call("echo", "c1", x=1), call("confirm", "c2", what="pay")), reply
    )
    first = await run(runner, "pay the bill", client_tools=[CONFIRM])
    assert [s[:3] for s in map(summary, first)] == [
        ("model", "user", "pay the bill"),
        ("model", "root", ""),
        ("tool", "root", "echo"),  # the agent's own call of the same response runs
        ("done", "root"),
    ]
    assert first[1].long_running_tool_ids == ["c2"]
    assert [t.name for t in model.requests[0].tools] == ["echo", "confirm"]
    assert await runner.waiting_tool_calls("u", "s") == {"c2": "confirm"}

    second = await shapes(runner, [result("c2", "yes")], client_tools=[CONFIRM])  # type: ignore[arg-type]
    assert second == [("model", "user", "yes"), ("model", "root", "re: yes"), ("done", "root")]
    assert [(m.role, m.tool_call_id, m.name, m.content) for m in model.requests[1].messages[-3:]] == [
        ("assistant", None, None, ""),
        ("tool", "c1", "echo", '{"echo":{"x":1}}'),
        ("tool", "c2", "confirm", "yes"),  # named after the call it answers
    ]
    assert len(echo.calls) == 1
    assert await runner.waiting_tool_calls("u", "s") == {}
    model.assert_done()


async def test_a_new_user_message_leaves_a_waiting_call_unanswered_for_good() -> None:
    runner, model, _ = runner_with(calls(call("confirm", "c1")), reply)
    await run(runner, "go", client_tools=[CONFIRM])
    await run(runner, "never mind")
    assert await runner.waiting_tool_calls("u", "s") == {}
    assert [(m.role, m.content) for m in model.requests[1].messages[-2:]] == [
        ("tool", "Error: the run was stopped before this call returned"),
        ("user", "never mind"),
    ]


@pytest.mark.parametrize(
    ("results", "error"),
    [
        (
            [result("c9", "yes")],
            r"message 0: a result for call 'c9', but .* waiting in session 's' \(c1, c2\)",
        ),
        ([result("c1", "yes")], r"no result given for the client tool call\(s\) waiting: c2"),
        (
            [result("c1", "a"), result("c1", "b")],
            r"message 1: a result for call 'c1', but .* \(c2\)",
        ),
        ([result("c1", "a"), Message.user("hi")], r"message 1: a user message, but"),
        ([], "a run needs a message"),
    ],
)
async def test_results_must_answer_exactly_the_calls_waiting(results: list[Message], error: str) -> None:
    runner, model, _ = runner_with(calls(call("confirm", "c1"), call("confirm", "c2")))
    await run(runner, "go", client_tools=[CONFIRM])
    with pytest.raises(ValueError, match=error):
        await run(runner, results)  # type: ignore[arg-type]
    assert len(model.requests) == 1
    assert await runner.waiting_tool_calls("u", "s") == {"c1": "confirm", "c2": "confirm"}


async def test_a_client_tool_cannot_shadow_an_agent_tool() -> None:
    runner, model, _ = runner_with()
    error = (await run(runner, client_tools=[ToolDeclaration(name="echo")]))[-1].error
    assert error is not None
    assert (error.type, error.where) == ("ValueError", "agent:root")
    assert error.message == "agent 'root' has its own tool 'echo': a client tool cannot replace it"
    assert model.requests == []


async def test_the_callers_state_delta_is_stored_with_its_message() -> None:
    runner, _, _ = runner_with(lambda request: "ok")
    events = await run(runner, state_delta={"theme": "dark", "gone": None})
    assert events[0].actions.state_delta == {"theme": "dark", "gone": None}
    session = await runner.session_service.get("u", "s")
    assert session is not None and session.state == {"theme": "dark"}


class Seen:
    """A run-level hook: it sees the user's message, and passes it on unchanged."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def on_user_message(self, message: Message, ctx: RunContext) -> Message:
        self.messages.append(message)
        return message


async def test_with_run_hooks_the_results_and_the_state_delta_are_stored_all_the_same() -> None:
    model = ScriptedModel([calls(call("confirm", "c1")), reply])
    seen = Seen()
    runner = Runner(LlmAgent("root", model=model), callbacks=[seen])
    await run(runner, "go", client_tools=[CONFIRM], state_delta={"theme": "dark"})
    events = await run(runner, [result("c1", "yes")], client_tools=[CONFIRM])  # type: ignore[arg-type]
    assert [(m.role, m.content) for m in seen.messages] == [("user", "go"), ("tool", "yes")]
    first = events[0].message
    assert first is not None and (first.role, first.tool_call_id, first.name) == ("tool", "c1", "confirm")
    assert events[-2].content == "re: yes"
    session = await runner.session_service.get("u", "s")
    assert session is not None and session.state == {"theme": "dark"}
