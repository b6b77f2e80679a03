"""OpenTelemetry spans and metrics for runs, in the GenAI semantic conventions (the `otel` extra).

`Tracing` is a callback: register it first, on the `Runner`, so that it sees every call before
another callback changes or halts it. Spans nest as the work does:

    invoke_agent <root agent>        the run: one root span, which is also the root agent's
     ├── invoke_agent <name>         a sub-agent (workflow agents contain their children's spans)
     ├── chat <model>                one CLIENT span per model call; each failed attempt is an
     │                               `exception` event with its `adk.attempt`
     └── execute_tool <name>         one span per tool call

Callback decisions are read from the run's events (`Invocation.observe`): each is an
`adk.decision` span event on the span of the call it was about; a model call's or tool call's
span ends when its response event is seen. docs/observability.md lists every name.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

from adk.callbacks.decisions import Halted
from adk.callbacks.results import Cont, Raise
from adk.events import ErrorInfo, Event, ObjectType, Usage
from adk.telemetry import content
from adk.telemetry.attributes import agent_attributes, chat_attributes, request_attributes, tool_attributes
from adk.telemetry.decisions import record
from adk.telemetry.metrics import Metrics
from adk.telemetry.names import (
    ADK_ATTEMPT,
    ADK_STOPPED,
    CHAT,
    ERROR_TYPE,
    EXECUTE_TOOL,
    INVOKE_AGENT,
    USER_ID,
    gen_ai,
)

if TYPE_CHECKING:
    from adk.agents.base import BaseAgent
    from adk.context import AgentContext, Invocation, ModelContext, ToolContext
    from adk.events import LlmResponse, Message

__all__ = ["Tracing"]


@dataclass(slots=True)
class _Call:
    """An open model call: its span, and what its metrics need when it ends."""

    span: Span
    start: int
    """When it started, in ns since the epoch (the span's start time)."""
    attributes: dict[str, Any]
    """The operation's attributes, shared by the span and the metrics."""
    answered_by: str = ""
    """The model that answered (after a fallback, the fallback), for a response that names none."""


@dataclass(slots=True)
class _Trace:
    """The open spans of one invocation, keyed so that concurrent work never collides."""

    root: Span
    agents: dict[str, list[tuple[str, Span]]] = field(default_factory=dict)
    """Per branch, the stack of running agents (name, span); the root agent's span is `root`."""
    models: dict[tuple[str, str], list[_Call]] = field(default_factory=dict)
    """The open model calls of each (branch, agent), oldest first: each ends with its response
    event, which may come after the next call started (a `ParallelAgent`'s children run ahead)."""
    tools: dict[str, Span] = field(default_factory=dict)
    """Per tool call id: its span, which its `tool.response` event ends."""


def _fail(span: Span, error: ErrorInfo) -> None:
    text = f"{error.type}: {error.message}" if error.message else error.type
    span.set_attribute(ERROR_TYPE, error.type)
    span.set_status(Status(StatusCode.ERROR, text))


def _ns(event: Event) -> int:
    return int(event.timestamp * 1e9)


class Tracing:
    """A callback that makes OpenTelemetry spans and GenAI metrics.

    `tracer_provider` and `meter_provider` default to the global ones. Message content goes on
    the spans only if `capture_content` is true, or, when it is not given, if the environment's
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        meter_provider: MeterProvider | None = None,
        capture_content: bool | None = None,
    ) -> None:
        self._tracer: Tracer = trace.get_tracer("adk", tracer_provider=tracer_provider)
        self._metrics = Metrics(meter_provider)
        self._content = content.capture_setting(capture_content)
        self._key = f"adk.telemetry.{id(self)}"

    def _trace(self, invocation: Invocation, agent: BaseAgent, branch: str = "") -> _Trace:
        """The run's trace; the first hook of the run opens its root span, named after its agent."""
        found: _Trace | None = invocation.get_state(self._key)
        if found is not None:
            return found
        session = invocation.session
        attributes = agent_attributes(agent, invocation.invocation_id, branch)
        attributes |= {gen_ai.GEN_AI_CONVERSATION_ID: session.id, USER_ID: session.user_id}
        span = self._tracer.start_span(f"{INVOKE_AGENT} {agent.name}", attributes=attributes)
        found = _Trace(span)
        invocation.set_state(self._key, found)
        invocation.observe(lambda event: self._event(found, event))
        invocation.on_end(lambda error: self._end(invocation, found, error))
        return found

    def _end(self, invocation: Invocation, t: _Trace, error: BaseException | None) -> None:
        """Close whatever is still open when the run ends; if it failed, those spans failed.

        A run stopped by its consumer (or cancelled) did not fail: its open spans are marked
        `adk.stopped` instead, and its unfinished model calls are not measured.
        """
        stopped = isinstance(error, GeneratorExit | asyncio.CancelledError)
        info = None if error is None or stopped else ErrorInfo.of(error)
        calls = [call for calls in t.models.values() for call in calls]
        if error is not None and info is not None:
            now = time.time_ns()
            for call in calls:
                self._metrics.record(
                    (now - call.start) / 1e9, call.attributes | {ERROR_TYPE: info.type}, None
                )
            t.root.record_exception(error)
        open_spans = [*t.tools.values(), *(call.span for call in calls)]
        for stack in t.agents.values():
            open_spans.extend(span for _, span in reversed(stack) if span is not t.root)
        for span in [*open_spans, t.root]:
            if stopped:
                span.set_attribute(ADK_STOPPED, True)
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
                span = models[0].span if models else self._agent_span(t, event.branch, event.author)
                for decision in event.decisions:
                    record(span, decision)
            case ObjectType.CHAT_COMPLETION if not event.is_partial and event.author != "user":
                models = t.models.get(key)
                if not models:
                    self._agent_decisions(t, event)
                    return
                call = models.pop(0)
                for decision in event.fresh_decisions():  # its recoveries came as they happened
                    record(call.span, decision)
                self._answered(call, event)
            case ObjectType.TOOL_RESPONSE:
                self._tool_ended(t, event)

    def _answered(self, call: _Call, event: Event) -> None:
        """End a model call's span with what its response says, and measure it (unless a callback
        answered instead of the model)."""
        span, end = call.span, _ns(event)
        if any(isinstance(d, Halted) for d in event.decisions):
            span.end(end_time=end)
            return
        response_model = event.model or call.answered_by
        attributes = call.attributes | {gen_ai.GEN_AI_RESPONSE_MODEL: response_model}
        span.set_attributes(attributes)
        reasons = [c.finish_reason for c in event.choices if c.finish_reason]
        if reasons:
            span.set_attribute(gen_ai.GEN_AI_RESPONSE_FINISH_REASONS, reasons)
        usage: Usage | None = event.usage
        if usage is not None:
            span.set_attributes(
                {
                    gen_ai.GEN_AI_USAGE_INPUT_TOKENS: usage.prompt_tokens,
                    gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS: usage.completion_tokens,
                }
            )
        message = event.message
        if self._content and message is not None:
            span.set_attribute(
                gen_ai.GEN_AI_OUTPUT_MESSAGES,
                content.output_messages(message, reasons[0] if reasons else None),
            )
        span.end(end_time=end)
        self._metrics.record(max(end - call.start, 0) / 1e9, attributes, usage)

    def _tool_ended(self, t: _Trace, event: Event) -> None:
        message = event.message
        span = t.tools.pop(message.tool_call_id or "", None) if message is not None else None
        if span is None or message is None:
            return
        for decision in event.decisions:
            record(span, decision)
        if event.error is not None:
            _fail(span, event.error)
        elif self._content:
            span.set_attribute(gen_ai.GEN_AI_TOOL_CALL_RESULT, message.content)
        span.end(end_time=_ns(event))

    def _agent_decisions(self, t: _Trace, event: Event) -> None:
        """An agent's halt ends its span; a replaced answer is noted where the agent ran."""
        stack = t.agents.get(event.branch, [])
        for decision in event.fresh_decisions():  # a fallen-back call's recoveries came as they happened
            running = [i for i, (name, _) in enumerate(stack) if name == event.author]
            if isinstance(decision, Halted) and running:
                span = stack.pop(running[-1])[1]
                record(span, decision)
                if span is not t.root:  # the run's span ends with the run
                    span.end(end_time=_ns(event))
            else:
                record(self._agent_span(t, event.branch), decision)

    def _agent_span(self, t: _Trace, branch: str, name: str | None = None) -> Span:
        """The span of agent `name` on `branch` (or of the innermost agent running there or above)."""
        while True:
            for agent, span in reversed(t.agents.get(branch, ())):
                if name is None or agent == name:
                    return span
            if not branch:
                return t.root
            branch = branch.rpartition(".")[0]

    def _start(
        self, name: str, parent: Span, attributes: dict[str, Any], kind: SpanKind, start: int | None = None
    ) -> Span:
        context = trace.set_span_in_context(parent)
        return self._tracer.start_span(name, context, kind, attributes, start_time=start)

    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        """The run's first agent takes the run's span as its own; any other gets a child span."""
        agent = ctx.agent
        t: _Trace | None = ctx.invocation.get_state(self._key)
        if t is None:
            t = self._trace(ctx.invocation, agent, ctx.branch)
            span = t.root
        else:
            attributes = agent_attributes(agent, ctx.invocation_id, ctx.branch)
            span = self._start(
                f"{INVOKE_AGENT} {agent.name}", self._agent_span(t, ctx.branch), attributes, SpanKind.INTERNAL
            )
        t.agents.setdefault(ctx.branch, []).append((agent.name, span))
        return Cont(ctx)

    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        t = self._trace(ctx.invocation, ctx.agent)
        stack = t.agents.get(ctx.branch, [])
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == ctx.agent.name:
                span = stack.pop(i)[1]
                if span is not t.root:
                    span.end()
                break
        return output

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        t = self._trace(ctx.invocation, ctx.agent)
        model, attributes = chat_attributes(ctx)
        start = time.time_ns()
        span = self._start(
            f"{CHAT} {model}",
            self._agent_span(t, ctx.branch, ctx.agent.name),
            attributes | request_attributes(ctx),
            SpanKind.CLIENT,
            start,
        )
        if self._content:
            if ctx.request.instruction:
                span.set_attribute(
                    gen_ai.GEN_AI_SYSTEM_INSTRUCTIONS, content.system_instructions(ctx.request.instruction)
                )
            span.set_attribute(gen_ai.GEN_AI_INPUT_MESSAGES, content.input_messages(ctx.request.messages))
        t.models.setdefault((ctx.branch, ctx.agent.name), []).append(_Call(span, start, attributes))
        return Cont(ctx)

    def _model_call(self, ctx: ModelContext) -> _Call | None:
        """The model call in progress for `ctx`'s agent (the newest one opened)."""
        models = self._trace(ctx.invocation, ctx.agent).models.get((ctx.branch, ctx.agent.name))
        return models[-1] if models else None

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        call = self._model_call(ctx)
        if call is not None:
            attributes: dict[str, int | str] = {
                ADK_ATTEMPT: ctx.attempt,
                gen_ai.GEN_AI_REQUEST_MODEL: ctx.model.name,
            }
            call.span.record_exception(error, attributes)
        return Raise(error)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        call = self._model_call(ctx)
        if call is not None:
            call.answered_by = ctx.model.name
            call.span.set_attribute(ADK_ATTEMPT, ctx.attempt)
        return response

    def _tool_span(self, ctx: ToolContext) -> Span:
        t = self._trace(ctx.invocation, ctx.agent)
        span = t.tools.get(ctx.tool_call_id)
        if span is not None:
            return span
        parent = self._agent_span(t, ctx.branch, ctx.agent.name)
        span = self._start(f"{EXECUTE_TOOL} {ctx.tool.name}", parent, tool_attributes(ctx), SpanKind.INTERNAL)
        if self._content:
            span.set_attribute(gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS, content.to_json(ctx.args))
        t.tools[ctx.tool_call_id] = span
        return span

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self._tool_span(ctx)
        return Cont(ctx)

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Raise:
        self._tool_span(ctx).record_exception(error, {ADK_ATTEMPT: ctx.attempt})
        return Raise(error)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        span = self._trace(ctx.invocation, ctx.agent).tools.get(ctx.tool_call_id)
        if span is not None:
            span.set_attribute(ADK_ATTEMPT, ctx.attempt)
        return result
