"""The attributes of each span, in the GenAI conventions: who runs (agent), what is asked (model
call), what runs (tool call)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from adk.agents import AgentTool
from adk.telemetry.names import (
    ADK_ATTEMPT,
    ADK_BRANCH,
    ADK_INVOCATION_ID,
    CHAT,
    EXECUTE_TOOL,
    EXTENSION,
    FUNCTION,
    INVOKE_AGENT,
    OPENAI,
    UNKNOWN_PROVIDER,
    gen_ai,
)

if TYPE_CHECKING:
    from adk.agents.base import BaseAgent
    from adk.context import ModelContext, ToolContext
    from adk.tools import BaseTool

__all__ = [
    "agent_attributes",
    "chat_attributes",
    "provider_of",
    "request_attributes",
    "tool_attributes",
    "tool_type",
]


def provider_of(model: object) -> str:
    """The `gen_ai.provider.name` of a model: the one it declares (a `provider` attribute), `openai`
    for an `OpenAIModel`, else `_OTHER`."""
    declared = getattr(model, "provider", None)
    if isinstance(declared, str) and declared:
        return declared
    # An OpenAIModel exists only once its module is imported: no need to import the SDK to ask.
    module = sys.modules.get("adk.models.openai")
    if module is not None and isinstance(model, module.OpenAIModel):
        return OPENAI
    return UNKNOWN_PROVIDER


def tool_type(tool: BaseTool) -> str:
    """`extension` for a tool that reaches outside the application (an MCP server's, an agent), else
    `function`: the application runs the function the model gave arguments for."""
    if isinstance(tool, AgentTool):
        return EXTENSION
    module = sys.modules.get("adk.mcp")  # the mcp extra: loaded only if an McpTool can exist
    if module is not None and isinstance(tool, module.McpTool):
        return EXTENSION
    return FUNCTION


def agent_attributes(agent: BaseAgent, invocation_id: str, branch: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        gen_ai.GEN_AI_OPERATION_NAME: INVOKE_AGENT,
        gen_ai.GEN_AI_AGENT_NAME: agent.name,
        ADK_INVOCATION_ID: invocation_id,
        ADK_BRANCH: branch,
    }
    if agent.description:
        attributes[gen_ai.GEN_AI_AGENT_DESCRIPTION] = agent.description
    model = getattr(agent, "model", None)  # an LlmAgent's; a workflow agent asks no model itself
    if model is not None:
        attributes[gen_ai.GEN_AI_PROVIDER_NAME] = provider_of(model)
        attributes[gen_ai.GEN_AI_REQUEST_MODEL] = model.name
    return attributes


def chat_attributes(ctx: ModelContext) -> tuple[str, dict[str, Any]]:
    """The model asked for (the request's, else the model's own name) and the operation's attributes,
    which the metrics share."""
    model = ctx.request.model or ctx.model.name
    return model, {
        gen_ai.GEN_AI_OPERATION_NAME: CHAT,
        gen_ai.GEN_AI_PROVIDER_NAME: provider_of(ctx.model),
        gen_ai.GEN_AI_REQUEST_MODEL: model,
    }


def request_attributes(ctx: ModelContext) -> dict[str, Any]:
    """The attributes of a chat span beyond the operation's: the agent, the attempt, the settings."""
    attributes: dict[str, Any] = {
        gen_ai.GEN_AI_AGENT_NAME: ctx.agent.name,
        ADK_INVOCATION_ID: ctx.invocation_id,
        ADK_ATTEMPT: ctx.attempt,
    }
    request = ctx.request
    if request.max_tokens is not None:
        attributes[gen_ai.GEN_AI_REQUEST_MAX_TOKENS] = request.max_tokens
    if request.temperature is not None:
        attributes[gen_ai.GEN_AI_REQUEST_TEMPERATURE] = request.temperature
    return attributes


def tool_attributes(ctx: ToolContext) -> dict[str, Any]:
    tool = ctx.tool
    attributes: dict[str, Any] = {
        gen_ai.GEN_AI_OPERATION_NAME: EXECUTE_TOOL,
        gen_ai.GEN_AI_TOOL_NAME: tool.name,
        gen_ai.GEN_AI_TOOL_CALL_ID: ctx.tool_call_id,
        gen_ai.GEN_AI_TOOL_TYPE: tool_type(tool),
        gen_ai.GEN_AI_AGENT_NAME: ctx.agent.name,
        ADK_INVOCATION_ID: ctx.invocation_id,
        ADK_ATTEMPT: ctx.attempt,
    }
    if tool.description:
        attributes[gen_ai.GEN_AI_TOOL_DESCRIPTION] = tool.description
    return attributes
