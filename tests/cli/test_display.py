"""Display: what each kind of event and callback activity looks like in the terminal."""

import io
from typing import Any

import pytest

from adk import (
    AgentContext,
    Cont,
    Halt,
    LlmAgent,
    LlmResponse,
    Message,
    Runner,
    SequentialAgent,
    ToolCall,
    ToolContext,
)
from adk.cli import Display
from adk.errors import ServerError
from adk.testing import ScriptedModel, Stream
from tests._runtime import Tool

pytestmark = pytest.mark.usefixtures("testing")


def missing(args: dict[str, Any], ctx: ToolContext) -> Any:
    raise KeyError("missing")


async def shown(runner: Runner, message: str = "hi", *, stream: bool = True) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    display = Display(out, err, color=False)
    async for event in runner.run("u", "s", message, stream=stream):
        display.show(event)
    return out.getvalue(), err.getvalue()


async def test_streamed_text_then_a_failed_tool_call() -> None:
    model = ScriptedModel([LlmResponse.calls(ToolCall.of("lookup", '{"key": "x"}')), "no luck today"])
    out, err = await shown(Runner(LlmAgent("bot", model=model, tools=[Tool("lookup", missing)])))
    assert out == ("  ⚙ lookup(key=\"x\")\n  ✗ lookup: Error: KeyError: 'missing'\nbot: no luck today\n")
    assert err == ""


async def test_a_discarded_streamed_attempt_is_called_out() -> None:
    model = ScriptedModel([Stream(["Hel", "lo"], ServerError("cut")), "Hello again"], name="m")
    out, _ = await shown(Runner(LlmAgent("bot", model=model)))
    lines = out.splitlines()
    assert lines[0] == "bot: Hello"
    assert lines[1].startswith(
        "  ↻ model m failed (ServerError: cut); RetryPolicy.on_model_error retries in "
    )
    assert lines[2] == "  ⟲ discarded: attempt 1 on model 'm' failed after partial output"
    assert lines[3:] == ["bot: Hello again"]


class StopAgent:
    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext] | Halt[str]:
        return Halt("closed for maintenance")


class Rewrite:
    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        return Message.assistant("rewritten")


async def test_agent_halts_and_replaced_outputs_are_called_out() -> None:
    halted = LlmAgent("first", model=ScriptedModel([]), callbacks=[StopAgent()])
    out, _ = await shown(Runner(halted))
    assert (
        out
        == "  ⛔ StopAgent.before_agent halted agent first; it did not run\nfirst: closed for maintenance\n"
    )

    replaced = LlmAgent("second", model=ScriptedModel(["original"]), callbacks=[Rewrite()])
    out, _ = await shown(Runner(replaced), stream=False)
    assert out == (
        "second: original\n  ✎ Rewrite.after_agent replaced the output of agent second\nsecond: rewritten\n"
    )


async def test_each_agent_of_a_workflow_speaks_under_its_name() -> None:
    root = SequentialAgent(
        "flow",
        sub_agents=[
            LlmAgent("writer", model=ScriptedModel(["a draft"])),
            LlmAgent("editor", model=ScriptedModel(["a final text"])),
        ],
    )
    out, _ = await shown(Runner(root))
    assert out == "writer: a draft\neditor: a final text\n"


def test_colour_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert Display(Tty()).color is True
    assert Display(io.StringIO()).color is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert Display(Tty()).color is False
    display = Display(Tty(), color=True)
    display.user("hi")
    assert display.out.getvalue() == "\x1b[1myou:\x1b[0m hi\n"  # type: ignore[attr-defined]
