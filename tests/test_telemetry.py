"""Tracing: exact span names, parenting and attributes, read from the SDK's in-memory exporter."""

import subprocess
import sys

import pytest
import tenacity
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from adk import (
    AgentContext,
    Cont,
    Halt,
    LlmAgent,
    LlmResponse,
    Message,
    ModelContext,
    ParallelAgent,
    RetryPolicy,
    Runner,
    SequentialAgent,
    ToolContext,
)
from adk.errors import AuthenticationError, ServerError
from adk.events import ToolCall
from adk.recovery import FallbackModels, Testing
from adk.telemetry import Tracing
from adk.testing import ScriptedModel
from tests._runtime import Tool, echo

pytestmark = pytest.mark.usefixtures("testing")


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def tracing(exporter: InMemorySpanExporter) -> Tracing:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing(provider)


def tree(spans: tuple[ReadableSpan, ...]) -> list[str]:
    """The spans as an indented outline, children in start order."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        by_parent.setdefault(span.parent.span_id if span.parent else None, []).append(span)
    lines: list[str] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in by_parent.get(parent, []):
            assert span.context is not None
            lines.append("  " * depth + span.name)
            walk(span.context.span_id, depth + 1)

    walk(None, 0)
    assert len(lines) == len(spans), "every span is reachable from the root"
    return lines


def named(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    (span,) = [s for s in spans if s.name == name]
    return span


async def test_spans_for_invocation_agent_model_attempts_and_tools(
    tracing: Tracing, exporter: InMemorySpanExporter, testing: Testing
) -> None:
    model = ScriptedModel(
        [
            LlmResponse.calls(
                ToolCall.of("echo", '{"text": "hi"}', id="c1"), ToolCall.of("echo", '{"fail": true}', id="c2")
            ),
            ServerError("boom"),
            "done",
        ]
    )
    runner = Runner(LlmAgent("assistant", model=model, tools=[Tool("echo", echo)]), callbacks=[tracing])
    events = [e async for e in runner.run("u1", "s1", "hi", invocation_id="inv1")]
    assert events[-1].object == "runner.completion"

    spans = exporter.get_finished_spans()
    assert tree(spans) == [
        "invoke_agent assistant",  # the run's span is its root agent's
        "  chat scripted",
        "  execute_tool echo",
        "  execute_tool echo",
        "  chat scripted",
    ]
    assert dict(named(spans, "invoke_agent assistant").attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "assistant",
        "gen_ai.provider.name": "_OTHER",
        "gen_ai.request.model": "scripted",
        "gen_ai.conversation.id": "s1",
        "user.id": "u1",
        "adk.invocation_id": "inv1",
        "adk.branch": "",
    }
    first, second = [s for s in spans if s.name == "chat scripted"]
    assert dict(first.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "_OTHER",
        "gen_ai.request.model": "scripted",
        "gen_ai.response.model": "scripted",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.agent.name": "assistant",
        "adk.invocation_id": "inv1",
        "adk.attempt": 1,
    }
    assert second.attributes is not None
    assert second.attributes["adk.attempt"] == 2
    event, decision = second.events
    assert event.name == "exception"
    assert dict(event.attributes or {}) | {"exception.stacktrace": ""} == {
        "exception.type": "adk.errors.ServerError",
        "exception.message": "boom",
        "exception.stacktrace": "",
        "exception.escaped": "False",
        "adk.attempt": 1,
        "gen_ai.request.model": "scripted",
    }
    assert decision.name == "adk.decision"  # read from the run's events
    assert dict(decision.attributes or {}) == {
        "adk.decision": "retried",
        "adk.by": "callback:RetryPolicy.on_model_error",
        "adk.callback": "RetryPolicy",
        "adk.hook": "on_model_error",
        "adk.target": "model:scripted",
        "adk.attempt": 2,
        "adk.wait": testing.waits[0],
        "adk.error": "ServerError",
    }
    assert second.status.status_code is StatusCode.UNSET

    ok, failed = sorted((s for s in spans if s.name == "execute_tool echo"), key=lambda s: s.start_time or 0)
    assert dict(ok.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
        "gen_ai.agent.name": "assistant",
        "adk.invocation_id": "inv1",
        "adk.attempt": 1,
    }
    assert ok.status.status_code is StatusCode.UNSET
    assert failed.attributes is not None
    assert failed.attributes["gen_ai.tool.call.id"] == "c2"
    assert failed.attributes["error.type"] == "ValueError"
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "ValueError: no"
    assert [e.name for e in failed.events] == ["exception"]


async def test_a_failed_run_fails_every_open_span(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    runner = Runner(LlmAgent("a", model=ScriptedModel([AuthenticationError("bad key")])), callbacks=[tracing])
    events = [e async for e in runner.run("u", "s", "hi")]
    assert events[-1].object == "error"
    spans = exporter.get_finished_spans()
    assert tree(spans) == ["invoke_agent a", "  chat scripted"]
    assert {s.name: (s.status.description, (s.attributes or {})["error.type"]) for s in spans} == {
        "invoke_agent a": ("AuthenticationError: bad key", "AuthenticationError"),
        "chat scripted": ("AuthenticationError: bad key", "AuthenticationError"),
    }
    assert [e.name for e in named(spans, "invoke_agent a").events] == ["exception"]


async def test_a_run_stopped_by_its_consumer_closes_its_spans_without_error(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    runner = Runner(LlmAgent("a", model=ScriptedModel(["hello"])), callbacks=[tracing])
    run = runner.run("u", "s", "hi")
    async for event in run:
        if event.content == "hello":
            break  # the answer is in: stop before the run is over
    await run.aclose()
    spans = exporter.get_finished_spans()
    assert tree(spans) == ["invoke_agent a", "  chat scripted"]
    assert [(s.name, (s.attributes or {}).get("adk.stopped")) for s in spans] == [
        ("chat scripted", None),
        ("invoke_agent a", True),
    ]
    assert all(s.status.status_code is StatusCode.UNSET for s in spans)


async def test_a_fallback_to_another_model_is_one_model_span(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    backup = ScriptedModel(["from the backup"], name="backup")
    primary = ScriptedModel([AuthenticationError("revoked")], name="primary")
    agent = LlmAgent("a", model=primary, callbacks=[FallbackModels([backup])])
    [e async for e in Runner(agent, callbacks=[tracing]).run("u", "s", "hi")]
    model = named(exporter.get_finished_spans(), "chat primary")
    assert model.attributes is not None
    assert (model.attributes["gen_ai.response.model"], model.attributes["adk.attempt"]) == ("backup", 1)
    exception, decision = model.events
    assert (exception.name, (exception.attributes or {})["gen_ai.request.model"]) == ("exception", "primary")
    assert (decision.name, dict(decision.attributes or {})) == (
        "adk.decision",
        {
            "adk.decision": "fell_back",
            "adk.by": "callback:FallbackModels.on_model_error",
            "adk.callback": "FallbackModels",
            "adk.hook": "on_model_error",
            "adk.target": "model:primary",
            "adk.to": "model:backup",
            "adk.error": "AuthenticationError",
        },
    )
    assert model.status.status_code is StatusCode.UNSET


class Guard:
    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
        return Halt(LlmResponse.text("no"))


async def test_a_halted_model_call_is_marked(tracing: Tracing, exporter: InMemorySpanExporter) -> None:
    model = ScriptedModel([])
    runner = Runner(LlmAgent("a", model=model, callbacks=[Guard()]), callbacks=[tracing])
    events = [e async for e in runner.run("u", "s", "hi")]
    assert events[-2].content == "no"
    spans = exporter.get_finished_spans()
    assert tree(spans) == ["invoke_agent a", "  chat scripted"]
    model = named(spans, "chat scripted")
    assert (model.attributes or {})["adk.halted"] is True
    assert (model.attributes or {})["adk.halted_by"] == "callback:Guard.before_model"
    assert [dict(e.attributes or {}) for e in model.events] == [
        {
            "adk.decision": "halted",
            "adk.by": "callback:Guard.before_model",
            "adk.callback": "Guard",
            "adk.hook": "before_model",
            "adk.target": "model:scripted",
        }
    ]
    assert all(s.status.status_code is StatusCode.UNSET for s in spans)


async def test_workflow_agents_nest_and_parallel_branches_do_not_collide(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    def leaf(name: str) -> LlmAgent:
        step = LlmResponse.calls(ToolCall.of("echo", "{}", id=f"{name}-call"))
        return LlmAgent(
            name, model=ScriptedModel([step, f"{name} done"], name=f"m_{name}"), tools=[Tool("echo", echo)]
        )

    root = SequentialAgent(
        "pipeline", sub_agents=[leaf("first"), ParallelAgent("fan", sub_agents=[leaf("left"), leaf("right")])]
    )
    runner = Runner(root, callbacks=[tracing])
    [e async for e in runner.run("u", "s", "go")]
    spans = exporter.get_finished_spans()
    outline = tree(spans)
    assert outline[:6] == [
        "invoke_agent pipeline",
        "  invoke_agent first",
        "    chat m_first",
        "    execute_tool echo",
        "    chat m_first",
        "  invoke_agent fan",
    ]
    # The two parallel children interleave; each keeps its own spans.
    fan = outline[6:]
    for name in ("left", "right"):
        i = fan.index(f"    invoke_agent {name}")
        model = f"      chat m_{name}"
        assert fan[i + 1 : i + 4] == [model, "      execute_tool echo", model]
    assert (named(spans, "invoke_agent left").attributes or {})["adk.branch"] == "fan.left"


def test_import_adk_does_not_import_opentelemetry() -> None:
    code = "import sys, adk; print(any(m.startswith('opentelemetry') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class Refuse:
    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
        return Halt("refused") if ctx.tool.name == "delete" else Cont(ctx)


async def test_tool_decisions_are_span_events_read_from_the_tool_responses(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    failures = [ConnectionError("reset")]

    def fetch(args: dict[str, object], ctx: ToolContext) -> str:
        if failures:
            raise failures.pop()
        return "page"

    calls = LlmResponse.calls(ToolCall.of("delete", id="c1"), ToolCall.of("fetch", id="c2"))
    model = ScriptedModel([calls, "done"])
    tools = [Tool("delete", echo), Tool("fetch", fetch, idempotent=True)]
    policy = RetryPolicy(wait=tenacity.wait_fixed(0.5))
    agent = LlmAgent("a", model=model, tools=tools, callbacks=[Refuse()])
    [e async for e in Runner(agent, callbacks=[tracing], retry_policy=policy).run("u", "s", "hi")]
    spans = exporter.get_finished_spans()
    delete, fetch_span = named(spans, "execute_tool delete"), named(spans, "execute_tool fetch")
    assert (delete.attributes or {})["adk.halted_by"] == "callback:Refuse.before_tool"
    assert [dict(e.attributes or {}) for e in delete.events] == [
        {
            "adk.decision": "halted",
            "adk.by": "callback:Refuse.before_tool",
            "adk.callback": "Refuse",
            "adk.hook": "before_tool",
            "adk.target": "tool:delete",
        }
    ]
    assert [(e.name, dict(e.attributes or {}).get("adk.decision")) for e in fetch_span.events] == [
        ("exception", None),
        ("adk.decision", "retried"),
    ]
    assert dict(fetch_span.events[1].attributes or {})["adk.wait"] == 0.5
    assert fetch_span.status.status_code is StatusCode.UNSET


class Closed:
    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext] | Halt[str]:
        return Halt("closed")


class Sign:
    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        return Message.assistant("signed")


async def test_a_halted_agent_span_ends_marked_and_a_replaced_answer_is_noted_on_its_parent(
    tracing: Tracing, exporter: InMemorySpanExporter
) -> None:
    halted = LlmAgent("first", model=ScriptedModel([]), callbacks=[Closed()])
    [e async for e in Runner(halted, callbacks=[tracing]).run("u", "s", "hi")]
    agent = named(exporter.get_finished_spans(), "invoke_agent first")
    assert (agent.attributes or {})["adk.halted_by"] == "callback:Closed.before_agent"
    assert agent.status.status_code is StatusCode.UNSET and not (agent.attributes or {}).get("adk.stopped")

    exporter.clear()
    signed = LlmAgent("second", model=ScriptedModel(["hello"]), callbacks=[Sign()])
    [e async for e in Runner(signed, callbacks=[tracing]).run("u", "s", "hi")]
    root = named(exporter.get_finished_spans(), "invoke_agent second")
    assert [dict(e.attributes or {}) for e in root.events] == [
        {
            "adk.decision": "replaced",
            "adk.by": "callback:Sign.after_agent",
            "adk.callback": "Sign",
            "adk.hook": "after_agent",
            "adk.target": "agent:second",
        }
    ]
