"""Contexts handed to hooks and tools, the invocation they share, and session state.

Contexts are frozen: a hook that wants a change returns `Cont(dataclasses.replace(ctx, ...))`,
and the framework uses the context it gets back. Session state and invocation state are shared,
mutable objects reached through the context.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from adk.callbacks.registry import Callbacks
from adk.sessions.base import TEMP_PREFIX

if TYPE_CHECKING:
    from adk.agents.base import BaseAgent
    from adk.approvals import Answer, Reply
    from adk.events import Event, Message, ToolDeclaration
    from adk.models.base import LlmRequest, Model
    from adk.recovery import RetryPolicy
    from adk.sessions.base import Session
    from adk.tools import BaseTool

__all__ = [
    "AgentContext",
    "Invocation",
    "ModelContext",
    "RunContext",
    "State",
    "ToolContext",
    "current_invocation",
    "current_invocation_var",
    "current_tool_call_id",
    "current_tool_call_var",
]

log = logging.getLogger(__name__)

_MISSING: Any = object()
_NO_ANSWERS: Mapping[str, Answer] = {}


class State(MutableMapping[str, Any]):
    """Session state whose changes are recorded as a delta until the next event carries them.

    Setting a key to None deletes it (the delta says `key: None`). A value JSON cannot hold is
    refused where it is set, so that it becomes the error of the tool or callback that set it
    rather than a failure to store the event later.

    Keys are scoped by prefix (docs/sessions.md): `user:` keys are shared by every session of the
    user, `app:` keys by every session of the store, and `temp:` keys live in this object only,
    for one invocation: they never enter the delta, so they are never stored, and they may hold
    any value.
    """

    __slots__ = ("_base", "_delta", "_temp")

    def __init__(self, base: dict[str, Any]) -> None:
        self._base = base
        self._delta: dict[str, Any] = {}
        self._temp: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        value = self._delta.get(key, _MISSING)
        if value is _MISSING:
            if self._temp and key in self._temp:
                return self._temp[key]
            return self._base[key]
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        if key.startswith(TEMP_PREFIX):
            if value is None:
                self._temp.pop(key, None)
            else:
                self._temp[key] = value
            return
        import pydantic_core  # here, not at the top: importing adk loads no pydantic

        try:
            # What the stores write: a value passes if and only if they can store it.
            pydantic_core.to_json(value)
        except ValueError as e:  # pydantic's serialization errors and circular references
            raise TypeError(
                f"state[{key!r}]: JSON cannot hold a value of type {type(value).__name__} ({e})"
            ) from None
        self._delta[key] = value

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        if key.startswith(TEMP_PREFIX):
            del self._temp[key]
        else:
            self._delta[key] = None

    def __iter__(self) -> Iterator[str]:
        for key in self._base:
            if self._delta.get(key, _MISSING) is not None:
                yield key
        for key, value in self._delta.items():
            if value is not None and key not in self._base:
                yield key
        yield from self._temp

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"State({dict(self)!r}, delta={self._delta!r})"

    @property
    def has_delta(self) -> bool:
        return bool(self._delta)

    def take_delta(self) -> dict[str, Any]:
        """Return the pending changes and start a new delta; the caller puts them on an event."""
        delta, self._delta = self._delta, {}
        return delta


class Invocation:
    """One run of the runner: its id, session, state, and whether it was ended.

    Invocation state (`set_state` / `get_state` / `delete_state`) lives for this run only and is
    shared by every agent, callback and tool in it; key per-call values by `tool_call_id` so that
    concurrent tool calls don't collide.
    """

    __slots__ = (
        "_hooks",
        "_observers",
        "_on_end",
        "_outer",
        "_run_callbacks",
        "_tool_retries",
        "_transfers",
        "_transfers_made",
        "_values",
        "answers",
        "client_tools",
        "ended",
        "escalated",
        "invocation_id",
        "message",
        "resuming",
        "retry_policy",
        "session",
        "state",
        "stream",
        "waiting",
    )

    def __init__(
        self,
        invocation_id: str,
        session: Session,
        message: Message,
        runner_callbacks: Callbacks | None = None,
        run_callbacks: Callbacks | None = None,
        stream: bool = False,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        # Not keyword-only: the runner passes them by position, as calling a class with keywords
        # builds a dict of them (about 2k instructions a run on Python 3.11).
        self.invocation_id = invocation_id
        self.session = session
        self.message = message
        self.state = State(session.state)
        self.stream = stream
        """Whether models are asked to stream (partial events with text deltas)."""
        self.client_tools: tuple[ToolDeclaration, ...] = ()
        """Tools the caller runs: offered to models; a call to one waits for the caller's result."""
        self.ended = False
        self.escalated = False
        """Set by `escalate()`; the next event carries `actions.escalate` and ends a `LoopAgent`."""
        self.retry_policy = retry_policy
        """The runner's retry policy; an agent's own policy takes precedence (None: the default one)."""
        self._outer = runner_callbacks
        self._run_callbacks = run_callbacks
        hooked = (runner_callbacks is not None and runner_callbacks.objects) or (
            run_callbacks is not None and run_callbacks.objects
        )  # not bool(callbacks): a Python call each, and every run makes an invocation
        self._hooks: dict[int, Callbacks] | None = {} if hooked else None
        self._values: dict[str, Any] = {}
        self._on_end: list[Callable[[BaseException | None], object]] = []
        self._observers: list[Callable[[Event], object]] = []
        self._tool_retries: dict[str, int] | None = None
        """`ToolRetry`s counted by tool, once a tool asked for one."""
        self._transfers: dict[tuple[str, str], BaseAgent] | None = None
        """The transfers of the batch of tool calls under way on each branch, by the branch and id of
        the call that made each (adk.agents.transfer)."""
        self._transfers_made = 0
        """The transfers made so far: at most `MAX_TRANSFERS`."""
        self.answers: Mapping[str, Answer] = _NO_ANSWERS
        """When resuming a paused invocation: the application's answer to each waiting call."""
        self.waiting: list[str] = []
        """The ids of the tool calls this run left waiting (for approval, or a pending result)."""
        self.resuming: set[str] | None = None
        """When this run finishes an invocation cut short or paused (adk.agents.resume): the
        branches whose agent has picked up so far. None for a new invocation."""

    def _fork(self, session: Session, message: Message) -> Invocation:
        """An invocation for an agent run as a tool (adk.agents.tool): `session` holds its own history.

        Everything else is this invocation's: its id, callbacks, retry policy and streaming, its
        `State` (so changes go out on this invocation's events), its invocation state, and what
        observes its end and its events.
        """
        fork = Invocation(
            self.invocation_id,
            session,
            message,
            runner_callbacks=self._outer,
            run_callbacks=self._run_callbacks,
            stream=self.stream,
            retry_policy=self.retry_policy,
        )
        fork.state = self.state
        fork._values = self._values
        fork._on_end = self._on_end
        fork._observers = self._observers  # the caller's run passes the fork's events to them
        fork.answers = self.answers
        return fork

    def hooks_for(self, agent: BaseAgent) -> Callbacks:
        """The callbacks that apply to `agent`: the runner's, the agent's, the run's, in that order."""
        if self._hooks is None:  # neither the runner nor the run has callbacks
            return agent.callbacks
        outer, run = self._outer, self._run_callbacks
        if outer is not None and not agent.callbacks.objects and (run is None or not run.objects):
            return outer  # the runner's alone: the same object every run, which the agent's caches key on
        hooks = self._hooks.get(id(agent))
        if hooks is None:
            hooks = agent.callbacks
            if self._outer:
                hooks = self._outer + hooks
            if self._run_callbacks:
                hooks = hooks + self._run_callbacks
            self._hooks[id(agent)] = hooks
        return hooks

    def count_tool_retry(self, tool: str) -> int:
        """Count one more `ToolRetry` from `tool` in this invocation; return the count so far."""
        retries = self._tool_retries
        if retries is None:
            retries = self._tool_retries = {}
        count = retries[tool] = retries.get(tool, 0) + 1
        return count

    def end_invocation(self) -> None:
        """No further model calls or agents run in this invocation."""
        self.ended = True

    def on_end(self, fn: Callable[[BaseException | None], object]) -> None:
        """Call `fn` once when this run ends, with the error that ended it (None if it completed).

        For observers (tracing, metrics) that must close what they opened even when the run
        fails, is halted, or its consumer stops iterating; the error may be `GeneratorExit`.
        """
        self._on_end.append(fn)

    def observe(self, fn: Callable[[Event], object]) -> None:
        """Call `fn` with each later event of this run, as the runner yields it (partial ones too).

        For observers (tracing, audit) that read what events say, such as the decisions they
        carry; a complete event is stored before `fn` sees it. An `fn` that raises is logged.
        """
        self._observers.append(fn)

    def _notify(self, event: Event) -> None:
        for fn in self._observers:
            try:
                fn(event)
            except Exception:
                log.exception("observer %r of invocation %s failed", fn, self.invocation_id)

    def _end(self, error: BaseException | None) -> None:
        fns = self._on_end
        if not fns:
            return
        self._on_end = []  # each is called once
        for fn in fns:
            try:
                fn(error)
            except Exception:
                log.exception("on_end function %r of invocation %s failed", fn, self.invocation_id)

    def set_state(self, key: str, value: Any) -> None:
        self._values[key] = value

    def get_state(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def delete_state(self, key: str) -> None:
        self._values.pop(key, None)

    def __repr__(self) -> str:
        return f"Invocation({self.invocation_id!r}, session={self.session.id!r}, ended={self.ended})"


current_invocation_var: ContextVar[Invocation] = ContextVar("adk_invocation")
"""What `current_invocation()` reads: the runner sets it around each step of a run's agent."""
current_tool_call_var: ContextVar[tuple[str, Any] | None] = ContextVar("adk_tool_call", default=None)
"""The tool call running in this task, set by its envelope while it runs: its id (what
`current_tool_call_id()` reads) and its attempts, where decisions taken on its behalf go (a model
call its MCP server asked for: adk.agents.tool_call.decided_in_call)."""


def current_invocation() -> Invocation:
    """The invocation running in this task; usable from any callback or tool."""
    try:
        return current_invocation_var.get()
    except LookupError:
        raise LookupError("current_invocation() called outside of a Runner run") from None


def current_tool_call_id() -> str | None:
    """The id of the tool call being handled in this task, or None outside a tool call."""
    running = current_tool_call_var.get()
    return None if running is None else running[0]


T = TypeVar("T")


def _set_through_slots(cls: type[T]) -> type[T]:
    """Give a frozen slotted dataclass an `__init__` (same parameters) that sets each field through
    its slot's descriptor: the generated one calls `object.__setattr__` per field, which costs
    twice as much, and contexts are made for every agent, model and tool call."""
    params: list[str] = []
    body: list[str] = []
    names: dict[str, object] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        names[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        body.append(f"  _set_{f.name}(self, {f.name})")
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            names[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body)
    exec(source, names)  # as dataclasses builds the __init__ it replaces
    init: Any = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


@dataclass(frozen=True, slots=True)
class _Context:
    invocation: Invocation
    agent: BaseAgent
    branch: str

    @property
    def state(self) -> State:
        """Session state; changes are carried on the next event and persisted with it."""
        return self.invocation.state

    @property
    def invocation_id(self) -> str:
        return self.invocation.invocation_id

    def end_invocation(self) -> None:
        """No further model calls or agents run in this invocation."""
        self.invocation.end_invocation()

    def escalate(self) -> None:
        """Ask the enclosing `LoopAgent` to stop after this step."""
        self.invocation.escalated = True


@_set_through_slots
@dataclass(frozen=True, slots=True)
class AgentContext(_Context):
    """Context of `before_agent` / `after_agent`."""


@_set_through_slots
@dataclass(frozen=True, slots=True)
class ModelContext(_Context):
    """Context of the model hooks: `request` is what will be sent to `model`."""

    request: LlmRequest
    model: Model
    attempt: int = 1
    """1 for the first attempt; on_model_error sees the number of the attempt that failed."""


@_set_through_slots
@dataclass(frozen=True, slots=True)
class ToolContext(_Context):
    """Context of the tool hooks and of tools that ask for it."""

    tool: BaseTool
    args: dict[str, Any]
    tool_call_id: str
    attempt: int = 1
    approved: bool = False
    """True when a person approved this call (docs/approvals.md): a `Defer` then goes on as `Cont`."""
    reply: Reply | None = None
    """The person's reply to the question this call asked (`adk.approvals.Ask`), when it resumes
    with one: the tool goes on with it (an MCP call gives it to its server)."""

    @property
    def idempotency_key(self) -> str:
        """The key to hand to a payment or mail API so that this call never takes effect twice.

        The same for every attempt of this call, after `runner.resume()` and on any worker: it is
        derived from the user, the session, the invocation and the tool call id (docs/limits.md).
        """
        session = self.invocation.session
        parts = (session.user_id, session.id, self.invocation.invocation_id, self.tool_call_id)
        # each part prefixed by its length: no choice of ids can make two calls' texts equal
        text = "".join(f"{len(part)}:{part}" for part in parts)
        import hashlib  # here, not at the top: `import adk` loads no OpenSSL

        return hashlib.sha256(text.encode()).hexdigest()[:32]


@_set_through_slots
@dataclass(frozen=True, slots=True)
class RunContext:
    """Context of the run-level hooks (`on_user_message`, `before_run`, `on_event`, `after_run`).

    One run of the runner on one session; `agent` is the runner's root agent.
    """

    invocation: Invocation
    agent: BaseAgent
    error: Exception | None = None
    """For `after_run`: the error that ended the run (its error event follows), a `RunStopped` if its
    consumer stopped iterating or its task was cancelled; None if it completed."""

    @property
    def user_id(self) -> str:
        return self.invocation.session.user_id

    @property
    def session_id(self) -> str:
        return self.invocation.session.id

    @property
    def invocation_id(self) -> str:
        return self.invocation.invocation_id

    @property
    def message(self) -> Message:
        """The user message of this run (as `on_user_message` left it)."""
        return self.invocation.message

    @property
    def state(self) -> State:
        """Session state; changes are carried on the next event and persisted with it."""
        return self.invocation.state

    def end_invocation(self) -> None:
        """No further model calls or agents run in this invocation."""
        self.invocation.end_invocation()
