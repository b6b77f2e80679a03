"""Agents: the base flow, the model-calling agent, the workflow agents, transfer and agent tools."""

from adk.agents.base import BaseAgent
from adk.agents.conditions import Condition, last_event, mentioned, state_set
from adk.agents.llm import LlmAgent, MaxIterationsExceeded
from adk.agents.output import output_of, output_response
from adk.agents.tool import AgentTool
from adk.agents.workflow import LoopAgent, ParallelAgent, SequentialAgent

__all__ = [
    "AgentTool",
    "BaseAgent",
    "Condition",
    "LlmAgent",
    "LoopAgent",
    "MaxIterationsExceeded",
    "ParallelAgent",
    "SequentialAgent",
    "last_event",
    "mentioned",
    "output_of",
    "output_response",
    "state_set",
]
