"""LlmAgent: the model and tool hooks of docs/callbacks.md, tool errors, concurrency, the iteration bound."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from adk.agents import LlmAgent
from adk.callbacks.results import Cont, Halt, Raise
from adk.context import ModelContext, ToolContext
from adk.events import LlmResponse, Message, ObjectType, ToolCall
from adk.models.base import LlmRequest
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests._runtime import Recorder, StrictTool, Tool, call, calls, run, shapes, summary


def model_messages(request: LlmRequest) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in request.messages]


# before_model / after_model


async def test_before_model_cont_sends_the_changed_request() -> None:
    class Rewrite:
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            request = ctx.request.model_copy(
                update={"instruction": "be brief", "messages": [*ctx.request.messages, Message.user("extra")]}
            )
            return Cont(dataclasses.replace(ctx, request=request))

    class SeeRequest:
        def __init__(self) -> None:
            self.seen: list[str] = []

        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            self.seen.append(ctx.request.instruction)
            return Cont(ctx)

    model = ScriptedModel(["ok"])
    see = SeeRequest()
    agent = LlmAgent("root", model=model, instruction="be verbose", callbacks=[Rewrite(), see])
    await run(Runner(agent))
    assert see.seen == ["be brief"]
    assert len(model.requests) == 1
    assert model.requests[0].instruction == "be brief"
    assert model_messages(model.requests[0]) == [("user", "hi"), ("user", "extra")]


async def test_before_model_cont_may_switch_the_model() -> None:
    other = ScriptedModel(["from the other model"], name="other")

    class Switch:
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            return Cont(dataclasses.replace(ctx, model=other))

    agent = LlmAgent("root", model=ScriptedModel([]), callbacks=[Switch()])
    assert (await shapes(Runner(agent)))[1] == ("model", "root", "from the other model")
    other.assert_done()


async def test_before_model_halt_skips_the_model_and_after_model_but_runs_its_tool_calls() -> None:
    trace: list[tuple[str, ...]] = []

    class HaltFirst:
        def __init__(self) -> None:
            self.calls = 0

        def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
            self.calls += 1
            if self.calls == 1:
                return Halt(calls(call("echo", "c1", x=1)))
            return Cont(ctx)

    model = ScriptedModel(["after the tool"])
    echo = Tool("echo")
    agent = LlmAgent(
        "root",
        model=model,
        tools=[echo],
        callbacks=[Recorder("before", trace), HaltFirst(), Recorder("after", trace)],
    )
    assert await shapes(Runner(agent)) == [
        ("model", "user", "hi"),
        ("model", "root", "", [("echo", '{"x": 1}')]),
        ("tool", "root", "echo", "c1", '{"echo":{"x":1}}'),
        ("model", "root", "after the tool"),
        ("done", "root"),
    ]
    assert echo.calls == [{"x": 1}]
    # the model was called once, for the second turn, and saw the halted response and the tool result
    assert len(model.requests) == 1
    assert [m.role for m in model.requests[0].messages] == ["user", "assistant", "tool"]
    model_hooks = [t for t in trace if "model" in t[1]]
    assert model_hooks == [
        ("before", "before_model", "root"),  # first call: halted before "after" saw it, no after_model
        ("before", "before_model", "root"),
        ("after", "before_model", "root"),
        ("before", "after_model", "root"),
        ("after", "after_model", "root"),
    ]


async def test_after_model_is_a_fold_and_its_output_is_what_the_agent_uses() -> None:
    class Append:
        def __init__(self, s: str) -> None:
            self.s = s

        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            return LlmResponse.text(response.content + self.s)

    runner = Runner(
        LlmAgent("root", model=ScriptedModel(["x"]), callbacks=[Append("1")]), callbacks=[Append("0")]
    )
    events = await run(runner, callbacks=[Append("2")])
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "x012"),
        ("done", "root"),
    ]
    session = await runner.session_service.get("u", "s")
    assert session is not None
    assert session.events[-2].message == Message.assistant("x012")


async def test_after_model_may_add_tool_calls() -> None:
    class AskForTool:
        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            if response.content == "first":
                return calls(call("echo", "c1", y=2))
            return response

    echo = Tool("echo")
    agent = LlmAgent("root", model=ScriptedModel(["first", "second"]), tools=[echo], callbacks=[AskForTool()])
    assert await shapes(Runner(agent)) == [
        ("model", "user", "hi"),
        ("model", "root", "", [("echo", '{"y": 2}')]),
        ("tool", "root", "echo", "c1", '{"echo":{"y":2}}'),
        ("model", "root", "second"),
        ("done", "root"),
    ]


# before_tool / after_tool


async def test_before_tool_cont_uses_the_changed_args() -> None:
    class Double:
        def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
            return Cont(dataclasses.replace(ctx, args={"x": ctx.args["x"] * 2}))

    echo = Tool("echo")
    model = ScriptedModel([calls(call("echo", "c1", x=21)), "done"])
    events = await shapes(Runner(LlmAgent("root", model=model, tools=[echo], callbacks=[Double()])))
    assert echo.calls == [{"x": 42}]
    assert events[2] == ("tool", "root", "echo", "c1", '{"echo":{"x":42}}')


async def test_before_tool_halt_skips_the_tool_and_after_tool_runs_on_the_halt_result() -> None:
    trace: list[tuple[str, ...]] = []

    class Cache:
        def before_tool(self, ctx: ToolContext) -> Halt[Any]:
            return Halt({"cached": True})

    class SeeResult:
        def __init__(self) -> None:
            self.results: list[Any] = []

        def after_tool(self, result: Any, ctx: ToolContext) -> Any:
            self.results.append(result)
            return {**result, "seen": ctx.tool_call_id}

    echo = Tool("echo")
    see = SeeResult()
    model = ScriptedModel([calls(call("echo", "c1", x=1)), "done"])
    agent = LlmAgent("root", model=model, tools=[echo], callbacks=[Cache(), Recorder("rec", trace), see])
    events = await shapes(Runner(agent))
    assert echo.calls == []
    assert see.results == [{"cached": True}]
    assert events[2] == ("tool", "root", "echo", "c1", '{"cached":true,"seen":"c1"}')
    assert [t for t in trace if "tool" in t[1]] == [("rec", "after_tool", "echo")]
    assert model.requests[1].messages[-1] == Message.tool(
        '{"cached":true,"seen":"c1"}', tool_call_id="c1", name="echo"
    )


async def test_after_tool_is_a_fold() -> None:
    class Wrap:
        def __init__(self, tag: str) -> None:
            self.tag = tag

        def after_tool(self, result: Any, ctx: ToolContext) -> Any:
            return {self.tag: result}

    model = ScriptedModel([calls(call("echo", "c1")), "done"])
    runner = Runner(
        LlmAgent("root", model=model, tools=[Tool("echo", lambda a, c: 1)], callbacks=[Wrap("b")]),
        callbacks=[Wrap("a")],
    )
    events = await shapes(runner, callbacks=[Wrap("c")])
    assert events[2] == ("tool", "root", "echo", "c1", '{"c":{"b":{"a":1}}}')


# on_tool_error: every way a tool call can fail goes back to the model


class SeeToolErrors:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Raise:
        self.seen.append((ctx.tool.name, type(error).__name__, str(error)))
        return Raise(error)


def boom(args: dict[str, Any], ctx: ToolContext) -> Any:
    raise ValueError("the disk is full")


@pytest.mark.parametrize(
    ("tool_call", "error_type", "message"),
    [
        (ToolCall.of("boom", "{}", id="c1"), "ValueError", "the disk is full"),
        (
            ToolCall.of("strict", '{"n": 1', id="c1"),
            "ToolArgumentsError",
            "invalid arguments for tool 'strict': arguments are not valid JSON "
            "(EOF while parsing an object at line 1 column 7): '{\"n\": 1'",
        ),
        (
            ToolCall.of("strict", "[1]", id="c1"),
            "ToolArgumentsError",
            "invalid arguments for tool 'strict': arguments must be a JSON object, got a JSON array: '[1]'",
        ),
        (
            ToolCall.of("strict", '{"n": "one"}', id="c1"),
            "ToolArgumentsError",
            "invalid arguments for tool 'strict': n: expected an integer, got 'one'",
        ),
        (
            ToolCall.of("strict", '{"m": 1}', id="c1"),
            "ToolArgumentsError",
            "invalid arguments for tool 'strict': n: field required; m: unexpected argument",
        ),
        (
            ToolCall.of("nope", "{}", id="c1"),
            "ToolNotFoundError",
            "unknown tool 'nope'; available: boom, strict",
        ),
    ],
    ids=["raises", "bad-json", "not-an-object", "wrong-type", "missing-and-extra", "unknown-tool"],
)
async def test_a_failed_tool_call_goes_to_on_tool_error_then_back_to_the_model(
    tool_call: ToolCall, error_type: str, message: str
) -> None:
    see = SeeToolErrors()
    strict = StrictTool("strict")
    model = ScriptedModel([calls(tool_call), "sorry"])
    agent = LlmAgent("root", model=model, tools=[Tool("boom", boom), strict], callbacks=[see])
    events = await run(Runner(agent))
    name = tool_call.function.name
    assert see.seen == [(name, error_type, message)]
    assert strict.calls == []
    text = f"Error: {error_type}: {message}"
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "", [(name, tool_call.function.arguments)]),
        ("tool", "root", name, "c1", text),
        ("model", "root", "sorry"),
        ("done", "root"),
    ]
    failed = events[2]
    assert failed.error is not None
    assert (failed.error.type, failed.error.where) == (error_type, f"tool:{name}")
    # the loop went on: the model saw the error result naming the problem
    assert model.requests[1].messages[-1] == Message.tool(text, tool_call_id="c1", name=name)


async def test_a_tool_error_result_stays_in_the_history_of_the_next_run() -> None:
    model = ScriptedModel([calls(call("nope", "c1")), "sorry", "next"])
    runner = Runner(LlmAgent("root", model=model))
    await run(runner, "first")
    await run(runner, "second")
    assert [m.role for m in model.requests[2].messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert model.requests[2].messages[2].tool_call_id == "c1"


# CallbackError


class Broken:
    def __init__(self, hook: str) -> None:
        self.hook = hook

    def before_model(self, ctx: ModelContext) -> Any:
        return self._fail("before_model", Cont(ctx))

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> Any:
        return self._fail("after_model", response)

    def before_tool(self, ctx: ToolContext) -> Any:
        return self._fail("before_tool", Cont(ctx))

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        return self._fail("after_tool", result)

    def _fail(self, hook: str, ok: Any) -> Any:
        if hook == self.hook:
            raise RuntimeError(f"bug in {hook}")
        return ok


class SetStateInTool(Tool):
    def __init__(self) -> None:
        super().__init__("note", self._note)

    @staticmethod
    def _note(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.state["noted"] = args["v"]
        return "noted"


class FailSecond(Broken):
    """Fails in its hook on the second model turn only."""

    def __init__(self, hook: str) -> None:
        super().__init__(hook)
        self.turns = 0

    def before_model(self, ctx: ModelContext) -> Any:
        self.turns += 1
        return super().before_model(ctx) if self.turns == 2 else Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> Any:
        return super().after_model(response, ctx) if self.turns == 2 else response


@pytest.mark.parametrize("hook", ["before_model", "after_model"])
async def test_a_callback_error_in_a_model_hook_ends_the_invocation_with_an_error_event(hook: str) -> None:
    # The first model turn succeeds (a tool writes state); the second turn's hook fails.
    model = ScriptedModel([calls(call("note", "c1", v=1)), "never seen"])
    runner = Runner(LlmAgent("root", model=model, tools=[SetStateInTool()], callbacks=[FailSecond(hook)]))
    events = await run(runner)
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "", [("note", '{"v": 1}')]),
        ("tool", "root", "note", "c1", "noted"),
        ("error", "root", "CallbackError", f"callback:FailSecond.{hook}"),
    ]
    error = events[-1]
    assert error.done is True
    assert error.error is not None
    assert error.error.message == (
        f"callback FailSecond failed in {hook}: raised RuntimeError: bug in {hook}"
    )
    session = await runner.session_service.get("u", "s")
    assert session is not None
    assert [e.id for e in session.events] == [e.id for e in events]
    assert session.state == {"noted": 1}
    assert len(model.requests) == (1 if hook == "before_model" else 2)


@pytest.mark.parametrize("hook", ["before_tool", "after_tool"])
async def test_a_callback_error_in_a_tool_hook_becomes_that_tool_calls_error(hook: str) -> None:
    model = ScriptedModel([calls(call("echo", "c1")), "recovered"])
    echo = Tool("echo")
    events = await run(Runner(LlmAgent("root", model=model, tools=[echo], callbacks=[Broken(hook)])))
    text = f"Error: CallbackError: callback Broken failed in {hook}: raised RuntimeError: bug in {hook}"
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "", [("echo", "{}")]),
        ("tool", "root", "echo", "c1", text),
        ("model", "root", "recovered"),
        ("done", "root"),
    ]
    assert events[2].error is not None
    assert events[2].error.where == f"callback:Broken.{hook}"
    assert echo.calls == ([] if hook == "before_tool" else [{}])


async def test_a_hook_returning_a_wrong_result_is_a_callback_error() -> None:
    class Wrong:
        def before_model(self, ctx: ModelContext) -> Any:
            return ctx  # forgot Cont(...)

    events = await run(Runner(LlmAgent("root", model=ScriptedModel([]), callbacks=[Wrong()])))
    last = events[-1]
    assert last.object == ObjectType.ERROR
    assert last.error is not None
    assert (
        last.error.where
        == "callback:test_a_hook_returning_a_wrong_result_is_a_callback_error.<locals>.Wrong.before_model"
    )
    assert "may return only Cont or Halt" in last.error.message


# concurrent tool calls


async def test_tool_calls_of_one_response_run_concurrently_with_results_in_call_order() -> None:
    gate = asyncio.Event()
    order: list[str] = []

    async def first(args: dict[str, Any], ctx: ToolContext) -> str:
        await gate.wait()  # only the second call can open it: the calls must run at once
        order.append("first")
        return "first done"

    async def second(args: dict[str, Any], ctx: ToolContext) -> str:
        order.append("second")
        gate.set()
        return "second done"

    async def third(args: dict[str, Any], ctx: ToolContext) -> str:
        raise ValueError("third failed")

    model = ScriptedModel([calls(call("first", "c1"), call("second", "c2"), call("third", "c3")), "done"])
    agent = LlmAgent(
        "root", model=model, tools=[Tool("first", first), Tool("second", second), Tool("third", third)]
    )
    events = await shapes(Runner(agent))
    assert order == ["second", "first"]
    assert events[2:5] == [
        ("tool", "root", "first", "c1", "first done"),
        ("tool", "root", "second", "c2", "second done"),
        ("tool", "root", "third", "c3", "Error: ValueError: third failed"),
    ]
    assert [(m.role, m.tool_call_id) for m in model.requests[1].messages[2:]] == [
        ("tool", "c1"),
        ("tool", "c2"),
        ("tool", "c3"),
    ]


# the iteration bound and ending the invocation


async def test_the_iteration_bound_ends_the_invocation_with_an_error_event() -> None:
    model = ScriptedModel([calls(call("echo", f"c{i}")) for i in range(3)])
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("echo")], max_iterations=3))
    events = await run(runner)
    assert [summary(e)[0] for e in events] == [
        "model",
        "model",
        "tool",
        "model",
        "tool",
        "model",
        "tool",
        "error",
    ]
    error = events[-1]
    assert error.error is not None
    assert (error.error.type, error.error.where) == ("MaxIterationsExceeded", "agent:root")
    assert error.error.message == "agent 'root': the model still asked for tools after max_iterations=3"
    model.assert_done()


def test_max_iterations_must_be_positive() -> None:
    with pytest.raises(ValueError, match="agent 'root': max_iterations must be at least 1, got 0"):
        LlmAgent("root", model=ScriptedModel([]), max_iterations=0)


async def test_end_invocation_from_a_tool_stops_further_model_calls() -> None:
    def stop(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.end_invocation()
        return "stopped"

    model = ScriptedModel([calls(call("stop", "c1"), call("echo", "c2"))])
    echo = Tool("echo")
    trace: list[tuple[str, ...]] = []
    agent = LlmAgent("root", model=model, tools=[Tool("stop", stop), echo], callbacks=[Recorder("r", trace)])
    assert await shapes(Runner(agent)) == [
        ("model", "user", "hi"),
        ("model", "root", "", [("stop", "{}"), ("echo", "{}")]),
        ("tool", "root", "stop", "c1", "stopped"),
        ("tool", "root", "echo", "c2", '{"echo":{}}'),
        ("done", "root"),
    ]
    model.assert_done()
    # the sibling call still ran; after_agent did not
    assert ("r", "after_agent", "root") not in trace


async def test_end_invocation_from_before_model_stops_the_next_turn() -> None:
    class EndAfterFirst:
        def after_tool(self, result: Any, ctx: ToolContext) -> Any:
            ctx.end_invocation()
            return result

    model = ScriptedModel([calls(call("echo", "c1"))])
    await run(Runner(LlmAgent("root", model=model, tools=[Tool("echo")], callbacks=[EndAfterFirst()])))
    model.assert_done()


# streaming


async def test_stream_yields_partial_chunks_then_the_complete_message_and_stores_only_complete_events() -> (
    None
):
    model = ScriptedModel(["the answer is 42"])
    runner = Runner(LlmAgent("root", model=model))
    events = await run(runner, stream=True)
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("chunk", "root", "the"),
        ("chunk", "root", " answer"),
        ("chunk", "root", " is"),
        ("chunk", "root", " 42"),
        ("model", "root", "the answer is 42"),
        ("done", "root"),
    ]
    assert [e.is_partial for e in events] == [False, True, True, True, True, False, False]
    assert events[1].object == ObjectType.CHAT_COMPLETION_CHUNK
    assert model.requests[0].stream is True
    session = await runner.session_service.get("u", "s")
    assert session is not None
    assert [e.id for e in session.events] == [events[0].id, events[5].id, events[6].id]


async def test_stream_with_tool_calls() -> None:
    model = ScriptedModel([calls(call("echo", "c1", city="Paris", days=2)), "all done"])
    events = await shapes(Runner(LlmAgent("root", model=model, tools=[Tool("echo")])), stream=True)
    assert events == [
        ("model", "user", "hi"),
        ("chunk", "root", "", [("c1", "echo", '{"city":')]),
        ("chunk", "root", "", [("c1", "echo", ' "Paris",')]),
        ("chunk", "root", "", [("c1", "echo", ' "days":')]),
        ("chunk", "root", "", [("c1", "echo", " 2}")]),
        ("model", "root", "", [("echo", '{"city": "Paris", "days": 2}')]),
        ("tool", "root", "echo", "c1", '{"echo":{"city":"Paris","days":2}}'),
        ("chunk", "root", "all"),
        ("chunk", "root", " done"),
        ("model", "root", "all done"),
        ("done", "root"),
    ]
