"""What a caller brings to a run: tools it runs itself (their calls wait for its results) and state."""

from __future__ import annotations

import pytest

from adk.agents import LlmAgent
from adk.callbacks.results import Cont, Halt
from adk.context import RunContext, ToolContext
from adk.errors import ApprovalError
from adk.events import Message, ObjectType, ToolDeclaration
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, reply, run, summary

CONFIRM = ToolDeclaration(name="confirm", description="Ask the user to confirm")


def runner_with(*steps: object, callbacks: list[object] | None = None) -> tuple[Runner, ScriptedModel, Tool]:
    model = ScriptedModel(steps)  # type: ignore[arg-type]  # the steps are valid ones
    echo = Tool("echo")
    agent = LlmAgent("root", model=model, tools=[echo], callbacks=callbacks or [])  # type: ignore[list-item]
    return Runner(agent), model, echo


async def answer(runner: Runner, results: dict[str, str], **kw: object) -> list[object]:
    return [e async for e in runner.run("u", "s", tool_results=results, **kw)]  # type: ignore[arg-type]


async def test_a_call_to_a_client_tool_waits_and_its_result_continues_the_run() -> None:
    runner, model, echo = runner_with(
        calls(call("echo", "c1", x=1), call("confirm", "c2", what="pay")), reply
    )
    first = await run(runner, "pay the bill", client_tools=[CONFIRM])
    assert [(e.object, e.long_running_tool_ids) for e in first] == [
        (ObjectType.CHAT_COMPLETION, []),  # the user's message
        (ObjectType.CHAT_COMPLETION, []),  # the model's two calls
        (ObjectType.TOOL_RESPONSE, []),  # the agent's own call of the same response runs
        (ObjectType.CLIENT_PENDING, ["c2"]),  # the client's waits, marked as the client's
        (ObjectType.RUNNER_PAUSED, ["c2"]),
    ]
    assert [t.name for t in model.requests[0].tools] == ["echo", "confirm"]

    second = await answer(runner, {"c2": "yes"}, client_tools=[CONFIRM])
    assert [summary(e) for e in second] == [  # type: ignore[arg-type]
        ("tool", "root", "confirm", "c2", "yes"),
        ("model", "root", "re: yes"),
        ("done", "root"),
    ]
    assert [(m.role, m.tool_call_id, m.content) for m in model.requests[1].messages[-2:]] == [
        ("tool", "c1", '{"echo":{"x":1}}'),
        ("tool", "c2", "yes"),
    ]
    assert len(echo.calls) == 1
    model.assert_done()


async def test_before_tool_guards_client_tool_calls_too() -> None:
    class NoConfirm:
        def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
            return Halt("not allowed") if ctx.tool.name == "confirm" else Cont(ctx)

    runner, _, _ = runner_with(calls(call("confirm", "c1")), reply, callbacks=[NoConfirm()])
    events = await run(runner, "go", client_tools=[CONFIRM])
    assert [summary(e) for e in events][2:] == [
        ("tool", "root", "confirm", "c1", "not allowed"),
        ("model", "root", "re: not allowed"),
        ("done", "root"),
    ]


async def test_results_must_answer_exactly_the_calls_waiting() -> None:
    runner, model, _ = runner_with(calls(call("confirm", "c1"), call("confirm", "c2")))
    await run(runner, "go", client_tools=[CONFIRM])
    with pytest.raises(ApprovalError, match="missing: 'c2'"):
        await answer(runner, {"c1": "yes"})
    assert len(model.requests) == 1


async def test_a_new_user_message_leaves_a_waiting_call_unanswered_for_good() -> None:
    runner, model, _ = runner_with(calls(call("confirm", "c1")), reply)
    await run(runner, "go", client_tools=[CONFIRM])
    await run(runner, "never mind")
    assert model.requests[1].messages[-1] == Message.user("never mind")
    assert model.requests[1].messages[-2].role == "tool"  # the model is told the call did not return


async def test_a_client_tool_cannot_shadow_an_agent_tool() -> None:
    runner, model, _ = runner_with()
    error = (await run(runner, client_tools=[ToolDeclaration(name="echo")]))[-1].error
    assert error is not None
    assert (error.type, error.where) == ("ValueError", "agent:root")
    assert error.message == "agent 'root' has its own tool 'echo': a client tool cannot replace it"
    assert model.requests == []


async def test_the_callers_state_delta_is_stored_with_its_message_or_before_its_answers() -> None:
    runner, _, _ = runner_with(calls(call("confirm", "c1")), reply)
    events = await run(runner, "go", client_tools=[CONFIRM], state_delta={"theme": "dark", "gone": None})
    assert events[0].actions.state_delta == {"theme": "dark", "gone": None}
    resumed = await answer(runner, {"c1": "yes"}, state_delta={"theme": "light"})
    assert (resumed[0].object, resumed[0].author, resumed[0].actions.state_delta) == (  # type: ignore[attr-defined]
        ObjectType.STATE_UPDATE,
        "user",
        {"theme": "light"},
    )
    session = await runner.session_service.get("u", "s")
    assert session is not None and session.state == {"theme": "light"}


class Seen:
    """A run-level hook: it sees the user's message, and passes it on unchanged."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def on_user_message(self, message: Message, ctx: RunContext) -> Message:
        self.messages.append(message)
        return message


async def test_with_run_hooks_the_state_delta_is_stored_all_the_same() -> None:
    seen = Seen()
    model = ScriptedModel(["ok"])
    runner = Runner(LlmAgent("root", model=model), callbacks=[seen])
    events = await run(runner, "go", state_delta={"theme": "dark"})
    assert [m.content for m in seen.messages] == ["go"]
    assert events[0].actions.state_delta == {"theme": "dark"}
    session = await runner.session_service.get("u", "s")
    assert session is not None and session.state == {"theme": "dark"}
