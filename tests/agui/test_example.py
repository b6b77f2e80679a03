"""examples/agui_server.py works: its agent, served, answers a weather question with its tool."""

from __future__ import annotations

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
