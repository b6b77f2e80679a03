"""The official AG-UI JavaScript client (`@ag-ui/client`'s HttpAgent, run by node) against the app.

Install it with `npm ci --prefix tests/agui/js`. Without it this test is skipped, unless
ADK_AGUI_JS_REQUIRED is set (as in CI), where a missing client is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from adk.agents import LlmAgent
from adk.agui import create_app
from adk.events import LlmResponse, ToolCall
from adk.runner import Runner
from adk.testing import ScriptedModel, set_testing
from tests.agui.support import FlakyStream, serving, stable_ids, weather

JS = Path(__file__).parent / "js"
ROOT = Path(__file__).parents[2]


def node() -> str:
    """The node binary, when node and the client are installed; else skip (or fail, if required)."""
    binary = shutil.which("node")
    missing = (
        "node is not installed"
        if binary is None
        else f"@ag-ui/client is not installed: run npm ci --prefix {JS.relative_to(ROOT)}"
        if not (JS / "node_modules" / "@ag-ui" / "client").is_dir()
        else None
    )
    if missing is None:
        assert binary is not None
        return binary
    if os.environ.get("ADK_AGUI_JS_REQUIRED"):
        pytest.fail(f"ADK_AGUI_JS_REQUIRED is set but {missing}")
    pytest.skip(missing)


def run_client(url: str, thread: str, run: str, text: str) -> dict[str, Any]:
    done = subprocess.run(
        [node(), str(JS / "run_agent.mjs"), url, thread, run, text],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"the client failed:\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_official_client_receives_a_valid_streamed_tool_run_with_a_discarded_attempt() -> None:
    call = ToolCall.of("weather", '{"city": "Paris"}', id="call_1")
    script = ScriptedModel([LlmResponse.calls(call, content="Checking"), "Sunny in Paris"])
    runner = Runner(LlmAgent("helper", model=FlakyStream("Let me th", script), tools=[weather]))
    with set_testing(True), serving(create_app(runner, path="/agui")) as url:
        seen = run_client(url, "t1", "r1", "Weather in Paris?")
    n = len(seen["events"])
    named = stable_ids([*seen["events"], *seen["messages"]])
    events, messages = named[:n], named[n:]
    assert [(e["type"], e.get("messageId") or e.get("toolCallId")) for e in events] == [
        ("RUN_STARTED", None),
        ("STATE_SNAPSHOT", None),
        ("TEXT_MESSAGE_START", "id1"),
        ("TEXT_MESSAGE_CONTENT", "id1"),
        ("CUSTOM", None),  # the retry, as it is decided
        ("TEXT_MESSAGE_END", "id1"),  # the discarded attempt's text ends...
        ("MESSAGES_SNAPSHOT", None),  # ...and is dropped from the client's messages
        ("TEXT_MESSAGE_START", "id2"),
        ("TEXT_MESSAGE_CONTENT", "id2"),
        ("TEXT_MESSAGE_END", "id2"),
        ("TOOL_CALL_START", "call_1"),
        ("TOOL_CALL_ARGS", "call_1"),
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
    assert [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
        "Let me th",
        "Checking",
        "Sunny",
        " in",
        " Paris",
    ]
    assert messages == [
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
