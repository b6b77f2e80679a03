"""OpenTelemetry spans for invocations, agents, model calls and tool calls (the `otel` extra).

`Tracing` is a callback: register it first, on the `Runner`, so that it sees every call before
another callback changes or halts it. Spans nest as the work does:

    invocation <root agent>
     └── agent <name>                (workflow agents contain their children's spans)
          ├── model <name>           one span per model envelope; each failed attempt is an
          │                          `exception` event with its `adk.attempt`
          └── tool <name>            one span per tool call

Attributes to filter on: `adk.invocation_id`, `adk.session_id`, `adk.user_id`, `adk.agent`,
`adk.branch`, `adk.model` (the model that answered), `adk.tool`, `adk.tool_call_id`, `adk.attempt`
(of the final attempt), `adk.halted` (a callback answered instead of the model) and `adk.stopped`
(still open when the consumer stopped the run). A span whose call failed, or that was still open
when the run failed, has an error status.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

try:
    from opentelemetry import trace
    from opentelemetry.trace import Span, Status, StatusCode, Tracer, TracerProvider
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("adk.telemetry needs OpenTelemetry: pip install 'adk[otel]'") from e

from adk.callbacks.results import Cont, Raise

if TYPE_CHECKING:
    from adk.context import AgentContext, Invocation, ModelContext, ToolContext
    from adk.events import LlmResponse, Message

__all__ = ["Tracing"]


@dataclass(slots=True)
class _Trace:
    """The open spans of one invocation, keyed so that concurrent work never collides."""

    root: Span
    agents: dict[str, list[tuple[str, Span]]] = field(default_factory=dict)
    """Per branch, the stack of running agents (name, span)."""
    models: dict[tuple[str, str], Span] = field(default_factory=dict)
    """The open model span of each (branch, agent)."""
    tools: dict[str, tuple[tuple[str, str], Span, Exception | None]] = field(default_factory=dict)
    """Per tool call id: its (branch, agent), its span, and its last error."""


def _fail(span: Span, error: BaseException) -> None:
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    span.set_status(Status(StatusCode.ERROR, text))


def _end_halted(t: _Trace, key: tuple[str, str]) -> None:
    """End the model span still open for `key`, if any: a `before_model` callback answered instead."""
    span = t.models.pop(key, None)
    if span is not None:
        span.set_attribute("adk.halted", True)
        span.end()


class Tracing:
    """A callback that makes OpenTelemetry spans; `tracer_provider` defaults to the global one."""

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self._tracer: Tracer = trace.get_tracer("adk", tracer_provider=tracer_provider)
        self._key = f"adk.telemetry.{id(self)}"

    def _trace(self, invocation: Invocation, root_agent: str) -> _Trace:
        found: _Trace | None = invocation.get_state(self._key)
        if found is not None:
            return found
        session = invocation.session
        span = self._tracer.start_span(
            f"invocation {root_agent}",
            attributes={
                "adk.invocation_id": invocation.invocation_id,
                "adk.session_id": session.id,
                "adk.user_id": session.user_id,
                "adk.agent": root_agent,
            },
        )
        found = _Trace(span)
        invocation.set_state(self._key, found)
        invocation.on_end(lambda error: self._end(invocation, found, error))
        return found

    def _end(self, invocation: Invocation, t: _Trace, error: BaseException | None) -> None:
        """Close whatever is still open when the run ends; if it failed, those spans failed.

        A run stopped by its consumer (or cancelled) did not fail: its open spans are marked
        `adk.stopped` instead.
        """
        open_spans = [span for _, span, _ in t.tools.values()] + list(t.models.values())
        for stack in t.agents.values():
            open_spans.extend(span for _, span in reversed(stack))
        stopped = isinstance(error, GeneratorExit | asyncio.CancelledError)
        if error is not None and not stopped:
            t.root.record_exception(error)
        for span in [*open_spans, t.root]:
            if stopped:
                span.set_attribute("adk.stopped", True)
            elif error is not None:
                _fail(span, error)
            span.end()
        invocation.delete_state(self._key)

    def _agent_span(self, t: _Trace, branch: str, name: str | None = None) -> Span:
        """The span of agent `name` on `branch` (or of the innermost agent running there or above)."""
        while True:
            for agent, span in reversed(t.agents.get(branch, ())):
                if name is None or agent == name:
                    return span
            if not branch:
                return t.root
            branch = branch.rpartition(".")[0]

    def _start(self, name: str, parent: Span, attributes: dict[str, Any]) -> Span:
        return self._tracer.start_span(name, context=trace.set_span_in_context(parent), attributes=attributes)

    def _settle(self, t: _Trace, key: tuple[str, str]) -> None:
        """End the spans an agent left open: a model call a callback halted, tools that failed."""
        _end_halted(t, key)
        for call_id, (owner, span, error) in list(t.tools.items()):
            if owner == key:
                if error is not None:
                    _fail(span, error)
                span.end()
                del t.tools[call_id]

    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        t = self._trace(ctx.invocation, ctx.agent.name)
        span = self._start(
            f"agent {ctx.agent.name}",
            self._agent_span(t, ctx.branch),
            {"adk.invocation_id": ctx.invocation_id, "adk.agent": ctx.agent.name, "adk.branch": ctx.branch},
        )
        t.agents.setdefault(ctx.branch, []).append((ctx.agent.name, span))
        return Cont(ctx)

    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        t = self._trace(ctx.invocation, ctx.agent.name)
        self._settle(t, (ctx.branch, ctx.agent.name))
        stack = t.agents.get(ctx.branch, [])
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == ctx.agent.name:
                stack.pop(i)[1].end()
                break
        return output

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        t = self._trace(ctx.invocation, ctx.agent.name)
        key = (ctx.branch, ctx.agent.name)
        self._settle(t, key)
        t.models[key] = self._start(
            f"model {ctx.model.name}",
            self._agent_span(t, ctx.branch, ctx.agent.name),
            {
                "adk.invocation_id": ctx.invocation_id,
                "adk.agent": ctx.agent.name,
                "adk.model": ctx.model.name,
                "adk.attempt": ctx.attempt,
            },
        )
        return Cont(ctx)

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        span = self._trace(ctx.invocation, ctx.agent.name).models.get((ctx.branch, ctx.agent.name))
        if span is not None:
            span.record_exception(error, {"adk.attempt": ctx.attempt, "adk.model": ctx.model.name})
        return Raise(error)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        span = self._trace(ctx.invocation, ctx.agent.name).models.pop((ctx.branch, ctx.agent.name), None)
        if span is not None:
            span.set_attributes({"adk.model": ctx.model.name, "adk.attempt": ctx.attempt})
            if response.usage is not None:
                span.set_attributes(
                    {
                        "gen_ai.usage.input_tokens": response.usage.prompt_tokens,
                        "gen_ai.usage.output_tokens": response.usage.completion_tokens,
                    }
                )
            span.end()
        return response

    def _tool_span(self, ctx: ToolContext) -> tuple[_Trace, tuple[str, str], Span]:
        t = self._trace(ctx.invocation, ctx.agent.name)
        key = (ctx.branch, ctx.agent.name)
        open_ = t.tools.get(ctx.tool_call_id)
        if open_ is not None:
            return t, key, open_[1]
        _end_halted(t, key)  # a model call still open was halted, and its tool calls run now
        span = self._start(
            f"tool {ctx.tool.name}",
            self._agent_span(t, ctx.branch, ctx.agent.name),
            {
                "adk.invocation_id": ctx.invocation_id,
                "adk.agent": ctx.agent.name,
                "adk.tool": ctx.tool.name,
                "adk.tool_call_id": ctx.tool_call_id,
                "adk.attempt": ctx.attempt,
            },
        )
        t.tools[ctx.tool_call_id] = (key, span, None)
        return t, key, span

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self._tool_span(ctx)
        return Cont(ctx)

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Raise:
        t, key, span = self._tool_span(ctx)
        span.record_exception(error, {"adk.attempt": ctx.attempt})
        t.tools[ctx.tool_call_id] = (key, span, error)
        return Raise(error)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        entry = self._trace(ctx.invocation, ctx.agent.name).tools.pop(ctx.tool_call_id, None)
        if entry is not None:
            entry[1].set_attribute("adk.attempt", ctx.attempt)
            entry[1].end()
        return result
