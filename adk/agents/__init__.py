"""Agents: the base flow, the model-calling agent, and the workflow agents."""

from adk.agents.base import BaseAgent
from adk.agents.llm import LlmAgent, MaxIterationsExceeded
from adk.agents.workflow import LoopAgent, ParallelAgent, SequentialAgent

__all__ = ["BaseAgent", "LlmAgent", "LoopAgent", "MaxIterationsExceeded", "ParallelAgent", "SequentialAgent"]
