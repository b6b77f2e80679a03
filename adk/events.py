"""Events and their parts: messages, tool calls, model responses (trpc-agent-go's shape).

An `Event` is a model response (`LlmResponse`: choices with a full `message` or a streaming
`delta`, `usage`, `error`, `done`, `is_partial`) plus who produced it, what it changes and what
callbacks decided that shaped it (`author`, `invocation_id`, `branch`, `actions`, `decisions`).

All are slotted dataclasses, built without validation inside the framework: a turn creates many,
and pydantic models cost about ten times more to build and to collect. Pydantic stands at the
boundaries, where data comes from outside: `model_validate(_json)` checks a stored row or a
request, `model_dump(_json)` writes the JSON, which round-trips without loss (sessions store it).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Self

from adk.callbacks.decisions import Decision
from adk.data import Data, made_on_read
from adk.ids import new_id

__all__ = [
    "Choice",
    "ErrorInfo",
    "Event",
    "EventActions",
    "FunctionCall",
    "LlmResponse",
    "Message",
    "ObjectType",
    "ToolCall",
    "ToolDeclaration",
    "Usage",
    "actions_of",
    "new_choice",
    "new_event",
    "new_id",
    "waiting_ids_of",
]


class ObjectType:
    """The values of `Event.object`: what kind of event this is."""

    CHAT_COMPLETION = "chat.completion"
    CHAT_COMPLETION_CHUNK = "chat.completion.chunk"
    ERROR = "error"
    TOOL_RESPONSE = "tool.response"
    AGENT_TRANSFER = "agent.transfer"
    STATE_UPDATE = "state.update"
    RUNNER_COMPLETION = "runner.completion"
    ATTEMPT_FAILED = "attempt.failed"
    """A model attempt failed and a callback recovered: its `decisions` say how, as it happens."""
    ATTEMPT_DISCARDED = "attempt.discarded"
    """A streamed attempt whose partial output went out was discarded: roll it back."""
    APPROVAL_REQUEST = "tool.approval_request"
    """A tool call waits for a person's approval: its `Deferred` decision names the call and why."""
    TOOL_PENDING = "tool.pending"
    """A long-running tool returned a `Pending` handle: the call waits for its result."""
    CLIENT_PENDING = "tool.client_pending"
    """A call of a tool the caller runs (`client_tools`: an AG-UI frontend tool) waits for the
    caller's result; stored apart from `tool.pending`, so that a result for one of the agent's own
    calls can never pass for a client's."""
    TOOL_PROGRESS = "tool.progress"
    """A running tool call's progress (an MCP server's progress notification): partial, never stored."""
    RUNNER_PAUSED = "runner.paused"
    """The run ended with calls waiting (`long_running_tool_ids`); answering them resumes it."""
    COMPACTION = "compaction"
    """The older turns of a branch's history were folded: its message is their summary (none if
    they were dropped), its `Compacted` decision says which; the history reads from it on."""


class _Immutable(Data):
    """A part that never changes once built: copying returns it."""

    __slots__ = ()

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionCall(_Immutable):
    """The function a tool call names, with its arguments as the model sent them (JSON text)."""

    name: str
    arguments: str = "{}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall(_Immutable):
    """One tool call requested by the model."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall

    @classmethod
    def of(cls, name: str, arguments: str = "{}", id: str | None = None) -> ToolCall:
        """A tool call to `name` with JSON `arguments`; a fresh id unless one is given."""
        return cls(id=id or f"call_{new_id()[:16]}", function=FunctionCall(name=name, arguments=arguments))


@dataclass(frozen=True, slots=True, kw_only=True)
class Message(_Immutable):
    """A chat message: system instruction, user turn, assistant answer or tool result.

    Frozen: a hook that wants another message puts a changed copy in its request's list
    (`messages[i] = messages[i].model_copy(update={"content": ...})`).
    """

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    """For a `tool` message: the id of the call it answers."""
    name: str | None = None
    """For a `tool` message: the tool's name."""

    @classmethod
    def user(cls, content: str) -> Message:
        if cls is not Message:
            return cls(role="user", content=content)
        return _message("user", content, (), None, None)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: Sequence[ToolCall] = ()) -> Message:
        if cls is not Message:
            return cls(role="assistant", content=content, tool_calls=tuple(tool_calls))
        return _message("assistant", content, tuple(tool_calls), None, None)

    @classmethod
    def tool(cls, content: str, *, tool_call_id: str, name: str) -> Message:
        if cls is not Message:
            return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name)
        return _message("tool", content, (), tool_call_id, name)


_new = object.__new__
_role, _content, _calls, _call_id, _name = (Message.__dict__[f].__set__ for f in Message.__slots__)


def _message(
    role: Literal["system", "user", "assistant", "tool"],
    content: str,
    tool_calls: tuple[ToolCall, ...],
    tool_call_id: str | None,
    name: str | None,
) -> Message:
    """A `Message` set through its slots: a frozen dataclass's `__init__` sets each field through
    `object.__setattr__`, and keyword arguments cost as much again (0.8 µs against 0.3)."""
    message = _new(Message)
    _role(message, role)
    _content(message, content)
    _calls(message, tool_calls)
    _call_id(message, tool_call_id)
    _name(message, name)
    return message


def new_choice(message: Message, finish_reason: str | None = None) -> Choice:
    """A `Choice` of a full message, set through its slots (half the cost of its `__init__`): for
    the framework's own events, made many times a turn."""
    choice = _new(Choice)
    choice.index = 0
    choice.message = message
    choice.delta = None
    choice.finish_reason = finish_reason
    return choice


def _object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


@dataclass(slots=True, kw_only=True)
class ToolDeclaration(Data):
    """What the model is told about a tool: its name, description and JSON schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=_object_schema)


@dataclass(slots=True, kw_only=True)
class Choice(Data):
    """One choice of a model response: a full `message`, or a streaming `delta`."""

    index: int = 0
    message: Message | None = None
    delta: Message | None = None
    finish_reason: str | None = None


@dataclass(slots=True, kw_only=True)
class Usage(Data):
    """Token counts of a model call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass(slots=True, kw_only=True)
class ErrorInfo(Data):
    """An error carried by an event: its type, its message and where it arose."""

    type: str
    message: str
    where: str | None = None
    """Where it arose: `model`, `tool:<name>`, `callback:<callback>.<hook>`, `agent:<name>`."""

    @classmethod
    def of(cls, error: BaseException, where: str | None = None) -> ErrorInfo:
        return cls(type=type(error).__name__, message=str(error), where=where)


@dataclass(slots=True, kw_only=True)
class LlmResponse(Data):
    """A model's answer (or one streamed chunk of it), in chat-completions shape."""

    id: str = field(default_factory=new_id)
    object: str = ObjectType.CHAT_COMPLETION
    created: float = field(default_factory=time.time)
    model: str = ""
    choices: list[Choice] = field(default_factory=list)
    usage: Usage | None = None
    error: ErrorInfo | None = None
    done: bool = False
    """True on the last response of a model call (or of a run, for the runner's completion)."""
    is_partial: bool = False
    """True on a streamed chunk; partial events are never stored."""

    @classmethod
    def text(cls, content: str, **fields: Any) -> Self:
        """A complete (`done` unless `fields` say otherwise) response: the assistant's `content`."""
        fields.setdefault("done", True)
        message = Message(role="assistant", content=content)
        return cls(choices=[Choice(message=message, finish_reason="stop")], **fields)

    @classmethod
    def calls(cls, *tool_calls: ToolCall, content: str = "", **fields: Any) -> Self:
        """A complete (`done` unless `fields` say otherwise) response asking for `tool_calls`."""
        fields.setdefault("done", True)
        message = Message(role="assistant", content=content, tool_calls=tool_calls)
        return cls(choices=[Choice(message=message, finish_reason="tool_calls")], **fields)

    @classmethod
    def chunk(cls, text: str = "", *tool_calls: ToolCall, **fields: Any) -> Self:
        """A streamed chunk (partial) whose delta is the assistant's `text` and tool-call pieces.

        Each piece of a tool call carries the call's id and name, and the next part of its
        arguments' text, so a consumer can show the arguments as they come.
        """
        return cls(
            object=ObjectType.CHAT_COMPLETION_CHUNK,
            choices=[Choice(delta=Message(role="assistant", content=text, tool_calls=tool_calls))],
            is_partial=True,
            **fields,
        )

    def word_chunks(self) -> list[LlmResponse]:
        """This response as streamed chunks: its text word by word, then each tool call's
        arguments word by word (for scripted and demo models)."""
        fields = {"id": self.id, "model": self.model}
        chunks = [LlmResponse.chunk(word, **fields) for word in _words(self.content)]
        for call in self.tool_calls:
            chunks += (
                LlmResponse.chunk(
                    "",
                    ToolCall(id=call.id, function=FunctionCall(name=call.function.name, arguments=piece)),
                    **fields,
                )
                for piece in _words(call.function.arguments)
            )
        return chunks

    @property
    def message(self) -> Message | None:
        """The first choice's full message, if any."""
        return self.choices[0].message if self.choices else None

    @property
    def delta(self) -> Message | None:
        """The first choice's streaming delta, if any."""
        return self.choices[0].delta if self.choices else None

    @property
    def content(self) -> str:
        """The text of the message (or of the delta, for a chunk); empty if none."""
        m = self.message or self.delta
        return m.content if m is not None else ""

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of the full message (never of a delta)."""
        m = self.message
        return m.tool_calls if m is not None else ()


def _words(text: str) -> list[str]:
    """`text` cut before each space: the pieces join back into `text`; none for an empty one."""
    if not text:
        return []
    words = text.split(" ")
    return [words[0], *(" " + word for word in words[1:])]


@dataclass(slots=True, kw_only=True)
class EventActions(Data):
    """What an event changes: session state, control flow."""

    state_delta: dict[str, Any] = field(default_factory=dict)
    """Session-state changes; a key set to None is deleted."""
    transfer_to_agent: str | None = None
    escalate: bool = False
    """Set by a child of a `LoopAgent` to end the loop."""


@dataclass(slots=True, kw_only=True)
class Event(LlmResponse):
    """One step of an invocation, streamed by the runner and stored in the session."""

    invocation_id: str = ""
    author: str = ""
    """The agent (or `user`) that produced the event."""
    timestamp: float = field(default_factory=time.time)
    branch: str = ""
    """Dotted path of agent names, distinct per `ParallelAgent` child."""
    actions: EventActions = field(default_factory=EventActions)
    long_running_tool_ids: list[str] = field(default_factory=list)
    decisions: tuple[Decision, ...] = ()
    """What callbacks decided that shaped this event (`adk.callbacks.decisions`), in order."""
    if TYPE_CHECKING:  # the slots of `actions` and `long_running_tool_ids`: None until made (made_on_read)
        _actions: EventActions | None = field(init=False)
        _waiting: list[str] | None = field(init=False)

    @classmethod
    def new(cls, invocation_id: str, author: str, **fields: Any) -> Event:
        """A new event with a fresh id and timestamp."""
        return cls(invocation_id=invocation_id, author=author, **fields)

    @classmethod
    def state_update(
        cls, invocation_id: str, author: str, delta: dict[str, Any], *, branch: str = ""
    ) -> Event:
        """An event that carries only session-state changes."""
        if cls is not Event:
            return cls(
                invocation_id=invocation_id,
                author=author,
                branch=branch,
                object=ObjectType.STATE_UPDATE,
                actions=EventActions(state_delta=delta),
            )
        event = new_event(invocation_id, author, ObjectType.STATE_UPDATE, branch)
        actions = event._actions = _new(EventActions)
        actions.state_delta, actions.transfer_to_agent, actions.escalate = delta, None, False
        return event

    @classmethod
    def from_error(
        cls,
        invocation_id: str,
        author: str,
        error: BaseException | ErrorInfo,
        *,
        where: str | None = None,
        **fields: Any,
    ) -> Event:
        """A final error event describing `error`; a given `where` replaces an `ErrorInfo`'s own.

        `object` is `error` and `done` is True unless `fields` say otherwise.
        """
        if isinstance(error, ErrorInfo):
            info = error if where is None else dataclasses.replace(error, where=where)
        else:
            info = ErrorInfo.of(error, where)
        fields.setdefault("object", ObjectType.ERROR)
        fields.setdefault("done", True)
        return cls(invocation_id=invocation_id, author=author, error=info, **fields)

    @classmethod
    def from_response(cls, invocation_id: str, author: str, response: LlmResponse, **fields: Any) -> Event:
        """An event carrying every field of a model response (a chunk or a complete one).

        Nested parts (choices, usage, error) are shared with `response`, not copied: `clone()` if
        either will be changed.
        """
        if cls is Event:
            event = _new(Event)
            event.id = response.id
            event.object = response.object
            event.created = response.created
            event.model = response.model
            event.choices = response.choices
            event.usage = response.usage
            event.error = response.error
            event.done = response.done
            event.is_partial = response.is_partial
            _own(event, invocation_id, author, "")
        else:
            event = cls(
                invocation_id=invocation_id,
                author=author,
                id=response.id,
                object=response.object,
                created=response.created,
                model=response.model,
                choices=response.choices,
                usage=response.usage,
                error=response.error,
                done=response.done,
                is_partial=response.is_partial,
            )
        if fields:  # not as keywords above: `fields` may repeat a response field
            for name, value in fields.items():
                setattr(event, name, value)
        return event

    def fresh_decisions(self) -> tuple[Decision, ...]:
        """The decisions this event is the first to tell a consumer of the live run.

        A model call's retries, fallbacks and refused responses are told as they happen, by
        `attempt.failed` events; its response (or the error that ended it, or an agent's fallback
        standing for it) repeats them for the record. Its other decisions (a halt, a replacement,
        a pacing, a budget's, the agent's fallback) are told there first.
        """
        decisions = self.decisions
        if decisions and (self.object == ObjectType.CHAT_COMPLETION or self.object == ObjectType.ERROR):
            return tuple(d for d in decisions if not _told(d))
        return decisions

    def clone(self) -> Event:
        """A deep copy: changing the clone never changes this event."""
        return copy.deepcopy(self)


def _told(decision: Decision) -> bool:
    """Whether `decision` was told as it happened, by a model call's `attempt.failed` event."""
    kind = decision.kind
    return (
        kind == "retried"
        or kind == "refused"
        or (kind == "fell_back" and decision.target.startswith("model:"))
    )


def new_event(
    invocation_id: str, author: str, object: str = ObjectType.CHAT_COMPLETION, branch: str = ""
) -> Event:
    """A new `Event` of the framework's, its defaults set through its slots: the dataclass's
    `__init__`, given keywords and calling a factory per default, costs twice as much."""
    event = _new(Event)
    _own(event, invocation_id, author, branch)
    event.id = new_id()
    event.object = object
    event.created = event.timestamp
    event.model = ""
    event.choices = []
    event.usage = None
    event.error = None
    event.done = False
    event.is_partial = False
    return event


def _own(event: Event, invocation_id: str, author: str, branch: str) -> None:
    """Set an event's own fields (beyond its response's) through their slots, to their defaults."""
    event.invocation_id = invocation_id
    event.author = author
    event.timestamp = time.time()
    event.branch = branch
    event._actions = None  # made when first read
    event._waiting = None
    event.decisions = ()


made_on_read(Event, "actions", "_actions", EventActions)
made_on_read(Event, "long_running_tool_ids", "_waiting", list)


def actions_of(event: Event) -> EventActions | None:
    """`event.actions` if they were made (read or set), else None: for code that reads every event's."""
    return event._actions


def waiting_ids_of(event: Event) -> Sequence[str]:
    """`event.long_running_tool_ids`, without making an event's empty list."""
    waiting = event._waiting
    return () if waiting is None else waiting
