"""The official AG-UI JavaScript client (`@ag-ui/client`'s HttpAgent, run by node) against the app.

Install it with `npm ci --prefix tests/agui/js`. Without it this test is skipped, unless
ADK_AGUI_JS_REQUIRED is set (as in CI), where a missing client is a failure.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from adk.agents import LlmAgent
from adk.agui import create_app
from adk.events import LlmResponse, ToolCall
from adk.runner import Runner
from adk.testing import ScriptedModel, set_testing
from tests.agui.support import JS, FlakyStream, node, serving, stable_ids, verified, weather

ROOT = Path(__file__).parents[2]


def run_client(url: str, thread: str, *runs: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """Runs `runs` on `thread` with the official client; what it saw, ids made stable."""
    spec = {"url": url, "threadId": thread, "runs": list(runs), **spec}
    spec.setdefault("initialMessages", [])
    binary = node()
    if binary is None:
        pytest.skip(f"node or @ag-ui/client is missing: npm ci --prefix {JS.relative_to(ROOT)}")
    done = subprocess.run(
        [binary, str(JS / "run_agent.mjs"), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"the client failed:\n{done.stdout}\n{done.stderr}"
    seen: dict[str, Any] = stable_ids([json.loads(done.stdout)])[0]
    return seen


def kinds(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(e["type"], e.get("messageId") or e.get("toolCallId")) for e in events]


def test_the_official_client_receives_a_valid_streamed_tool_run_with_a_discarded_attempt() -> None:
    call = ToolCall.of("weather", '{"city": "Paris"}', id="call_1")
    script = ScriptedModel([LlmResponse.calls(call, content="Checking"), "Sunny in Paris"])
    runner = Runner(LlmAgent("helper", model=FlakyStream("Let me th", script), tools=[weather]))
    with set_testing(True), serving(create_app(runner, path="/agui")) as url:
        seen = run_client(
            url,
            "t1",
            {"runId": "r1"},
            initialMessages=[{"id": "u1", "role": "user", "content": "Weather in Paris?"}],
        )
    [run] = seen["runs"]
    events = run["events"]
    assert kinds(events) == [
        ("RUN_STARTED", None),
        ("STATE_SNAPSHOT", None),
        ("TEXT_MESSAGE_START", "id1"),
        ("TEXT_MESSAGE_CONTENT", "id1"),
        ("CUSTOM", None),  # the retry, as it is decided
        ("TEXT_MESSAGE_END", "id1"),  # the discarded attempt's text ends...
        ("MESSAGES_SNAPSHOT", None),  # ...and is dropped from the client's messages
        ("TEXT_MESSAGE_START", "id2"),
        ("TEXT_MESSAGE_CONTENT", "id2"),
        ("TOOL_CALL_START", "call_1"),
        ("TOOL_CALL_ARGS", "call_1"),  # the arguments, as the model streamed them
        ("TOOL_CALL_ARGS", "call_1"),
        ("TEXT_MESSAGE_END", "id2"),
        ("TOOL_CALL_END", "call_1"),
        ("TOOL_CALL_RESULT", "id3"),
        ("STATE_DELTA", None),
        ("TEXT_MESSAGE_START", "id4"),
        ("TEXT_MESSAGE_CONTENT", "id4"),
        ("TEXT_MESSAGE_CONTENT", "id4"),
        ("TEXT_MESSAGE_CONTENT", "id4"),
        ("TEXT_MESSAGE_END", "id4"),
        ("RUN_FINISHED", None),
    ]
    (retry,) = [e for e in events if e["type"] == "CUSTOM"]
    assert (retry["name"], retry["value"]["kind"], retry["value"]["by"], retry["value"]["attempt"]) == (
        "adk.decision",
        "retried",
        "callback:RetryPolicy.on_model_error",
        2,
    )
    assert [e["delta"] for e in events if e["type"] in ("TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS")] == [
        "Let me th",
        "Checking",
        '{"city":',
        ' "Paris"}',
        "Sunny",
        " in",
        " Paris",
    ]
    assert events[9]["parentMessageId"] == "id2"
    assert run["pending"] == []
    assert seen["messages"] == [
        {"id": "u1", "role": "user", "content": "Weather in Paris?"},
        {
            "id": "id2",
            "role": "assistant",
            "content": "Checking",
            "name": "helper",
            "toolCalls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"id": "id3", "role": "tool", "toolCallId": "call_1", "content": '{"city":"Paris","sky":"sunny"}'},
        {"id": "id4", "role": "assistant", "content": "Sunny in Paris", "name": "helper"},
    ]
    assert seen["state"] == {"last_city": "Paris"}


CONFIRM = {
    "name": "confirm",
    "description": "Ask the user to confirm",
    "parameters": {"type": "object", "properties": {"question": {"type": "string"}}},
}


def test_a_frontend_tool_ends_the_run_and_its_result_continues_the_thread_with_shared_state() -> None:
    ask = ToolCall.of("confirm", '{"question": "Paris?"}', id="call_ask")
    look = ToolCall.of("weather", '{"city": "Paris"}', id="call_look")
    model = ScriptedModel([LlmResponse.calls(ask), LlmResponse.calls(look), "Sunny in Paris"])
    runner = Runner(LlmAgent("helper", model=model, tools=[weather]))
    with serving(create_app(runner, path="/agui")) as url:
        seen = run_client(
            url,
            "t1",
            {"runId": "r1", "tools": [CONFIRM], "answer": "yes"},
            {"runId": "r2", "tools": [CONFIRM]},
            initialMessages=[{"id": "u1", "role": "user", "content": "Weather?"}],
            initialState={"units": "metric"},
        )
    first, second = seen["runs"]
    assert kinds(first["events"]) == [
        ("RUN_STARTED", None),
        ("STATE_SNAPSHOT", None),
        ("TOOL_CALL_START", "call_ask"),
        ("TOOL_CALL_ARGS", "call_ask"),
        ("TOOL_CALL_ARGS", "call_ask"),
        ("TOOL_CALL_END", "call_ask"),
        ("RUN_FINISHED", None),
    ]
    assert first["events"][1]["snapshot"] == {"units": "metric"}  # the client's state seeded the thread
    assert "parentMessageId" not in first["events"][2]  # no text message was started
    assert first["events"][-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["call_ask"]}
    assert first["pending"] == ["call_ask"]
    assert kinds(second["events"]) == [
        ("RUN_STARTED", None),
        ("STATE_SNAPSHOT", None),
        ("TOOL_CALL_START", "call_look"),
        ("TOOL_CALL_ARGS", "call_look"),
        ("TOOL_CALL_ARGS", "call_look"),
        ("TOOL_CALL_END", "call_look"),
        ("TOOL_CALL_RESULT", "id1"),
        ("STATE_DELTA", None),
        ("TEXT_MESSAGE_START", "id2"),
        ("TEXT_MESSAGE_CONTENT", "id2"),
        ("TEXT_MESSAGE_CONTENT", "id2"),
        ("TEXT_MESSAGE_CONTENT", "id2"),
        ("TEXT_MESSAGE_END", "id2"),
        ("RUN_FINISHED", None),
    ]
    assert second["pending"] == []
    assert seen["state"] == {"units": "metric", "last_city": "Paris"}
    assert [t.name for t in model.requests[0].tools] == ["weather", "confirm"]
    assert [(m.role, m.content) for m in model.requests[1].messages] == [
        ("user", "Weather?"),
        ("assistant", ""),
        ("tool", "yes"),  # the client's result answered its tool's call
    ]
    assert [m["id"] for m in seen["messages"]] == [
        "u1",
        "call_ask",
        "result-call_ask",
        "call_look",
        "id1",
        "id2",
    ]


def test_the_streams_of_every_test_are_checked_by_the_official_client() -> None:
    """`verified` (used by post_run and the translator tests) fails a stream the client refuses."""
    if node() is None:
        pytest.skip("node or @ag-ui/client is missing")
    started = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    assert verified([started, {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}])
    with pytest.raises(AssertionError, match="No active tool call found with ID 'c'"):
        verified([started, {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{"}])
