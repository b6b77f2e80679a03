"""The callback core: tagged results, one protocol per hook, registration and the chains."""

from adk.callbacks.base import Callback
from adk.callbacks.chain import run_after, run_before, run_chain, run_on_error
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
    "Content",
    "Cont",
    "ErrorResult",
    "Fallback",
    "Halt",
    "Hook",
    "HookName",
    "OnModelError",
    "OnModelErrorResult",
    "OnToolError",
    "OnToolErrorResult",
    "Raise",
    "Retry",
    "declare_hooks",
    "run_after",
    "run_before",
    "run_chain",
    "run_on_error",
]
