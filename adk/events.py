"""Events and their parts: messages, tool calls, model responses (trpc-agent-go's shape).

An `Event` is a model response (`LlmResponse`: choices with a full `message` or a streaming
`delta`, `usage`, `error`, `done`, `is_partial`) plus who produced it, what it changes and what
callbacks decided that shaped it (`author`, `invocation_id`, `branch`, `actions`, `decisions`).
Everything is pydantic, so an event round-trips through JSON without loss, which is how sessions
store them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from adk.callbacks.decisions import Decision

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
    "new_id",
]


def new_id() -> str:
    """A fresh random identifier: 32 hex digits (128 random bits, 4x cheaper than uuid4)."""
    return os.urandom(16).hex()


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


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class _Frozen(_Model):
    """A part of the conversation: shared by the session's history and every request made from it,
    so it cannot change in place; `model_copy(update={...})` makes a changed copy."""

    model_config = ConfigDict(frozen=True)


class FunctionCall(_Frozen):
    """The function a tool call names, with its arguments as the model sent them (JSON text)."""

    name: str
    arguments: str = "{}"


class ToolCall(_Frozen):
    """One tool call requested by the model."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall

    @classmethod
    def of(cls, name: str, arguments: str = "{}", id: str | None = None) -> ToolCall:
        """A tool call to `name` with JSON `arguments`; a fresh id unless one is given."""
        return cls(id=id or f"call_{new_id()[:16]}", function=FunctionCall(name=name, arguments=arguments))


class Message(_Frozen):
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
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: Sequence[ToolCall] = ()) -> Message:
        return cls(role="assistant", content=content, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, content: str, *, tool_call_id: str, name: str) -> Message:
        return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name)


class ToolDeclaration(_Model):
    """What the model is told about a tool: its name, description and JSON schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class Choice(_Model):
    """One choice of a model response: a full `message`, or a streaming `delta`."""

    index: int = 0
    message: Message | None = None
    delta: Message | None = None
    finish_reason: str | None = None


class Usage(_Model):
    """Token counts of a model call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ErrorInfo(_Model):
    """An error carried by an event: its type, its message and where it arose."""

    type: str
    message: str
    where: str | None = None
    """Where it arose: `model`, `tool:<name>`, `callback:<callback>.<hook>`, `agent:<name>`."""

    @classmethod
    def of(cls, error: BaseException, where: str | None = None) -> ErrorInfo:
        return cls(type=type(error).__name__, message=str(error), where=where)


class LlmResponse(_Model):
    """A model's answer (or one streamed chunk of it), in chat-completions shape."""

    id: str = Field(default_factory=new_id)
    object: str = ObjectType.CHAT_COMPLETION
    created: float = Field(default_factory=time.time)
    model: str = ""
    choices: list[Choice] = Field(default_factory=list)
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
        return cls(choices=[Choice(message=Message.assistant(content), finish_reason="stop")], **fields)

    @classmethod
    def calls(cls, *tool_calls: ToolCall, content: str = "", **fields: Any) -> Self:
        """A complete (`done` unless `fields` say otherwise) response asking for `tool_calls`."""
        fields.setdefault("done", True)
        message = Message.assistant(content, tool_calls)
        return cls(choices=[Choice(message=message, finish_reason="tool_calls")], **fields)

    @classmethod
    def chunk(cls, text: str = "", *tool_calls: ToolCall, **fields: Any) -> Self:
        """A streamed chunk (partial) whose delta is the assistant's `text` and tool-call pieces.

        Each piece of a tool call carries the call's id and name, and the next part of its
        arguments' text, so a consumer can show the arguments as they come.
        """
        return cls(
            object=ObjectType.CHAT_COMPLETION_CHUNK,
            choices=[Choice(delta=Message.assistant(text, list(tool_calls)))],
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


class EventActions(_Model):
    """What an event changes: session state, control flow."""

    state_delta: dict[str, Any] = Field(default_factory=dict)
    """Session-state changes; a key set to None is deleted."""
    transfer_to_agent: str | None = None
    escalate: bool = False
    """Set by a child of a `LoopAgent` to end the loop."""


class Event(LlmResponse):
    """One step of an invocation, streamed by the runner and stored in the session."""

    invocation_id: str = ""
    author: str = ""
    """The agent (or `user`) that produced the event."""
    timestamp: float = Field(default_factory=time.time)
    branch: str = ""
    """Dotted path of agent names, distinct per `ParallelAgent` child."""
    actions: EventActions = Field(default_factory=EventActions)
    long_running_tool_ids: list[str] = Field(default_factory=list)
    decisions: tuple[Decision, ...] = ()
    """What callbacks decided that shaped this event (`adk.callbacks.decisions`), in order."""

    @classmethod
    def new(cls, invocation_id: str, author: str, **fields: Any) -> Event:
        """A new event with a fresh id and timestamp."""
        return cls(invocation_id=invocation_id, author=author, **fields)

    @classmethod
    def state_update(
        cls, invocation_id: str, author: str, delta: dict[str, Any], *, branch: str = ""
    ) -> Event:
        """An event that carries only session-state changes."""
        return cls(
            invocation_id=invocation_id,
            author=author,
            branch=branch,
            object=ObjectType.STATE_UPDATE,
            actions=EventActions(state_delta=delta),
        )

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
            info = error if where is None else error.model_copy(update={"where": where})
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
        values = response.__dict__
        data = {name: values[name] for name in _RESPONSE_FIELDS}
        data.update(fields)
        return cls(invocation_id=invocation_id, author=author, **data)

    def fresh_decisions(self) -> tuple[Decision, ...]:
        """The decisions this event is the first to tell a consumer of the live run.

        A model call's retries and fallbacks are told as they happen, by `attempt.failed` events;
        its response (or the error that ended it) repeats them for the record.
        """
        decisions = self.decisions
        if decisions and (self.object == ObjectType.CHAT_COMPLETION or self.object == ObjectType.ERROR):
            return tuple(d for d in decisions if d.kind == "halted" or d.kind == "replaced")
        return decisions

    def clone(self) -> Event:
        """A deep copy: changing the clone never changes this event."""
        return self.model_copy(deep=True)


_RESPONSE_FIELDS = tuple(LlmResponse.model_fields)
