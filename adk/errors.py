"""Every error adk raises, in one tree.

AdkError
 ├── CallbackError             a hook raised, or answered what its hook may not (docs/callbacks.md)
 ├── CallbackRegistrationError an object is not a usable callback (also a TypeError)
 ├── SessionBusyError          a run on a session that another run (in any process) holds
 ├── ApprovalError             answers for a session with nothing waiting, or for calls not waiting
 ├── StaleSessionError         an append from a copy of a session that missed stored events
 ├── UnconfirmedAppendError    an append whose answer was lost: stored or not, the store could not
 │                             be asked (also a ConnectionError)
 ├── MaxIterationsExceeded     the model still asked for tools after an agent's max_iterations
 ├── ScriptError               a ScriptedModel was called more or fewer times than scripted
 │                             (also an AssertionError)
 ├── CliError                  a command of `adk` failed: reported as one line, exit status 1
 ├── McpServerError            an MCP server could not be reached or listed (names the server)
 ├── RequestRefused            an HTTP request an adk server refuses: its 4xx status and one line
 │                             naming what was wrong and where (the AG-UI endpoint, `adk web`)
 ├── DurableError              DBOS could not start on its system database (names it)
 ├── WorkflowMismatchError     a recovered durable run makes other events than its record (names
 │                             the workflow); nothing is run again
 ├── ToolError
 │    ├── ToolNotFoundError    the model called a tool the agent does not have
 │    ├── ToolArgumentsError   the model's arguments are not JSON or fail the tool's schema
 │    ├── ToolRetry            raised by a tool: ask the model to correct its call
 │    ├── TransferError        a transfer to an agent that is unknown or out of reach
 │    ├── ToolTimeoutError     a tool call ran past its tool's `timeout` and was cancelled
 │    │                        (transient; also a TimeoutError)
 │    ├── ToolInterruptedError a durable run's call cut mid-body, not idempotent: not run again
 │    ├── McpToolError         an MCP tool answered with isError
 │    ├── McpConnectionError   the connection to an MCP server dropped during a call (transient;
 │    │                        also a ConnectionError)
 │    └── RemoteAgentError     an A2A agent's task failed, was rejected or canceled, or its answer
 │         │                   is not A2A (names the agent's URL)
 │         ├── RemoteAgentConnectionError  the A2A agent could not be reached (transient; also a
 │         │                   ConnectionError)
 │         └── RemoteAgentTimeoutError  the A2A agent did not answer in time (transient; also a
 │                             TimeoutError)
 ├── RetriesExhausted          the retry policy said stop; carries the attempts and last error
 ├── RunTimeout                a run passed its deadline (`timeout=`); also a TimeoutError
 ├── ResponseRejected          raised by an after_model hook: the model's answer is not used
 ├── RunStopped                given to after_run: the consumer stopped iterating, or its task
 │                             was cancelled (never raised)
 ├── OutputTypeError           an agent's output_type has no JSON schema (also a TypeError)
 ├── ModelSpecError            a model string such as `openai:<name>` names no model adk can make
 │                             (also a ValueError; adk.models.resolve)
 ├── BudgetExceededError       a call a `Budget` cannot afford at all: not made (adk.limits);
 │                             offered to `on_model_error` like a failed call
 └── ModelError                a model call failed; `transient` says if retrying may help
      ├── RateLimitError       429; `retry_after` from the server          (transient)
      ├── ServerError          5xx                                           (transient)
      ├── ModelTimeoutError                                                  (transient)
      ├── ModelConnectionError                                               (transient)
      ├── StreamInterruptedError  a stream ended without a finish reason      (transient)
      ├── BadRequestError      other 4xx
      │    └── ContextOverflowError  the request is longer than the model's context: compact
      │                        it and retry (docs/context.md)
      ├── AuthenticationError  401 / 403
      ├── CircuitOpenError     every model a CircuitBreaker could use is cooling down
      └── OutputValidationError  an answer does not match the agent's output_type
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from adk.events import LlmResponse

E = TypeVar("E", bound=BaseException)

__all__ = [
    "AdkError",
    "ApprovalError",
    "AuthenticationError",
    "BadRequestError",
    "BudgetExceededError",
    "CallbackError",
    "CallbackRegistrationError",
    "CircuitOpenError",
    "CliError",
    "ContextOverflowError",
    "DurableError",
    "ModelConnectionError",
    "ModelError",
    "MaxIterationsExceeded",
    "McpConnectionError",
    "McpServerError",
    "McpToolError",
    "ModelTimeoutError",
    "ModelSpecError",
    "OutputTypeError",
    "OutputValidationError",
    "RateLimitError",
    "RemoteAgentConnectionError",
    "RemoteAgentError",
    "RemoteAgentTimeoutError",
    "RequestRefused",
    "ResponseRejected",
    "RetriesExhausted",
    "RunStopped",
    "RunTimeout",
    "ScriptError",
    "ServerError",
    "SessionBusyError",
    "StaleSessionError",
    "StreamInterruptedError",
    "ToolArgumentsError",
    "ToolError",
    "ToolInterruptedError",
    "ToolNotFoundError",
    "ToolRetry",
    "ToolTimeoutError",
    "UnconfirmedAppendError",
    "TransferError",
    "WorkflowMismatchError",
    "locate",
    "where",
]


class AdkError(Exception):
    """Base of every error adk raises."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whatever its constructor takes (a durable run records a step's error)."""
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(kind: type[AdkError], args: tuple[Any, ...], state: dict[str, Any]) -> AdkError:
    """An error `__reduce__` took apart, made again without calling its constructor."""
    error = kind.__new__(kind, *args)
    error.args = args
    error.__dict__.update(state)
    return error


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


class UnconfirmedAppendError(AdkError, ConnectionError):
    """An append whose answer was lost (the connection dropped, or timed out) and whose store could
    not be asked since: the event is stored as number `seq`, or not at all; every event before it
    is stored. Read the session once the store answers to tell (docs/sessions.md)."""

    def __init__(self, message: str, *, event_id: str, seq: int) -> None:
        super().__init__(message)
        self.event_id = event_id
        self.seq = seq


class MaxIterationsExceeded(AdkError):
    """The model kept asking for tools beyond the agent's `max_iterations`."""


class ScriptError(AdkError, AssertionError):
    """A `ScriptedModel` was called more, or fewer, times than scripted."""


class CliError(AdkError):
    """A command of the `adk` command line failed: reported as one line, exiting with status 1."""


class RequestRefused(AdkError):
    """An HTTP request an adk server refuses before anything runs: sent as `{"detail": detail}`
    with the 4xx `status` (AG-UI's endpoint and `adk web`'s JSON endpoints)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class DurableError(AdkError):
    """DBOS could not start on its system database (the message names it, without a password)."""


class UnknownAgentError(AdkError):
    """A durable run names an agent the worker that took it does not have."""


class WorkflowMismatchError(AdkError):
    """A recovered durable run made an event other than the one its first execution stored."""


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


class ToolTimeoutError(ToolError, TimeoutError):
    """A tool call ran longer than its tool's `timeout` and was cancelled. Transient, but the
    default policy retries only idempotent tools: a call that may have had its effect is not re-run."""

    def __init__(self, tool: str, timeout: float) -> None:
        super().__init__(f"tool {tool!r} did not finish within its timeout of {timeout:g} s")
        self.tool = tool
        self.timeout = timeout


class ToolInterruptedError(ToolError):
    """A durable run's non-idempotent tool call was cut mid-body by a crash: its effect is unknown."""


class McpServerError(AdkError):
    """An MCP server could not be reached or listed: the message names the server."""


class McpToolError(ToolError):
    """An MCP tool answered with `isError`: the message is the server's."""


class McpConnectionError(ToolError, ConnectionError):
    """The connection to an MCP server dropped during a call (transient: the next call reconnects)."""


class RemoteAgentError(ToolError):
    """An A2A agent's task failed, was rejected or canceled, or its answer is not A2A (adk.a2a)."""


class RemoteAgentConnectionError(RemoteAgentError, ConnectionError):
    """An A2A agent could not be reached (transient: worth another attempt)."""


class RemoteAgentTimeoutError(RemoteAgentError, TimeoutError):
    """An A2A agent did not answer in time (transient: worth another attempt)."""


class RetriesExhausted(AdkError):
    """The retry policy allowed no further attempt."""

    def __init__(self, attempts: int, last_error: BaseException) -> None:
        super().__init__(f"gave up after {attempts} attempt(s): {type(last_error).__name__}: {last_error}")
        self.attempts = attempts
        self.last_error = last_error


class RunTimeout(AdkError, TimeoutError):
    """A run passed its deadline (`runner.run(..., timeout=)` or `Runner(timeout=)`): its error
    event ends it; what was stored before stays."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"the run did not finish within its timeout of {timeout:g} s")
        self.timeout = timeout


class ResponseRejected(AdkError):
    """Raised by an `after_model` hook: the model's answer, though it came, is not used.

    `on_model_error` sees it like a failed call (Retry, Fallback or Raise); `callback` names the
    hook that raised it (`Guard.after_model`), set as it leaves the chain.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.callback: str | None = None


class RunStopped(AdkError):
    """What `after_run` sees as `ctx.error` when a run did not end by itself: its consumer stopped
    iterating (closed or dropped the iterator) or its task was cancelled. Never raised; its
    `__cause__` is the `GeneratorExit` or `asyncio.CancelledError` that stopped the run."""


class OutputTypeError(AdkError, TypeError):
    """An agent's `output_type` is not a type adk can build a JSON schema and a validator for."""


class ModelSpecError(AdkError, ValueError):
    """A model string that names no model adk can make: an unknown provider, no name, no key."""


class BudgetExceededError(AdkError):
    """A call a `Budget` cannot afford: it is not made. `limit` names the limit it would cross
    (`usd`, `total_tokens`, `tool_calls`, `tool:<name>`...), `allowed` is that limit and `spent`
    what was spent and reserved on it when the call was refused."""

    def __init__(self, budget: str, limit: str, allowed: float, spent: float, message: str = "") -> None:
        super().__init__(
            message or f"budget {budget!r} cannot afford the call: {limit} {spent:g} of {allowed:g}"
        )
        self.budget = budget
        self.limit = limit
        self.allowed = allowed
        self.spent = spent


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


class ContextOverflowError(BadRequestError):
    """The server refused the request for its length: it does not fit the model's context.

    Not transient (the same request fails again), but recoverable: a shorter request may pass.
    The default policy drops the oldest whole turns and retries once (docs/context.md).
    """


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
