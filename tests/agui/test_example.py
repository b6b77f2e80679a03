"""examples/agui_server.py works: its agent, served, answers a weather question with its tool."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ag_ui.core import RunErrorEvent

from adk.agui import create_app
from adk.runner import Runner
from examples.agui_server import HideErrorDetails, agent
from tests.agui.support import CTX, post_run, run_input, serving


def test_the_example_agent_answers_over_agui_with_its_tool() -> None:
    with serving(create_app(Runner(agent), path="/agui", translate_callbacks=[HideErrorDetails])) as url:
        events = post_run(url, run_input("t1", "r1", "What is the weather in Paris?"))
    said = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert said == 'Let me check.Here is the weather: {"city":"Paris","sky":"sunny"}'
    assert [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"] == ["get_weather"]
    assert events[-1]["type"] == "RUN_FINISHED"


def test_the_example_hides_error_details_from_clients() -> None:
    hidden = HideErrorDetails().after_translate(RunErrorEvent(message="db password wrong", code="X"), CTX)
    assert hidden == RunErrorEvent(message="Run r1 failed; please try again.", code="X")


def test_the_curl_example_of_the_docs_streams_a_run() -> None:
    curl = shutil.which("curl")
    if curl is None:
        if os.environ.get("ADK_AGUI_JS_REQUIRED"):
            pytest.fail("ADK_AGUI_JS_REQUIRED is set but curl is missing: apt-get install curl")
        pytest.skip("curl is not installed")
    text = (Path(__file__).parents[2] / "docs" / "agui.md").read_text()
    match = re.search(r"```sh\n(curl -N .*?)```", text, re.DOTALL)
    assert match is not None, "docs/agui.md has no curl example"
    with serving(create_app(Runner(agent), path="/")) as url:
        command = match.group(1).replace("http://127.0.0.1:8000/", url.removesuffix("agui"))
        done = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, timeout=60, check=False
        )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line[6:]) for line in done.stdout.splitlines() if line.startswith("data: ")]
    assert [e["type"] for e in events][:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    assert [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"] == ["get_weather"]
    assert events[-1] == {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
