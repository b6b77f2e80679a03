"""Answers to a paused run: `Approve` / `Reject` a deferred call, or give a pending tool its result.

A tool call waits when a `before_tool` hook returns `Defer(reason)`, when its tool is marked
`requires_approval`, or when the tool returns a `Pending` handle. The run then ends with one
waiting event per call (`tool.approval_request` or `tool.pending`, the call id in
`long_running_tool_ids`) and a `runner.paused` event; `runner.run(user_id, session_id,
approvals=..., tool_results=...)` resumes the same invocation, in any process (docs/approvals.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["Answer", "Approve", "Pending", "Reject", "ToolResult"]


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the deferred call: its `before_tool` chain again (a `Defer` now goes on), then the tool."""


@dataclass(frozen=True, slots=True)
class Reject:
    """Do not run the deferred call: the model receives `Rejected: <reason>` as the tool's result."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Pending:
    """Returned by a long-running tool: the run pauses until `tool_results` gives the call its result.

    `note` is for the tool's own bookkeeping and its tests (a job id, say); it is not stored:
    the call is known by its id (`ctx.tool_call_id`), which the `tool.pending` event names.
    """

    note: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result a pending call finally has (what `tool_results={call_id: value}` gives it)."""

    value: Any


Answer: TypeAlias = Approve | Reject | ToolResult
"""What a waiting call is answered with."""
