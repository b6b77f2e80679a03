"""The official AG-UI client never sees a key a model server streams back in short pieces.

A chat-completions server on 127.0.0.1 streams the key in pieces of 1 to 7 characters, in its
text and in a tool call's arguments; the agent's AG-UI app, on another loopback port, is read by
`@ag-ui/client`'s HttpAgent (see test_js_client.py for how it is driven, and skipped).
"""

from __future__ import annotations

from typing import Any

import httpx

from adk.agents import LlmAgent
from adk.agui import create_app
from adk.models.openai import OpenAIModel
from adk.runner import Runner
from adk.testing import set_testing
from adk.tools import tool
from tests.agui.support import serving
from tests.agui.test_js_client import run_client
from tests.models import streaming_server
from tests.models.streaming_server import KEY


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return "found"


def deltas(events: list[dict[str, Any]], kind: str) -> str:
    return "".join(e["delta"] for e in events if e["type"] == kind)


def test_the_official_client_gets_streamed_text_and_arguments_with_the_key_masked() -> None:
    with set_testing(True), serving(streaming_server.app()) as model_url:
        # No connection kept: the app's loop, which opens them, is gone before a test could close one.
        client = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
        model = OpenAIModel("m", base_url=f"{model_url}/v1", api_key=KEY, http_client=client)
        runner = Runner(LlmAgent("helper", model=model, tools=[lookup]))
        with serving(create_app(runner, path="/agui")) as url:
            seen = run_client(
                url, "t1", {"runId": "r1"}, initialMessages=[{"id": "u1", "role": "user", "content": "key?"}]
            )
    [run] = seen["runs"]
    events = run["events"]
    assert deltas(events, "TEXT_MESSAGE_CONTENT") == "The key is *** okDone: ***."
    assert deltas(events, "TOOL_CALL_ARGS") == '{"q": "***"}'
    assert "MESSAGES_SNAPSHOT" not in [e["type"] for e in events]  # nothing streamed was taken back
    assert [(m["role"], m.get("content")) for m in seen["messages"]] == [
        ("user", "key?"),
        ("assistant", "The key is *** ok"),
        ("tool", "found"),
        ("assistant", "Done: ***."),
    ]
    everything = str(seen)
    assert [KEY[i : i + 8] for i in range(len(KEY) - 7) if KEY[i : i + 8] in everything] == []
