"""adk: an agent development kit with a typed, Elixir-style callback system and error recovery.

`adk` holds the product's names: agents, the runner, hook results and contexts, models, events,
tools, session stores, ready-made recovery callbacks and the main errors. The per-hook protocols
and result aliases, which only annotations need, are in `adk.types`; everything else is in its
own module (`adk.events`, `adk.errors`, `adk.callbacks`, `adk.agents`, ...).
"""

import importlib
import typing

from adk.agents import AgentTool, BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from adk.approvals import Approve, Pending, Reject, Reply
from adk.callbacks import Callback, Cont, Defer, Fallback, Halt, Raise, Retry
from adk.context import (
    AgentContext,
    ModelContext,
    RunContext,
    State,
    ToolContext,
    current_invocation,
    current_tool_call_id,
)
from adk.errors import AdkError, CallbackError, ModelError, RetriesExhausted, ToolError, ToolRetry
from adk.events import Event, LlmResponse, Message, ObjectType
from adk.models.base import LlmRequest, Model
from adk.recovery import CircuitBreaker, FallbackModels, FixedFallback, RetryPolicy, RetryThenFallback
from adk.runner import Runner
from adk.sessions import InMemorySessionService, SessionService
from adk.tools import BaseTool, FunctionTool, tool

if typing.TYPE_CHECKING:
    from adk.models.openai import OpenAIModel
    from adk.sessions.postgres import PostgresSessionService
    from adk.sessions.sqlite import SqliteSessionService

__all__ = [
    "AdkError",
    "AgentContext",
    "AgentTool",
    "Approve",
    "BaseAgent",
    "BaseTool",
    "Callback",
    "CallbackError",
    "CircuitBreaker",
    "Cont",
    "Defer",
    "Event",
    "Fallback",
    "FallbackModels",
    "FixedFallback",
    "FunctionTool",
    "Halt",
    "InMemorySessionService",
    "LlmAgent",
    "LlmRequest",
    "LlmResponse",
    "LoopAgent",
    "Message",
    "Model",
    "ModelContext",
    "ModelError",
    "ObjectType",
    "OpenAIModel",
    "ParallelAgent",
    "Pending",
    "PostgresSessionService",
    "Raise",
    "Reject",
    "Reply",
    "RetriesExhausted",
    "Retry",
    "RetryPolicy",
    "RetryThenFallback",
    "RunContext",
    "Runner",
    "SequentialAgent",
    "SessionService",
    "SqliteSessionService",
    "State",
    "ToolContext",
    "ToolError",
    "ToolRetry",
    "current_invocation",
    "current_tool_call_id",
    "tool",
]

# Loaded on first use, so that `import adk` stays cheap: the openai SDK takes hundreds of
# milliseconds, and the SQLite and PostgreSQL stores (with sqlite3, asyncpg) are choices of store.
_LAZY = {
    "OpenAIModel": "adk.models.openai",
    "SqliteSessionService": "adk.sessions.sqlite",
    "PostgresSessionService": "adk.sessions.postgres",
}

if not typing.TYPE_CHECKING:  # mypy would otherwise accept any name imported from adk

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(globals().keys() | _LAZY.keys())
