"""Every error adk raises, in one tree.

AdkError
 ├── CallbackError             a hook raised, or answered what its hook may not (docs/callbacks.md)
 ├── CallbackRegistrationError an object is not a usable callback (also a TypeError)
 ├── SessionBusyError          a run on a session that another run (in any process) holds
 ├── ApprovalError             answers for a session with nothing waiting, or for calls not waiting
 ├── StaleSessionError         an append from a copy of a session that missed stored events
 ├── MaxIterationsExceeded     the model still asked for tools after an agent's max_iterations
 ├── ScriptError               a ScriptedModel was called more or fewer times than scripted
 │                             (also an AssertionError)
 ├── CliError                  a command of `adk` failed: reported as one line, exit status 1
 ├── McpServerError            an MCP server could not be reached or listed (names the server)
 ├── ToolError
 │    ├── ToolNotFoundError    the model called a tool the agent does not have
 │    ├── ToolArgumentsError   the model's arguments are not JSON or fail the tool's schema
 │    ├── ToolRetry            raised by a tool: ask the model to correct its call
 │    ├── TransferError        a transfer to an agent that is unknown or out of reach
 │    ├── McpToolError         an MCP tool answered with isError
 │    └── McpConnectionError   the connection to an MCP server dropped during a call (transient;
 │                             also a ConnectionError)
 ├── RetriesExhausted          the retry policy said stop; carries the attempts and last error
 ├── RunStopped                given to after_run: the consumer stopped iterating, or its task
 │                             was cancelled (never raised)
 ├── OutputTypeError           an agent's output_type has no JSON schema (also a TypeError)
 └── ModelError                a model call failed; `transient` says if retrying may help
      ├── RateLimitError       429; `retry_after` from the server          (transient)
      ├── ServerError          5xx                                           (transient)
      ├── ModelTimeoutError                                                  (transient)
      ├── ModelConnectionError                                               (transient)
      ├── StreamInterruptedError  a stream ended without a finish reason      (transient)
      ├── BadRequestError      other 4xx
      ├── AuthenticationError  401 / 403
      ├── CircuitOpenError     every model a CircuitBreaker could use is cooling down
      └── OutputValidationError  an answer does not match the agent's output_type
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

if TYPE_CHECKING:
    from adk.events import LlmResponse

E = TypeVar("E", bound=BaseException)

__all__ = [
    "AdkError",
    "ApprovalError",
    "AuthenticationError",
    "BadRequestError",
    "CallbackError",
    "CallbackRegistrationError",
    "CircuitOpenError",
    "CliError",
    "ModelConnectionError",
    "ModelError",
    "MaxIterationsExceeded",
    "McpConnectionError",
    "McpServerError",
    "McpToolError",
    "ModelTimeoutError",
    "OutputTypeError",
    "OutputValidationError",
    "RateLimitError",
    "RetriesExhausted",
    "RunStopped",
    "ScriptError",
    "ServerError",
    "SessionBusyError",
    "StaleSessionError",
    "StreamInterruptedError",
    "ToolArgumentsError",
    "ToolError",
    "ToolNotFoundError",
    "ToolRetry",
    "TransferError",
    "locate",
    "where",
]


class AdkError(Exception):
    """Base of every error adk raises."""


class CallbackError(AdkError):
    """A hook raised, or returned a result its hook may not return.

    Names the callback and the hook; the hook's own exception is `__cause__`.
    """

    def __init__(self, callback: str, hook: str, problem: str) -> None:
        super().__init__(f"callback {callback} failed in {hook}: {problem}")
        self.callback = callback
        self.hook = hook
        self.problem = problem


class CallbackRegistrationError(AdkError, TypeError):
    """An object passed as a callback has no hook, a misspelt hook, or cannot be instantiated."""


class SessionBusyError(AdkError):
    """A run was started on a session that another run, in this process or another, still holds."""


class ApprovalError(AdkError, ValueError):
    """`approvals` or `tool_results` that do not answer what the session's paused run waits for."""


class StaleSessionError(AdkError):
    """An append did not follow the last stored event: another writer appended in between."""


class MaxIterationsExceeded(AdkError):
    """The model kept asking for tools beyond the agent's `max_iterations`."""


class ScriptError(AdkError, AssertionError):
    """A `ScriptedModel` was called more, or fewer, times than scripted."""


class CliError(AdkError):
    """A command of the `adk` command line failed: reported as one line, exiting with status 1."""


class ToolError(AdkError):
    """A tool call could not be made or failed in a way the framework recognises."""


class ToolNotFoundError(ToolError):
    """The model asked for a tool the agent does not have."""


class ToolArgumentsError(ToolError):
    """The model's arguments for a tool are not a JSON object or violate the tool's schema."""

    def __init__(self, tool: str, problems: list[str]) -> None:
        super().__init__(f"invalid arguments for tool {tool!r}: " + "; ".join(problems))
        self.tool = tool
        self.problems = problems


class ToolRetry(ToolError):
    """Raised by a tool to ask the model to correct its call; the model sees the message."""


class TransferError(ToolError):
    """A `transfer_to_agent` call names an agent that is unknown or that its options forbid.

    Like any tool error, the model sees it (with the agents it may reach) and the run goes on.
    """


class McpServerError(AdkError):
    """An MCP server could not be reached or listed: the message names the server."""


class McpToolError(ToolError):
    """An MCP tool answered with `isError`: the message is the server's."""


class McpConnectionError(ToolError, ConnectionError):
    """The connection to an MCP server dropped during a call (transient: the next call reconnects)."""


class RetriesExhausted(AdkError):
    """The retry policy allowed no further attempt."""

    def __init__(self, attempts: int, last_error: BaseException) -> None:
        super().__init__(f"gave up after {attempts} attempt(s): {type(last_error).__name__}: {last_error}")
        self.attempts = attempts
        self.last_error = last_error


class RunStopped(AdkError):
    """What `after_run` sees as `ctx.error` when a run did not end by itself: its consumer stopped
    iterating (closed or dropped the iterator) or its task was cancelled. Never raised; its
    `__cause__` is the `GeneratorExit` or `asyncio.CancelledError` that stopped the run."""


class OutputTypeError(AdkError, TypeError):
    """An agent's `output_type` is not a type adk can build a JSON schema and a validator for."""


class ModelError(AdkError):
    """A model call failed. `transient` errors are worth retrying; `retry_after` is the server's hint."""

    transient: ClassVar[bool] = False

    def __init__(
        self, message: str, *, status_code: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after


class RateLimitError(ModelError):
    transient = True


class ServerError(ModelError):
    transient = True


class ModelTimeoutError(ModelError):
    transient = True


class ModelConnectionError(ModelError):
    transient = True


class StreamInterruptedError(ModelError):
    transient = True


class BadRequestError(ModelError):
    pass


class AuthenticationError(ModelError):
    pass


class CircuitOpenError(ModelError):
    """Every model a `CircuitBreaker` could use is in its cool-down."""


class OutputValidationError(ModelError):
    """An agent's answer is not JSON matching its `output_type`.

    Offered to `on_model_error` like a failed call: `problems` says what is wrong, one line each,
    and `response` is the answer. The default policy asks the model to correct it.
    """

    def __init__(self, agent: str, problems: Sequence[str], response: LlmResponse) -> None:
        problem = "; ".join(problems)
        super().__init__(f"the answer of agent {agent!r} does not match its output_type: {problem}")
        self.agent = agent
        self.problems = list(problems)
        self.response = response


def locate(error: E, where: str) -> E:
    """Record where `error` arose (`model:<name>`, `tool:<name>`), unless already known."""
    if not hasattr(error, "_adk_where"):
        error._adk_where = where  # type: ignore[attr-defined]  # a private mark on any exception
    return error


def where(error: BaseException) -> str | None:
    """Where `error` arose: a callback's hook, or the mark `locate` left, or None."""
    if isinstance(error, CallbackError):
        return f"callback:{error.callback}.{error.hook}"
    mark = getattr(error, "_adk_where", None)
    return mark if isinstance(mark, str) else None
