"""Shared fakes for the tests that run agents: a hook recorder, small tools, and event summaries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from adk.callbacks.results import Cont
from adk.context import AgentContext, ModelContext, ToolContext
from adk.errors import ToolArgumentsError
from adk.events import Event, LlmResponse, Message, ObjectType, ToolCall, ToolDeclaration
from adk.models.base import LlmRequest
from adk.runner import Runner
from adk.tools import BaseTool


class Recorder:
    """A callback on every model-free hook that appends `(label, hook, detail)` to a shared trace.

    The detail is the agent's name, or the tool's for the tool hooks; override `record` for another.
    """

    def __init__(self, label: str, trace: list[tuple[Any, ...]]) -> None:
        self.label = label
        self.trace = trace

    def record(self, hook: str, ctx: AgentContext | ModelContext | ToolContext) -> None:
        name = ctx.tool.name if isinstance(ctx, ToolContext) else ctx.agent.name
        self.trace.append((self.label, hook, name))

    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        self.record("before_agent", ctx)
        return Cont(ctx)

    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        self.record("after_agent", ctx)
        return output

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        self.record("before_model", ctx)
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self.record("after_model", ctx)
        return response

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self.record("before_tool", ctx)
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        self.record("after_tool", ctx)
        return result


class Tool(BaseTool):
    """A tool whose behaviour is a function (sync or async) of its arguments and context.

    Without one it answers `{"echo": args}`; `calls` records the arguments of every run.
    """

    def __init__(self, name: str, fn: Any = None, *, idempotent: bool = False) -> None:
        self.name = name
        self._fn = fn
        self.idempotent = idempotent
        self.calls: list[dict[str, Any]] = []

    @property
    def declaration(self) -> ToolDeclaration:
        return ToolDeclaration(name=self.name, description=f"the {self.name} tool")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        self.calls.append(args)
        if self._fn is None:
            return {"echo": args}
        result = self._fn(args, ctx)
        if asyncio.iscoroutine(result):
            result = await result
        return result


class StrictTool(Tool):
    """A tool that needs an integer `n`: its `validate` names each bad argument."""

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        problems = []
        if "n" not in args:
            problems.append("n: field required")
        elif not isinstance(args["n"], int):
            problems.append(f"n: expected an integer, got {args['n']!r}")
        problems += [f"{k}: unexpected argument" for k in args if k != "n"]
        if problems:
            raise ToolArgumentsError(self.name, problems)
        return dict(args)


def echo(args: dict[str, Any], ctx: ToolContext) -> Any:
    """A tool function: its arguments back, or a `ValueError("no")` when they ask it to `fail`."""
    if args.get("fail"):
        raise ValueError("no")
    return args


def reply(request: LlmRequest) -> str:
    """A model step that answers the last message, so a script need not know the call order."""
    return f"re: {request.messages[-1].content}"


def call(name: str, id: str, **args: Any) -> ToolCall:
    return ToolCall.of(name, json.dumps(args), id=id)


def calls(*tool_calls: ToolCall) -> LlmResponse:
    return LlmResponse.calls(*tool_calls)


def summary(event: Event) -> tuple[Any, ...]:
    """An event in a few words: kind, author, and what it says."""
    match event.object:
        case ObjectType.CHAT_COMPLETION:
            message = event.message
            assert message is not None
            if message.tool_calls:
                return (
                    "model",
                    event.author,
                    message.content,
                    [(c.function.name, c.function.arguments) for c in message.tool_calls],
                )
            return ("model", event.author, message.content)
        case ObjectType.CHAT_COMPLETION_CHUNK:
            delta = event.delta
            assert delta is not None
            if delta.tool_calls:
                pieces = [(c.id, c.function.name, c.function.arguments) for c in delta.tool_calls]
                return ("chunk", event.author, delta.content, pieces)
            return ("chunk", event.author, delta.content)
        case ObjectType.TOOL_RESPONSE:
            message = event.message
            assert message is not None
            return ("tool", event.author, message.name, message.tool_call_id, message.content)
        case ObjectType.STATE_UPDATE:
            return ("state", event.author, event.actions.state_delta)
        case ObjectType.ERROR:
            assert event.error is not None
            return ("error", event.author, event.error.type, event.error.where)
        case ObjectType.RUNNER_COMPLETION:
            return ("done", event.author)
        case _:
            return (event.object, event.author)


async def run(runner: Runner, message: str = "hi", session: str = "s", **kw: Any) -> list[Event]:
    return [e async for e in runner.run("u", session, message, **kw)]


async def shapes(runner: Runner, message: str = "hi", session: str = "s", **kw: Any) -> list[tuple[Any, ...]]:
    return [summary(e) for e in await run(runner, message, session, **kw)]
