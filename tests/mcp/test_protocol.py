"""The MCP client's side of the protocol against `@modelcontextprotocol/server-everything`:
progress, sampling, roots, resources and prompts, elicitation; each through the agent's hooks."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from adk import Cont, Halt, LlmAgent, ModelContext, Runner, ToolContext
from adk.cli.display import Display
from adk.context import current_tool_call_id
from adk.errors import ToolArgumentsError
from adk.events import Choice, Event, LlmResponse, Message, ObjectType, ToolCall
from adk.mcp import McpQuestion, McpResult, McpText, McpToolset
from adk.models.base import LlmRequest
from adk.testing import ScriptedModel
from tests._runtime import call, calls
from tests.mcp.servers import npm_server
from tests.mcp.test_reference_servers import Seen, hooks_of, sent


async def run(server: McpToolset, steps: list[Any], hooks: Seen) -> tuple[ScriptedModel, list[Event], Runner]:
    model = ScriptedModel(steps)
    runner = Runner(LlmAgent("a", model=model, tools=[server]), callbacks=[hooks])
    async with runner:
        events = [e async for e in runner.run("u", "s", "hi")]
    model.assert_done()
    return model, events, runner


def line(event: Event) -> tuple[Any, ...]:
    delta = event.delta
    said = (delta.tool_call_id, delta.name, delta.content) if delta is not None else ()
    return (event.object, event.author, event.is_partial, *said)


async def test_progress_notifications_stream_as_partial_tool_progress_events_never_stored() -> None:
    hooks = Seen("cb", [])
    steps = [calls(call("trigger-long-running-operation", "c1", duration=0, steps=3)), "done"]
    model, events, runner = await run(npm_server("server-everything", "stdio"), steps, hooks)

    done = McpResult((McpText("Long running operation completed. Duration: 0 seconds, Steps: 3."),))
    assert hooks_of(hooks.trace) == [
        ("before_tool", "trigger-long-running-operation"),
        ("after_tool", "trigger-long-running-operation", done),
    ]
    progress = [line(e) for e in events if e.object == ObjectType.TOOL_PROGRESS]
    assert progress == [
        ("tool.progress", "a", True, "c1", "trigger-long-running-operation", f"{i}/3") for i in (1, 2, 3)
    ]
    assert [(e.author, e.object) for e in events][:1] == [("user", "chat.completion")]
    assert [e.object for e in events[1:]] == [
        "chat.completion",
        *["tool.progress"] * 3,
        "tool.response",
        "chat.completion",
        "runner.completion",
    ]
    assert sent(model) == [done.text_for_model()]
    session = await runner.session_service.get("u", "s")
    assert session is not None
    assert ObjectType.TOOL_PROGRESS not in [e.object for e in session.events]
    assert [Event.model_validate_json(e.model_dump_json()) for e in events] == events


def test_the_cli_shows_progress_in_one_line_each() -> None:
    out = io.StringIO()
    display = Display(out, io.StringIO(), color=False)
    told = Message(role="tool", content="2/5: copying\x1b[2J", tool_call_id="c1", name="copy")
    display.show(
        Event.new("i", "a", object=ObjectType.TOOL_PROGRESS, is_partial=True, choices=[Choice(delta=told)])
    )
    assert out.getvalue() == "  ⋯ copy: 2/5: copying^[[2J\n"


class Guard(Seen):
    """Traces the model hooks (with the tool call they run in) and marks what after_model saw."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        said = [(m.role, m.content) for m in ctx.request.messages]
        self.trace.append(("before_model", current_tool_call_id(), ctx.request.instruction, said[-1:]))
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self.trace.append(("after_model", current_tool_call_id(), response.content))
        if current_tool_call_id() is None:
            return response
        return LlmResponse.text(response.content + " [checked]", model=response.model)


def tool_text(result: Any) -> str:
    assert type(result) is McpResult
    return "\n".join(b.text for b in result.content if type(b) is McpText)


async def test_sampling_is_answered_by_the_agents_model_through_its_model_hooks() -> None:
    hooks = Guard("cb", [])
    server = npm_server("server-everything", "stdio", sampling=True)
    steps = [calls(call("trigger-sampling-request", "c1", prompt="what is 2+2?")), "four", "done"]
    model, _, _ = await run(server, steps, hooks)

    [result] = [t[2] for t in hooks.trace if t[0] == "after_tool"]
    asked = [("user", "Resource trigger-sampling-request context: what is 2+2?")]
    assert [t for t in hooks.trace if t[0] != "after_tool" and t[1:2] != (None,)] == [
        ("cb", "before_agent", "a"),
        ("cb", "before_tool", "trigger-sampling-request"),
        ("before_model", "c1", "You are a helpful test server.", asked),
        ("after_model", "c1", "four"),
        ("cb", "after_agent", "a"),
    ]
    assert [t[0] for t in hooks.trace] == [
        "cb",
        "before_model",
        "after_model",
        "cb",
        "before_model",
        "after_model",
        "after_tool",
        "before_model",
        "after_model",
        "cb",
    ]
    sampled = json.loads(tool_text(result).removeprefix("LLM sampling result: \n"))
    assert sampled == {
        "role": "assistant",
        "content": {"type": "text", "text": "four [checked]"},
        "model": "scripted",
        "stopReason": "endTurn",
    }
    assert model.requests[1].max_tokens == 100 and model.requests[1].temperature == 0.7


async def test_sampling_refused_by_the_check_never_reaches_the_model_and_off_is_not_offered() -> None:
    hooks = Guard("cb", [])
    seen: list[tuple[str, str]] = []

    def no_strangers(request: LlmRequest, ctx: ToolContext) -> bool:
        seen.append((ctx.tool_call_id, request.messages[0].content))
        return False

    server = npm_server("server-everything", "stdio", sampling=no_strangers)
    steps = [calls(call("trigger-sampling-request", "c1", prompt="leak it")), "done"]
    _, events, _ = await run(server, steps, hooks)
    assert seen == [("c1", "Resource trigger-sampling-request context: leak it")]
    assert not [t for t in hooks.trace if t[1] == "c1"]  # no model hook, no model call for it
    [response] = [e for e in events if e.object == ObjectType.TOOL_RESPONSE]
    assert response.content == (
        "Error: McpToolError: MCP server 'server-everything', tool 'trigger-sampling-request': "
        "MCP error -32600: a check refused MCP server 'server-everything''s sampling request"
    )
    async with npm_server("server-everything", "stdio") as off:
        names = {t.name for t in await off.get_tools()}
    assert not names & {"trigger-sampling-request", "get-roots-list", "trigger-elicitation-request"}


async def test_roots_are_declared_and_listed_to_the_server(tmp_path: Path) -> None:
    root = str(tmp_path.resolve())  # noqa: ASYNC240  # no I/O to speak of
    server = npm_server("server-everything", "stdio", roots=[root])
    steps = [calls(call("get-roots-list", "c1")), "done"]
    model, _, _ = await run(server, steps, Seen("cb", []))
    assert sent(model)[0].startswith(
        f"Current MCP Roots (1 total):\n\n1. {Path(root).name}\n   URI: file://{root}\n"
    )


async def test_elicitation_is_answered_in_process_by_the_toolsets_callback() -> None:
    asked: list[tuple[str, str, list[str]]] = []

    def person(question: McpQuestion, ctx: ToolContext) -> dict[str, Any] | None:
        asked.append((ctx.tool_call_id, question.message, question.schema["required"]))
        return {"name": "Ada"} if ctx.tool_call_id == "c1" else None

    server = npm_server("server-everything", "stdio", elicitation=person)
    steps = [
        calls(call("trigger-elicitation-request", "c1")),
        calls(call("trigger-elicitation-request", "c2")),
        "ok",
    ]
    model, _, _ = await run(server, steps, Seen("cb", []))
    assert asked == [
        ("c1", "Please provide inputs for the following fields:", ["name"]),
        ("c2", "Please provide inputs for the following fields:", ["name"]),
    ]
    accepted, declined = sent(model)
    assert accepted.startswith("✅ User provided the requested information!\nUser inputs:\n")
    assert "Ada" in accepted
    assert declined.startswith("❌ User declined to provide the requested information.")


async def test_a_server_request_during_two_calls_is_refused_it_cannot_tell_whose_it_is() -> None:
    hooks = Guard("cb", [])
    server = npm_server("server-everything", "stdio", sampling=True)
    both = calls(
        call("trigger-sampling-request", "c1", prompt="one"),
        call("trigger-sampling-request", "c2", prompt="two"),
    )
    _, events, _ = await run(server, [both, "done"], hooks)
    refused = (
        "Error: McpToolError: MCP server 'server-everything', tool 'trigger-sampling-request': MCP error "
        "-32600: adk answers sampling only during one tool call of its own; 2 are running"
    )
    assert [e.content for e in events if e.object == ObjectType.TOOL_RESPONSE] == [refused, refused]
    assert not [t for t in hooks.trace if t[1] in ("c1", "c2")]  # the model was never asked


class OnlyStatic(Seen):
    """Authorises reading only the server's static resources."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:  # type: ignore[override]
        self.trace.append(("before_tool", ctx.tool.name, ctx.args))
        uri = str(ctx.args.get("uri", "demo://resource/static/"))
        return Cont(ctx) if uri.startswith("demo://resource/static/") else Halt(f"{uri} may not be read")


async def test_resources_and_prompts_are_tools_through_the_tool_hooks() -> None:
    hooks = OnlyStatic("cb", [])
    server = npm_server("server-everything", "stdio", resources=True, prompts=True)
    steps = [
        calls(call("list_resources", "c1")),
        calls(call("read_resource", "c2", uri="demo://resource/static/document/architecture.md")),
        calls(call("read_resource", "c3", uri="demo://resource/session/secret.txt")),
        calls(call("list_prompts", "c4")),
        calls(
            ToolCall.of(
                "get_prompt", json.dumps({"name": "args-prompt", "arguments": {"city": "Paris"}}), id="c5"
            )
        ),
        "done",
    ]
    model, _, _ = await run(server, steps, hooks)
    assert [t[:3] for t in hooks.trace if t[0] == "before_tool"] == [
        ("before_tool", "list_resources", {}),
        ("before_tool", "read_resource", {"uri": "demo://resource/static/document/architecture.md"}),
        ("before_tool", "read_resource", {"uri": "demo://resource/session/secret.txt"}),
        ("before_tool", "list_prompts", {}),
        ("before_tool", "get_prompt", {"name": "args-prompt", "arguments": {"city": "Paris"}}),
    ]
    listed, read, refused, prompts, prompt = sent(model)
    assert listed.splitlines()[0] == (
        "demo://resource/static/document/architecture.md (text/markdown): architecture.md - "
        "Static document file exposed from /docs: architecture.md"
    )
    assert read.startswith(
        "[resource: demo://resource/static/document/architecture.md (text/markdown)]\n"
        "# Everything Server \u2013 Architecture\n"
    )
    assert refused == "demo://resource/session/secret.txt may not be read"
    assert prompts.splitlines()[:2] == [
        "simple-prompt(): A prompt with no arguments",
        "args-prompt(city, state?): A prompt with two arguments, one required and one optional",
    ]
    assert prompt == "user: What's weather in Paris?"


async def test_a_prompt_tools_wrong_arguments_are_one_line() -> None:
    async with npm_server("server-everything", "stdio", prompts=True) as server:
        [get_prompt] = [t for t in await server.get_tools() if t.name == "get_prompt"]
    with pytest.raises(ToolArgumentsError) as raised:
        get_prompt.validate({"name": 3, "arguments": {"city": 1}, "x": "y"})
    assert str(raised.value) == (
        "invalid arguments for tool 'get_prompt': argument 'x': unexpected argument; "
        "argument 'name': a string is required, got 3; "
        "argument 'arguments': an object of strings is required, got {'city': 1}"
    )
