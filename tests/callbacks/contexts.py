"""Real agent, model and tool contexts for tests, around a real invocation and simple fakes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from adk.agents.base import BaseAgent
from adk.context import AgentContext, Invocation, ModelContext, ToolContext
from adk.events import Message
from adk.models.base import LlmRequest, Model
from adk.sessions.base import Session
from adk.tools import BaseTool


def invocation() -> Invocation:
    return Invocation("inv-1", Session(id="s-1", user_id="u-1"), Message.user("hi"))


# The chains never look inside the agent, model or tool: named stand-ins are enough.
AGENT = cast(BaseAgent, SimpleNamespace(name="agent"))
MODEL = cast(Model, SimpleNamespace(name="model"))
TOOL = cast(BaseTool, SimpleNamespace(name="tool"))


def agent_context() -> AgentContext:
    return AgentContext(invocation=invocation(), agent=AGENT, branch="agent")


def model_context(request: LlmRequest | None = None) -> ModelContext:
    return ModelContext(
        invocation=invocation(), agent=AGENT, branch="agent", request=request or LlmRequest(), model=MODEL
    )


def tool_context(**args: Any) -> ToolContext:
    return ToolContext(
        invocation=invocation(), agent=AGENT, branch="agent", tool=TOOL, args=args, tool_call_id="call-1"
    )
