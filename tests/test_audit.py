"""AuditLog: one INFO record per hook call on the `adk.audit` logger, with exact fields."""

import logging

import pytest
import tenacity

from adk import Cont, Halt, LlmAgent, LlmResponse, ModelContext, RetryPolicy, Runner, ToolContext
from adk.audit import AuditLog
from adk.errors import ServerError
from adk.events import ToolCall
from adk.testing import ScriptedModel
from tests._runtime import Tool, echo

pytestmark = pytest.mark.usefixtures("testing")


async def test_every_hook_call_is_one_record(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedModel(
        [
            LlmResponse.calls(
                ToolCall.of("echo", '{"text": "hi"}', id="c1"), ToolCall.of("echo", '{"fail": true}', id="c2")
            ),
            ServerError("boom"),
            "done",
        ]
    )
    agent = LlmAgent("assistant", model=model, tools=[Tool("echo", echo)])
    runner = Runner(agent, callbacks=[AuditLog()], retry_policy=RetryPolicy(wait=tenacity.wait_fixed(0.5)))
    with caplog.at_level(logging.INFO, logger="adk.audit"):
        events = [e async for e in runner.run("u", "s", "hi", invocation_id="inv1")]
    assert events[-1].object == "runner.completion"
    prefix = "invocation=inv1 agent=assistant "
    assert [r.getMessage().removeprefix(prefix).removeprefix("hook=") for r in caplog.records] == [
        "before_agent outcome=start",
        "before_model model=scripted attempt=1 outcome=call",
        "after_model model=scripted attempt=1 outcome=tool_calls:echo,echo",
        "before_tool tool=echo tool_call_id=c1 attempt=1 outcome=call",
        "after_tool tool=echo tool_call_id=c1 attempt=1 outcome=result",
        "before_tool tool=echo tool_call_id=c2 attempt=1 outcome=call",
        "on_tool_error tool=echo tool_call_id=c2 attempt=1 outcome=error:ValueError",
        "before_model model=scripted attempt=1 outcome=call",
        "on_model_error model=scripted attempt=1 outcome=error:ServerError",
        # read from the attempt.failed event, as it happened
        "decision=retried by=callback:RetryPolicy.on_model_error target=model:scripted attempt=2 wait=0.5 "
        "error=ServerError",
        "after_model model=scripted attempt=2 outcome=text",
        "after_agent outcome=end",
    ]
    assert {(r.name, r.levelno) for r in caplog.records} == {("adk.audit", logging.INFO)}
    assert caplog.records[3].__dict__["adk"] == {
        "invocation": "inv1",
        "agent": "assistant",
        "hook": "before_tool",
        "tool": "echo",
        "tool_call_id": "c1",
        "attempt": 1,
        "outcome": "call",
    }


async def test_a_disabled_logger_costs_no_formatting(caplog: pytest.LogCaptureFixture) -> None:
    runner = Runner(LlmAgent("a", model=ScriptedModel(["ok"])), callbacks=[AuditLog()])
    with caplog.at_level(logging.WARNING, logger="adk.audit"):
        events = [e async for e in runner.run("u", "s", "hi")]
    assert events[-2].content == "ok"
    assert caplog.records == []


async def test_logger_and_level_can_be_chosen(caplog: pytest.LogCaptureFixture) -> None:
    audit = AuditLog(logging.getLogger("myapp.audit"), level=logging.WARNING)
    runner = Runner(LlmAgent("a", model=ScriptedModel(["ok"])), callbacks=[audit])
    with caplog.at_level(logging.WARNING, logger="myapp.audit"):
        [e async for e in runner.run("u", "s", "hi", invocation_id="i")]
    first = caplog.records[0]
    assert (first.name, first.levelno, first.getMessage()) == (
        "myapp.audit",
        logging.WARNING,
        "invocation=i agent=a hook=before_agent outcome=start",
    )
    assert len(caplog.records) == 4


class Guard:
    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
        first = len(ctx.request.messages) == 1  # the user's message only: answer with a tool call
        return Halt(LlmResponse.calls(ToolCall.of("delete", id="c1"))) if first else Cont(ctx)


class Refuse:
    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
        return Halt("refused")


async def test_decisions_read_from_events_name_the_callback_and_hook(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel(["ok"])
    agent = LlmAgent("a", model=model, tools=[Tool("delete", echo)], callbacks=[Refuse()])
    runner = Runner(agent, callbacks=[AuditLog(), Guard()])
    with caplog.at_level(logging.INFO, logger="adk.audit"):
        [e async for e in runner.run("u", "s", "hi", invocation_id="i")]
    decisions = [r.__dict__["adk"] for r in caplog.records if "decision" in r.__dict__["adk"]]
    assert decisions == [
        {
            "invocation": "i",
            "agent": "a",
            "decision": "halted",
            "by": "callback:Guard.before_model",
            "target": "model:scripted",
        },
        {
            "invocation": "i",
            "agent": "a",
            "decision": "halted",
            "by": "callback:Refuse.before_tool",
            "target": "tool:delete",
        },
    ]
