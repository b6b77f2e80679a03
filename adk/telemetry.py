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
(of the final attempt), `adk.halted` / `adk.halted_by` (a callback answered instead of the call)
and `adk.stopped` (still open when the consumer stopped the run). A span whose call failed, or
that was still open when the run failed, has an error status.

Callback decisions are read from the run's events (`Invocation.observe`): each is an
`adk.decision` span event on the span of the call it was about (a retry, a fallback, a halt, a
replaced output); a model call's or tool call's span ends when its response event is seen.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, assert_never

try:
    from opentelemetry import trace
    from opentelemetry.trace import Span, Status, StatusCode, Tracer, TracerProvider
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("adk.telemetry needs OpenTelemetry: pip install 'adk[otel]'") from e

from adk.callbacks.decisions import Decision, Deferred, FellBack, Halted, Replaced, Retried
from adk.callbacks.results import Cont, Raise
from adk.events import ErrorInfo, Event, ObjectType

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
    models: dict[tuple[str, str], list[Span]] = field(default_factory=dict)
    """The open model spans of each (branch, agent), oldest first: each ends with its response event,
    which may come after the next call started (a `ParallelAgent`'s children run ahead)."""
    tools: dict[str, Span] = field(default_factory=dict)
    """Per tool call id: its span, which its `tool.response` event ends."""


def _fail(span: Span, error: ErrorInfo) -> None:
    text = f"{error.type}: {error.message}" if error.message else error.type
    span.set_status(Status(StatusCode.ERROR, text))


def _ns(event: Event) -> int:
    return int(event.timestamp * 1e9)


def _record(span: Span, decision: Decision) -> None:
    """A decision as an `adk.decision` span event; a halt also marks the span `adk.halted`."""
    attributes: dict[str, Any] = {
        "adk.decision": decision.kind,
        "adk.by": decision.by,
        "adk.target": decision.target,
    }
    match decision:
        case Halted():
            span.set_attributes({"adk.halted": True, "adk.halted_by": decision.by})
        case Replaced():
            pass
        case Retried():
            attributes |= {
                "adk.attempt": decision.attempt,
                "adk.wait": decision.wait,
                "adk.error": decision.error,
            }
        case FellBack():
            attributes["adk.error"] = decision.error
            if decision.to is not None:
                attributes["adk.to"] = decision.to
        case Deferred():
            attributes |= {"adk.call_id": decision.call_id, "adk.reason": decision.reason}
        case unreachable:
            assert_never(unreachable)
    span.add_event("adk.decision", attributes)


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
        invocation.observe(lambda event: self._event(found, event))
        invocation.on_end(lambda error: self._end(invocation, found, error))
        return found

    def _end(self, invocation: Invocation, t: _Trace, error: BaseException | None) -> None:
        """Close whatever is still open when the run ends; if it failed, those spans failed.

        A run stopped by its consumer (or cancelled) did not fail: its open spans are marked
        `adk.stopped` instead.
        """
        open_spans = [*t.tools.values(), *(span for spans in t.models.values() for span in spans)]
        for stack in t.agents.values():
            open_spans.extend(span for _, span in reversed(stack))
        stopped = isinstance(error, GeneratorExit | asyncio.CancelledError)
        if error is not None and not stopped:
            t.root.record_exception(error)
        info = None if error is None or stopped else ErrorInfo.of(error)
        for span in [*open_spans, t.root]:
            if stopped:
                span.set_attribute("adk.stopped", True)
            elif info is not None:
                _fail(span, info)
            span.end()
        invocation.delete_state(self._key)

    def _event(self, t: _Trace, event: Event) -> None:
        """Read an event of the run: a response ends its call's span, with the decisions it carries.

        Spans end at the event's own time: the consumer may see it later than it was made.
        """
        key = (event.branch, event.author)
        match event.object:
            case ObjectType.ATTEMPT_FAILED:
                models = t.models.get(key)
                span = models[0] if models else self._agent_span(t, event.branch, event.author)
                for decision in event.decisions:
                    _record(span, decision)
            case ObjectType.CHAT_COMPLETION if not event.is_partial and event.author != "user":
                models = t.models.get(key)
                if not models:
                    self._agent_decisions(t, event)
                    return
                span = models.pop(0)
                for decision in event.fresh_decisions():  # its recoveries came as they happened
                    _record(span, decision)
                span.end(end_time=_ns(event))
            case ObjectType.TOOL_RESPONSE:
                message = event.message
                tool = t.tools.pop(message.tool_call_id or "", None) if message is not None else None
                if tool is None:
                    return
                for decision in event.decisions:
                    _record(tool, decision)
                if event.error is not None:
                    _fail(tool, event.error)
                tool.end(end_time=_ns(event))

    def _agent_decisions(self, t: _Trace, event: Event) -> None:
        """An agent's halt ends its span; a replaced answer is noted where the agent ran."""
        stack = t.agents.get(event.branch, [])
        for decision in event.decisions:
            running = [i for i, (name, _) in enumerate(stack) if name == event.author]
            if isinstance(decision, Halted) and running:
                span = stack.pop(running[-1])[1]
                _record(span, decision)
                span.end(end_time=_ns(event))
            else:
                _record(self._agent_span(t, event.branch), decision)

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
        stack = self._trace(ctx.invocation, ctx.agent.name).agents.get(ctx.branch, [])
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == ctx.agent.name:
                stack.pop(i)[1].end()
                break
        return output

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        t = self._trace(ctx.invocation, ctx.agent.name)
        span = self._start(
            f"model {ctx.model.name}",
            self._agent_span(t, ctx.branch, ctx.agent.name),
            {
                "adk.invocation_id": ctx.invocation_id,
                "adk.agent": ctx.agent.name,
                "adk.model": ctx.model.name,
                "adk.attempt": ctx.attempt,
            },
        )
        t.models.setdefault((ctx.branch, ctx.agent.name), []).append(span)
        return Cont(ctx)

    def _model_span(self, ctx: ModelContext) -> Span | None:
        """The span of the model call in progress for `ctx`'s agent (the newest one opened)."""
        models = self._trace(ctx.invocation, ctx.agent.name).models.get((ctx.branch, ctx.agent.name))
        return models[-1] if models else None

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        span = self._model_span(ctx)
        if span is not None:
            span.record_exception(error, {"adk.attempt": ctx.attempt, "adk.model": ctx.model.name})
        return Raise(error)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        span = self._model_span(ctx)
        if span is not None:
            span.set_attributes({"adk.model": ctx.model.name, "adk.attempt": ctx.attempt})
            if response.usage is not None:
                span.set_attributes(
                    {
                        "gen_ai.usage.input_tokens": response.usage.prompt_tokens,
                        "gen_ai.usage.output_tokens": response.usage.completion_tokens,
                    }
                )
        return response

    def _tool_span(self, ctx: ToolContext) -> Span:
        t = self._trace(ctx.invocation, ctx.agent.name)
        span = t.tools.get(ctx.tool_call_id)
        if span is not None:
            return span
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
        t.tools[ctx.tool_call_id] = span
        return span

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self._tool_span(ctx)
        return Cont(ctx)

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Raise:
        self._tool_span(ctx).record_exception(error, {"adk.attempt": ctx.attempt})
        return Raise(error)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        span = self._trace(ctx.invocation, ctx.agent.name).tools.get(ctx.tool_call_id)
        if span is not None:
            span.set_attribute("adk.attempt", ctx.attempt)
        return result
