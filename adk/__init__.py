"""adk: an agent development kit with a typed, Elixir-style callback system and error recovery."""

import importlib
import typing

from adk.agents import BaseAgent, LlmAgent, LoopAgent, MaxIterationsExceeded, ParallelAgent, SequentialAgent
from adk.approvals import Approve, Pending, Reject
from adk.callbacks import (
    AfterAgent,
    AfterModel,
    AfterRun,
    AfterTool,
    AnyCallback,
    BeforeAgent,
    BeforeAgentResult,
    BeforeModel,
    BeforeModelResult,
    BeforeResult,
    BeforeRun,
    BeforeRunResult,
    BeforeTool,
    BeforeToolResult,
    Callback,
    Callbacks,
    Cont,
    Content,
    Decision,
    Defer,
    Deferred,
    ErrorResult,
    Fallback,
    FellBack,
    Halt,
    Halted,
    OnAgentError,
    OnAgentErrorResult,
    OnEvent,
    OnModelError,
    OnModelErrorResult,
    OnToolError,
    OnToolErrorResult,
    OnUserMessage,
    OnUserMessageResult,
    Raise,
    Replaced,
    Retried,
    Retry,
    run_after,
    run_before,
    run_on_error,
)
from adk.context import (
    AgentContext,
    Invocation,
    ModelContext,
    RunContext,
    State,
    ToolContext,
    current_invocation,
    current_tool_call_id,
)
from adk.errors import (
    AdkError,
    ApprovalError,
    CallbackError,
    CallbackRegistrationError,
    CircuitOpenError,
    ModelError,
    RetriesExhausted,
    ScriptError,
    SessionBusyError,
    StaleSessionError,
    ToolArgumentsError,
    ToolError,
    ToolNotFoundError,
    ToolRetry,
)
from adk.events import (
    Choice,
    ErrorInfo,
    Event,
    EventActions,
    FunctionCall,
    LlmResponse,
    Message,
    ObjectType,
    ToolCall,
    ToolDeclaration,
    Usage,
)
from adk.models.base import LlmRequest, Model
from adk.recovery import RetryPolicy, is_transient
from adk.runner import Runner
from adk.sessions import InMemorySessionService, Session, SessionService
from adk.tools import BaseTool, FunctionTool, tool

if typing.TYPE_CHECKING:
    from adk.agui import AfterTranslate, BeforeTranslate, TranslateContext
    from adk.sessions.postgres import PostgresSessionService
    from adk.sessions.sqlite import SqliteSessionService

__all__ = [
    "AdkError",
    "AfterAgent",
    "AfterModel",
    "AfterRun",
    "AfterTool",
    "AfterTranslate",
    "AgentContext",
    "AnyCallback",
    "ApprovalError",
    "Approve",
    "BaseAgent",
    "BaseTool",
    "BeforeAgent",
    "BeforeAgentResult",
    "BeforeModel",
    "BeforeModelResult",
    "BeforeResult",
    "BeforeRun",
    "BeforeRunResult",
    "BeforeTool",
    "BeforeToolResult",
    "BeforeTranslate",
    "Callback",
    "CallbackError",
    "CallbackRegistrationError",
    "Callbacks",
    "Choice",
    "CircuitOpenError",
    "Cont",
    "Content",
    "Decision",
    "Defer",
    "Deferred",
    "ErrorInfo",
    "ErrorResult",
    "Event",
    "EventActions",
    "Fallback",
    "FellBack",
    "FunctionCall",
    "FunctionTool",
    "Halt",
    "Halted",
    "InMemorySessionService",
    "Invocation",
    "LlmAgent",
    "LlmRequest",
    "LlmResponse",
    "LoopAgent",
    "MaxIterationsExceeded",
    "Message",
    "Model",
    "ModelContext",
    "ModelError",
    "ObjectType",
    "OnAgentError",
    "OnAgentErrorResult",
    "OnEvent",
    "OnModelError",
    "OnModelErrorResult",
    "OnToolError",
    "OnToolErrorResult",
    "OnUserMessage",
    "OnUserMessageResult",
    "ParallelAgent",
    "Pending",
    "PostgresSessionService",
    "Raise",
    "Reject",
    "Replaced",
    "Retried",
    "RetriesExhausted",
    "Retry",
    "RetryPolicy",
    "RunContext",
    "Runner",
    "ScriptError",
    "SequentialAgent",
    "Session",
    "SessionBusyError",
    "SessionService",
    "SqliteSessionService",
    "StaleSessionError",
    "State",
    "ToolArgumentsError",
    "ToolCall",
    "ToolContext",
    "ToolDeclaration",
    "ToolError",
    "ToolNotFoundError",
    "ToolRetry",
    "TranslateContext",
    "Usage",
    "current_invocation",
    "current_tool_call_id",
    "is_transient",
    "run_after",
    "run_before",
    "run_on_error",
    "tool",
]

# Loaded on first use, so that `import adk` stays cheap: AG-UI translation is an optional extra,
# and the SQLite and PostgreSQL stores (with sqlite3, asyncpg) are choices of store among others.
_LAZY = {
    "AfterTranslate": "adk.agui",
    "BeforeTranslate": "adk.agui",
    "TranslateContext": "adk.agui",
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
