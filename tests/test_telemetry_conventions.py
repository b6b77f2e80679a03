"""Tracing in the GenAI semantic conventions, checked against the conventions package itself and
read back through the SDK's in-memory span exporter and metric reader."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes.gen_ai_attributes import GenAiOperationNameValues
from opentelemetry.trace import StatusCode

from adk import AgentTool, Cont, LlmAgent, LlmResponse, ModelContext, Runner
from adk.errors import AuthenticationError, ServerError
from adk.events import ToolCall, Usage
from adk.models.openai import OpenAIModel
from adk.recovery import Testing
from adk.telemetry import Tracing, names
from adk.testing import ScriptedModel
from tests._runtime import Tool, echo

pytestmark = pytest.mark.usefixtures("testing")


class OpenAiScripted(ScriptedModel):
    """A scripted model that declares its provider, as any model may."""

    provider = "openai"


class Settings:
    """Sets the request's sampling settings, before Tracing sees the call."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        ctx.request.max_tokens, ctx.request.temperature = 256, 0.2
        return Cont(ctx)


class Otel:
    """A Tracing with its own in-memory span exporter and metric reader."""

    def __init__(self, capture_content: bool | None = False) -> None:
        self.spans = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        meters = MeterProvider(metric_readers=[self.reader])
        self.tracing = Tracing(provider, meter_provider=meters, capture_content=capture_content)

    def finished(self) -> tuple[ReadableSpan, ...]:
        return self.spans.get_finished_spans()

    def points(self) -> dict[str, tuple[str, list[HistogramDataPoint]]]:
        """Per metric name: its unit and its histogram points."""
        data = self.reader.get_metrics_data()
        found: dict[str, tuple[str, list[HistogramDataPoint]]] = {}
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found[metric.name] = (metric.unit or "", list(metric.data.data_points))  # type: ignore[arg-type]
        return found


def outline(spans: tuple[ReadableSpan, ...]) -> list[tuple[str, str, str | None]]:
    """(name, kind, parent's name) per span, in start order."""
    by_id = {s.context.span_id: s.name for s in spans if s.context is not None}
    ordered = sorted(spans, key=lambda s: s.start_time or 0)
    return [(s.name, s.kind.name, by_id.get(s.parent.span_id) if s.parent else None) for s in ordered]


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    """The span's events; an exception's stack trace left out (its text is Python's)."""
    return [
        (e.name, {k: v for k, v in (e.attributes or {}).items() if k != "exception.stacktrace"})
        for e in span.events
    ]


async def a_traced_turn(otel: Otel, testing: Testing) -> None:
    """A model call retried after a server error, then two tool calls (one fails), then a model
    call whose failure ends the run."""
    calls = LlmResponse.calls(
        ToolCall.of("echo", '{"text": "hi"}', id="c1"),
        ToolCall.of("echo", '{"fail": true}', id="c2"),
        model="gpt-4o-2024-08-06",
        usage=Usage(prompt_tokens=12, completion_tokens=5, total_tokens=17),
    )
    model = OpenAiScripted([ServerError("busy"), calls, AuthenticationError("revoked")], name="gpt-4o")
    agent = LlmAgent("assistant", model=model, tools=[Tool("echo", echo)], description="Says things back")
    runner = Runner(agent, callbacks=[Settings(), otel.tracing])
    events_ = [e async for e in runner.run("u1", "s1", "hi", invocation_id="inv1")]
    assert events_[-1].object == "error"


async def test_a_traced_turn_is_the_conventions_span_tree_with_adk_decisions_and_metrics(
    testing: Testing,
) -> None:
    otel = Otel()
    await a_traced_turn(otel, testing)
    spans = otel.finished()
    assert outline(spans) == [
        ("invoke_agent assistant", "INTERNAL", None),
        ("chat gpt-4o", "CLIENT", "invoke_agent assistant"),
        ("execute_tool echo", "INTERNAL", "invoke_agent assistant"),
        ("execute_tool echo", "INTERNAL", "invoke_agent assistant"),
        ("chat gpt-4o", "CLIENT", "invoke_agent assistant"),
    ]
    root, first, ok, failed, last = sorted(spans, key=lambda s: s.start_time or 0)
    assert attributes(root) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "assistant",
        "gen_ai.agent.description": "Says things back",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.conversation.id": "s1",
        "user.id": "u1",
        "adk.invocation_id": "inv1",
        "adk.branch": "",
        "error.type": "AuthenticationError",
    }
    assert (root.status.status_code, root.status.description) == (
        StatusCode.ERROR,
        "AuthenticationError: revoked",
    )
    operation = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
    }
    request = {
        "gen_ai.request.max_tokens": 256,
        "gen_ai.request.temperature": 0.2,
        "gen_ai.agent.name": "assistant",
        "adk.invocation_id": "inv1",
    }
    assert attributes(first) == operation | request | {
        "adk.attempt": 2,
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 5,
    }
    assert first.status.status_code is StatusCode.UNSET
    wait = testing.waits[0]
    assert events(first) == [
        (
            "exception",
            {
                "exception.type": "adk.errors.ServerError",
                "exception.message": "busy",
                "exception.escaped": "False",
                "adk.attempt": 1,
                "gen_ai.request.model": "gpt-4o",
            },
        ),
        (
            "adk.decision",
            {
                "adk.decision": "retried",
                "adk.by": "callback:RetryPolicy.on_model_error",
                "adk.callback": "RetryPolicy",
                "adk.hook": "on_model_error",
                "adk.target": "model:gpt-4o",
                "adk.attempt": 2,
                "adk.wait": wait,
                "adk.error": "ServerError",
            },
        ),
    ]
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.type": "function",
        "gen_ai.agent.name": "assistant",
        "adk.invocation_id": "inv1",
        "adk.attempt": 1,
    }
    assert attributes(ok) == tool | {"gen_ai.tool.call.id": "c1"}
    assert ok.status.status_code is StatusCode.UNSET
    assert attributes(failed) == tool | {"gen_ai.tool.call.id": "c2", "error.type": "ValueError"}
    assert (failed.status.status_code, failed.status.description) == (StatusCode.ERROR, "ValueError: no")
    assert attributes(last) == operation | request | {"adk.attempt": 1, "error.type": "AuthenticationError"}
    assert last.status.status_code is StatusCode.ERROR

    metrics = otel.points()
    assert sorted(metrics) == ["gen_ai.client.operation.duration", "gen_ai.client.token.usage"]
    unit, durations = metrics["gen_ai.client.operation.duration"]
    assert unit == "s"
    assert sorted(((dict(p.attributes or {}), p.count) for p in durations), key=str) == sorted(
        [
            (operation | {"gen_ai.response.model": "gpt-4o-2024-08-06"}, 1),
            (operation | {"error.type": "AuthenticationError"}, 1),
        ],
        key=str,
    )
    assert all(p.explicit_bounds == names.DURATION_BUCKETS and p.sum >= 0 for p in durations)
    unit, tokens = metrics["gen_ai.client.token.usage"]
    assert unit == "{token}"
    answered = operation | {"gen_ai.response.model": "gpt-4o-2024-08-06"}
    assert sorted(((dict(p.attributes or {}), p.count, p.sum) for p in tokens), key=str) == sorted(
        [
            (answered | {"gen_ai.token.type": "input"}, 1, 12),
            (answered | {"gen_ai.token.type": "output"}, 1, 5),
        ],
        key=str,
    )
    assert all(p.explicit_bounds == names.TOKEN_BUCKETS for p in tokens)
    assert names.TOKEN_BUCKETS[-1] == 67108864


def _constants(package: str) -> Iterator[tuple[str, str | None]]:
    """(value, docstring) of every string constant the conventions package defines under `package`."""
    root = importlib.import_module(package)
    for info in pkgutil.iter_modules(root.__path__, f"{package}."):
        module = importlib.import_module(info.name)
        assert module.__file__ is not None
        body = ast.parse(Path(module.__file__).read_text()).body
        for node, after in zip(body, [*body[1:], None], strict=True):
            if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Constant):
                doc = (
                    after.value.value
                    if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    else None
                )
                if isinstance(node.value.value, str):
                    yield node.value.value, doc if isinstance(doc, str) else None


def conventions(kind: str) -> dict[str, str]:
    """The conventions' names of `kind` (`attributes` or `metrics`), stable and incubating, and their docs."""
    found: dict[str, str] = {}
    for package in (f"opentelemetry.semconv.{kind}", f"opentelemetry.semconv._incubating.{kind}"):
        for value, doc in _constants(package):
            found.setdefault(value, doc or "")
    return found


def emitted(spans: tuple[ReadableSpan, ...]) -> tuple[set[str], set[str], set[str]]:
    """The span names, span and event attribute names and event names adk put on `spans` (the
    `exception.*` attributes that the SDK's `record_exception` makes are the SDK's, not adk's)."""
    keys = {k for s in spans for k in s.attributes or {}}
    keys |= {k for s in spans for e in s.events for k in e.attributes or {} if not k.startswith("exception.")}
    return {s.name for s in spans}, keys, {e.name for s in spans for e in s.events}


async def test_every_name_adk_emits_is_the_conventions_or_its_own(testing: Testing) -> None:
    otel = Otel(capture_content=True)
    await a_traced_turn(otel, testing)
    researcher = LlmAgent("researcher", model=ScriptedModel(["found"]), description="Looks things up")
    boss = LlmAgent(
        "boss",
        model=ScriptedModel([LlmResponse.calls(ToolCall.of("researcher", '{"request": "x"}')), "done"]),
        tools=[AgentTool(researcher)],
    )
    [e async for e in Runner(boss, callbacks=[otel.tracing]).run("u", "s", "go")]
    span_names, keys, event_names = emitted(otel.finished())

    operations = {v.value for v in GenAiOperationNameValues}
    assert {name.split(" ", 1)[0] for name in span_names} <= operations
    assert {
        "invoke_agent assistant",
        "chat gpt-4o",
        "execute_tool echo",
        "execute_tool researcher",
    } <= span_names
    assert event_names == {"exception", "adk.decision"}
    attributes_ = conventions("attributes")
    theirs = {k for k in keys if not k.startswith("adk.")}
    assert theirs - attributes_.keys() == set(), "every other name is the conventions'"
    # The package marks every GenAI name "moved" to the GenAI conventions' own repository; none
    # adk uses may be one they replaced or removed.
    retired = {
        k for k in theirs if attributes_[k].startswith(("Deprecated: Replaced", "Deprecated: Removed"))
    }
    assert retired == set()
    assert {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments"} <= theirs

    metrics = conventions("metrics")
    assert set(otel.points()) <= metrics.keys()
    point_keys = {k for _, points in otel.points().values() for p in points for k in p.attributes or {}}
    assert point_keys <= attributes_.keys()
    declared = {v for n, v in vars(names).items() if n.isupper() and isinstance(v, str) and "." in v}
    assert {v for v in declared if not v.startswith("adk.")} <= attributes_.keys() | metrics.keys()


async def test_an_agent_tool_is_an_extension_and_its_agent_nests_under_the_call() -> None:
    otel = Otel()
    researcher = LlmAgent("researcher", model=ScriptedModel(["found"]))
    call = LlmResponse.calls(ToolCall.of("researcher", '{"request": "x"}', id="r1"))
    boss = LlmAgent("boss", model=ScriptedModel([call, "done"]), tools=[AgentTool(researcher)])
    [e async for e in Runner(boss, callbacks=[otel.tracing]).run("u", "s", "go")]
    spans = otel.finished()
    assert [(name, parent) for name, _, parent in outline(spans)] == [
        ("invoke_agent boss", None),
        ("chat scripted", "invoke_agent boss"),
        ("execute_tool researcher", "invoke_agent boss"),
        ("invoke_agent researcher", "invoke_agent boss"),
        ("chat scripted", "invoke_agent researcher"),
        ("chat scripted", "invoke_agent boss"),
    ]
    tool = next(s for s in spans if s.name == "execute_tool researcher")
    assert attributes(tool)["gen_ai.tool.type"] == "extension"


CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


async def run_with_content(otel: Otel) -> tuple[ReadableSpan, ...]:
    calls = LlmResponse.calls(ToolCall.of("echo", '{"text": "secret plan"}', id="c1"))
    agent = LlmAgent(
        "a", model=ScriptedModel([calls, "ok"]), tools=[Tool("echo", echo)], instruction="Be brief."
    )
    [e async for e in Runner(agent, callbacks=[otel.tracing]).run("u", "s", "my card is 4111")]
    return otel.finished()


async def test_message_content_is_recorded_only_when_the_user_opts_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    spans = await run_with_content(Otel(capture_content=None))
    assert {k for s in spans for k in s.attributes or {}} & CONTENT_KEYS == set()
    assert not any("4111" in str(s.attributes) or "secret plan" in str(s.attributes) for s in spans)

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "True")
    spans = await run_with_content(Otel(capture_content=None))
    first, second = sorted((s for s in spans if s.name == "chat scripted"), key=lambda s: s.start_time or 0)
    user = {"role": "user", "parts": [{"type": "text", "content": "my card is 4111"}]}
    call = {"type": "tool_call", "id": "c1", "name": "echo", "arguments": {"text": "secret plan"}}
    assert json.loads(attributes(first)["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    assert json.loads(attributes(first)["gen_ai.input.messages"]) == [user]
    assert json.loads(attributes(first)["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [call], "finish_reason": "tool_calls"}
    ]
    answer = {
        "type": "tool_call_response",
        "id": "c1",
        "response": attributes(next(s for s in spans if s.name == "execute_tool echo"))[
            "gen_ai.tool.call.result"
        ],
    }
    assert json.loads(attributes(second)["gen_ai.input.messages"]) == [
        user,
        {"role": "assistant", "parts": [call]},
        {"role": "tool", "parts": [answer]},
    ]
    tool = next(s for s in spans if s.name == "execute_tool echo")
    assert json.loads(attributes(tool)["gen_ai.tool.call.arguments"]) == {"text": "secret plan"}

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    spans = await run_with_content(Otel(capture_content=False))  # the option wins over the environment
    assert {k for s in spans for k in s.attributes or {}} & CONTENT_KEYS == set()


KEY = "sk-proj-Zq4TfW8xLm2Rb7Np0KcVs9Hd"


async def test_with_content_captured_the_api_key_is_on_no_span() -> None:
    def server(request: httpx.Request) -> httpx.Response:
        key = request.headers["authorization"].removeprefix("Bearer ")
        answer = {"role": "assistant", "content": f"your key is {key}"}
        body = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": f"gpt-test-{key[-10:]}",
            "choices": [{"index": 0, "message": answer, "finish_reason": "stop"}],
        }
        return httpx.Response(200, json=body)

    otel = Otel(capture_content=True)
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        model = OpenAIModel("gpt-test", api_key=KEY, base_url="http://fake.test/v1", http_client=client)
        [e async for e in Runner(LlmAgent("a", model=model), callbacks=[otel.tracing]).run("u", "s", "hi")]
    spans = otel.finished()
    chat = next(s for s in spans if s.name.startswith("chat "))
    assert attributes(chat)["gen_ai.provider.name"] == "openai"
    assert "your key is" in attributes(chat)["gen_ai.output.messages"]
    text = repr([(s.name, s.attributes, [(e.name, e.attributes) for e in s.events], s.status) for s in spans])
    assert [KEY[i : i + 8] for i in range(len(KEY) - 7) if KEY[i : i + 8] in text] == []
