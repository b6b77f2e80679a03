"""The callback core: tagged results, one protocol per hook, registration, the chains, decisions."""

from adk.callbacks.base import Callback
from adk.callbacks.chain import run_after, run_before, run_chain, run_on_error
from adk.callbacks.decisions import Decision, FellBack, Halted, Replaced, Retried
from adk.callbacks.protocols import (
    AfterAgent,
    AfterModel,
    AfterTool,
    AnyCallback,
    BeforeAgent,
    BeforeAgentResult,
    BeforeModel,
    BeforeModelResult,
    BeforeTool,
    BeforeToolResult,
    Content,
    OnModelError,
    OnModelErrorResult,
    OnToolError,
    OnToolErrorResult,
)
from adk.callbacks.registry import HOOKS, Callbacks, Hook, HookName, declare_hooks
from adk.callbacks.results import BeforeResult, Cont, ErrorResult, Fallback, Halt, Raise, Retry

__all__ = [
    "HOOKS",
    "AfterAgent",
    "AfterModel",
    "AfterTool",
    "AnyCallback",
    "BeforeAgent",
    "BeforeAgentResult",
    "BeforeModel",
    "BeforeModelResult",
    "BeforeResult",
    "BeforeTool",
    "BeforeToolResult",
    "Callback",
    "Callbacks",
    "Cont",
    "Content",
    "Decision",
    "ErrorResult",
    "Fallback",
    "FellBack",
    "Halt",
    "Halted",
    "Hook",
    "HookName",
    "OnModelError",
    "OnModelErrorResult",
    "OnToolError",
    "OnToolErrorResult",
    "Raise",
    "Replaced",
    "Retried",
    "Retry",
    "declare_hooks",
    "run_after",
    "run_before",
    "run_chain",
    "run_on_error",
]
