"""Names for annotations only: one protocol per hook, and the results each hook may return.

A callback needs none of them to work (hooks are matched by name); import them to have mypy check
a hook's signature or to annotate a result, as in `from adk.types import BeforeModelResult`.
The results themselves (`Cont`, `Halt`, ...) and the `Callback` base class are in `adk`; the
decisions callbacks leave on events (`Halted`, `Retried`, ...) are data, in `adk.callbacks`.
"""

from adk.callbacks.protocols import (
    AfterAgent,
    AfterAgentResult,
    AfterModel,
    AfterRun,
    AfterTool,
    AnyCallback,
    BeforeAgent,
    BeforeAgentResult,
    BeforeModel,
    BeforeModelResult,
    BeforeRun,
    BeforeRunResult,
    BeforeTool,
    BeforeToolResult,
    Content,
    OnAgentError,
    OnAgentErrorResult,
    OnEvent,
    OnModelError,
    OnModelErrorResult,
    OnToolError,
    OnToolErrorResult,
    OnUserMessage,
    OnUserMessageResult,
)
from adk.callbacks.results import BeforeResult, ErrorResult

__all__ = [
    "AfterAgent",
    "AfterAgentResult",
    "AfterModel",
    "AfterRun",
    "AfterTool",
    "AnyCallback",
    "BeforeAgent",
    "BeforeAgentResult",
    "BeforeModel",
    "BeforeModelResult",
    "BeforeResult",
    "BeforeRun",
    "BeforeRunResult",
    "BeforeTool",
    "BeforeToolResult",
    "Content",
    "ErrorResult",
    "OnAgentError",
    "OnAgentErrorResult",
    "OnEvent",
    "OnModelError",
    "OnModelErrorResult",
    "OnToolError",
    "OnToolErrorResult",
    "OnUserMessage",
    "OnUserMessageResult",
]
