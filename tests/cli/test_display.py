"""Display: what each kind of event and callback activity looks like in the terminal."""

import io
from typing import Any

import pytest
import tenacity

from adk import (
    AgentContext,
    Cont,
    Halt,
    LlmAgent,
    LlmResponse,
    Message,
    ModelContext,
    RetryPolicy,
    Runner,
    SequentialAgent,
    ToolContext,
)
from adk.cli import Display
from adk.errors import ServerError
from adk.events import ToolCall
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


class Refuse:
    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
        return Halt("not allowed") if ctx.tool.name == "delete" else Cont(ctx)


class Polite:
    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        return LlmResponse.text(response.content + ", please") if response.content else response


async def test_tool_decisions_and_a_replaced_response_name_who_took_them() -> None:
    failures = [ConnectionError("reset")]

    def fetch(args: dict[str, Any], ctx: ToolContext) -> Any:
        if failures:
            raise failures.pop()
        return "page"

    calls = LlmResponse.calls(ToolCall.of("delete", id="c1"), ToolCall.of("fetch", id="c2"))
    model = ScriptedModel([calls, "done"])
    tools = [Tool("delete"), Tool("fetch", fetch, idempotent=True)]
    agent = LlmAgent("bot", model=model, tools=tools, callbacks=[Refuse(), Polite()])
    runner = Runner(agent, retry_policy=RetryPolicy(wait=tenacity.wait_fixed(0.5)))
    out, _ = await shown(runner, stream=False)
    assert out == (
        "  ⚙ delete()\n"
        "  ⚙ fetch()\n"
        "  ⛔ Refuse.before_tool halted tool delete; it did not run\n"
        "  ↳ not allowed\n"
        "  ↻ tool fetch failed (ConnectionError: reset); RetryPolicy.on_tool_error retries in 0.50 s "
        "(attempt 2)\n"
        "  ↳ page\n"
        "  ✎ Polite.after_model replaced the output of model scripted\n"
        "bot: done, please\n"
    )


class Counting:
    """Counts tool calls in session state; halts the model when the user says "stop"."""

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        ctx.state["calls"] = ctx.state.get("calls", 0) + 1
        return result

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
        if ctx.request.messages[-1].content == "stop":
            return Halt(LlmResponse.text("Stopped."))
        return Cont(ctx)


async def test_verbose_adds_a_line_per_event_with_its_usage_state_change_and_decisions() -> None:
    from adk.events import Usage

    usage = Usage(prompt_tokens=7, completion_tokens=2, total_tokens=9)
    call = ToolCall.of("lookup", '{"key": "x"}', id="c1")
    answers = [LlmResponse.calls(call, model="m", usage=usage), LlmResponse.text("found", model="m")]
    runner = Runner(
        LlmAgent("bot", model=ScriptedModel(answers), tools=[Tool("lookup", lambda a, c: "x=1")]),
        callbacks=[Counting()],
    )
    out, err = io.StringIO(), io.StringIO()
    display = Display(out, err, color=False, verbose=True)
    for message in ("look x up", "stop"):
        async for event in runner.run("u", "s", message, stream=True):
            display.show(event)
    assert out.getvalue().splitlines() == [
        "  · user chat.completion",
        '  ⚙ lookup(key="x")',
        "  · bot chat.completion model m 7 in / 2 out tokens",
        "  ↳ x=1",
        '  · bot tool.response Δ {"calls": 1}',
        "bot: found",
        "  · bot chat.completion model m",
        "  · bot runner.completion",
        "  · user chat.completion",
        "  ⛔ Counting.before_model halted model scripted; the model was not called",
        "bot: Stopped.",
        "  · bot chat.completion Counting.before_model → halted",
        "  · bot runner.completion",
    ]
    assert err.getvalue() == ""
    quiet = io.StringIO()
    async for event in runner.run("u", "s2", "stop", stream=True):
        Display(quiet, err, color=False).show(event)
    assert "·" not in quiet.getvalue()
