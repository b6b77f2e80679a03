"""The `adk web` browser test's MCP agent (tests/web/test_browser.py): `server-everything`'s
tools, its questions asked of the person (`elicitation=True`); the model counts ("count") or asks
("ask"), then repeats what the tool said."""

import json

from adk import LlmAgent, LlmRequest, LlmResponse
from adk.events import ToolCall
from adk.testing import ScriptedModel
from tests.mcp.servers import npm_server


def clerk(request: LlmRequest) -> LlmResponse:
    last = request.messages[-1]
    if last.role == "tool":
        return LlmResponse.text(f"The server said: {last.content.splitlines()[0]}")
    if last.content == "count":
        arguments = json.dumps({"duration": 0, "steps": 3})
        return LlmResponse.calls(ToolCall.of("trigger-long-running-operation", arguments, id="count-1"))
    return LlmResponse.calls(ToolCall.of("trigger-elicitation-request", "{}", id="ask-1"))


agent = LlmAgent(
    "clerk",
    model=ScriptedModel([clerk] * 10),
    tools=[npm_server("server-everything", "stdio", elicitation=True)],
)
