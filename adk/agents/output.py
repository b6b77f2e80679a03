"""Structured output: an agent's answer as a typed value, asked for with a JSON schema and validated.

`LlmAgent(output_type=...)` takes a pydantic model, a dataclass, a TypedDict, or a list of one.
Its requests carry the type's JSON schema as `response_format`; each answer (without tool calls)
is validated inside the model envelope, so that one that fails is an `OutputValidationError`
offered to `on_model_error`, where the default `CorrectOutput` policy asks the model to correct
it (bounded by the agent's `output_retries`). The validator and the schema are built on first
use: building them costs more than a run, and many agents are made and never run.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar, get_args, get_origin

from typing_extensions import is_typeddict

from adk.callbacks.results import Raise, Retry
from adk.errors import OutputTypeError, OutputValidationError
from adk.events import Event, LlmResponse, Message, ObjectType

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

    from adk.context import AgentContext, ModelContext

__all__ = ["CorrectOutput", "Output", "output_of", "output_response"]

T = TypeVar("T")

_KINDS = "a pydantic model, a dataclass, a TypedDict, or a list of one"


class Output:
    """What an agent does with its final answer: validate it as `type`, store it under `key`."""

    __slots__ = ("_adapter", "_format", "agent", "key", "type")

    def __init__(self, agent: str, output_type: Any, key: str | None) -> None:
        if output_type is not None:
            _check_kind(agent, output_type)
        if key == "":
            raise ValueError(f"agent {agent!r}: output_key must not be empty")
        self.agent = agent
        self.type = output_type
        """The answer's type, or None for a text answer (stored as it is under `key`)."""
        self.key = key
        """The session-state key the validated value is stored under (as JSON data), or None."""
        self._adapter: TypeAdapter[Any] | None = None
        # Made now: a type pydantic cannot describe is refused where the agent is made.
        self._format = None if output_type is None else self._json_format()

    @property
    def adapter(self) -> TypeAdapter[Any]:
        """The validator of the answer."""
        adapter = self._adapter
        if adapter is None:
            adapter = self._adapter = _adapter(self.agent, self.type)
        return adapter

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The request's `response_format`: the type's JSON schema, or None for a text answer."""
        return self._format

    def _json_format(self) -> dict[str, Any]:
        from pydantic import PydanticUserError

        try:
            schema = self.adapter.json_schema()
        except PydanticUserError as e:
            raise _type_error(self.agent, self.type, e) from e
        name = re.sub(r"[^A-Za-z0-9_-]", "_", _type_name(self.type))[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}

    def check(self, response: LlmResponse) -> Any:
        """The value of `response`, or `OutputValidationError` saying what is wrong with it."""
        if self.type is None:
            return response.content
        from pydantic import ValidationError

        try:
            return self.adapter.validate_json(json_text(response.content))
        except ValidationError as e:
            raise OutputValidationError(self.agent, problems(e), response) from None

    def settle(self, ctx: AgentContext, response: LlmResponse) -> None:
        """Check the final answer (a `Fallback`'s or an `after_model` replacement too); store it at `key`."""
        value = self.check(response)
        if self.key is not None:
            ctx.state[self.key] = value if self.type is None else self.adapter.dump_python(value, mode="json")


class CorrectOutput:
    """The default policy for an answer that fails validation: ask the model to correct it.

    The next attempt's request adds the answer and a message listing the problems; after
    `retries` corrections in one model envelope, the error stands. It answers at once (no wait),
    and only for the agent it belongs to.
    """

    def __init__(self, agent: str, retries: int) -> None:
        self.agent = agent
        self.retries = retries

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        if not isinstance(error, OutputValidationError) or error.agent != self.agent:
            return Raise(error)
        if ctx.attempt > self.retries:
            return Raise(error)
        request = ctx.request
        messages = [
            *request.messages,
            Message.assistant(error.response.content),
            Message.user(correction(error)),
        ]
        retry = dataclasses.replace(ctx, request=request.model_copy(update={"messages": messages}))
        return Retry(retry, delay=0.0)

    def __repr__(self) -> str:
        return f"CorrectOutput({self.agent!r}, retries={self.retries})"


def correction(error: OutputValidationError) -> str:
    """The message that asks the model to correct an answer that failed validation."""
    listed = "\n".join(f"- {problem}" for problem in error.problems)
    return (
        f"Your answer does not match the required JSON schema:\n{listed}\n"
        "Answer again with only the corrected JSON."
    )


def problems(error: ValidationError) -> list[str]:
    """Pydantic's errors, one line each: where (a dotted path, `(answer)` for the whole) and what."""
    lines = []
    for e in error.errors(include_url=False):
        loc = ".".join(str(part) for part in e["loc"]) or "(answer)"
        if e["type"] == "json_invalid":
            loc = "(answer)"
        lines.append(f"{loc}: {e['msg']}")
    return lines


def json_text(answer: str) -> str:
    """The JSON of an answer, without the Markdown code fence some models put around it."""
    text = answer.strip()
    if text.startswith("```") and text.endswith("```") and len(text) > 6:
        text = text[3:-3]
        first, newline, rest = text.partition("\n")
        if newline and (not first.strip() or first.strip().isalnum()):  # ```json, or a bare fence
            text = rest
    return text


def output_response(value: Any) -> LlmResponse:
    """A response whose answer is `value` as JSON: what a `Fallback` gives for a structured answer."""
    from pydantic_core import to_json

    return LlmResponse.text(to_json(value).decode())


def output_of(events: Iterable[Event], output_type: type[T], *, author: str | None = None) -> T:
    """The last answer among `events` (of `author`, if given) as an `output_type`.

    For the events of a run (`run_sync`'s list, or those `run` yielded). A run that ended with
    an error before any answer raises LookupError naming it; an answer that does not validate
    raises `OutputValidationError`.
    """
    for event in reversed(list(events)):
        if event.is_partial:
            continue
        if event.object == ObjectType.ERROR and event.error is not None:
            error = event.error
            raise LookupError(f"the run ended with {error.type} at {error.where}: {error.message}")
        message = event.message
        if message is None or message.role != "assistant" or message.tool_calls:
            continue
        if author is not None and event.author != author:
            continue
        from pydantic import ValidationError

        try:
            value: T = _cached_adapter(output_type).validate_json(json_text(event.content))
        except ValidationError as e:
            raise OutputValidationError(event.author, problems(e), event) from None
        return value
    raise LookupError(f"no answer{'' if author is None else f' of agent {author!r}'} among the events")


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}
"""output_of's validators, by type: making one costs far more than validating."""


def _cached_adapter(output_type: Any) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(output_type)
    if adapter is None:
        _check_kind("output_of", output_type)
        adapter = _ADAPTERS[output_type] = _adapter("output_of", output_type)
    return adapter


def _adapter(agent: str, output_type: Any) -> TypeAdapter[Any]:
    from pydantic import PydanticUserError, TypeAdapter

    try:
        return TypeAdapter(output_type)
    except PydanticUserError as e:
        raise _type_error(agent, output_type, e) from e


def _type_error(agent: str, output_type: Any, error: Exception) -> OutputTypeError:
    first_line = str(error).partition("\n")[0]
    return OutputTypeError(
        f"agent {agent!r}: output_type={_type_name(output_type)}: pydantic cannot describe it: {first_line}"
    )


def _check_kind(agent: str, output_type: Any) -> None:
    """Refuse, when the agent is made, a type that is not one `output_type` takes."""
    item = output_type
    if get_origin(output_type) is list:
        args = get_args(output_type)
        item = args[0] if len(args) == 1 else None
    # A pydantic model's class means pydantic is loaded: import adk loads none of it.
    pydantic = sys.modules.get("pydantic")
    supported = isinstance(item, type) and (
        (pydantic is not None and issubclass(item, pydantic.BaseModel))
        or dataclasses.is_dataclass(item)
        or is_typeddict(item)
    )
    if not supported:
        raise OutputTypeError(f"agent {agent!r}: output_type={output_type!r} is not {_KINDS}")
    if is_typeddict(item) and type(item).__module__ == "typing" and sys.version_info < (3, 12):
        raise OutputTypeError(
            f"agent {agent!r}: output_type={_type_name(output_type)} is a typing.TypedDict, which pydantic"
            " cannot read before Python 3.12: use typing_extensions.TypedDict"
        )


def _type_name(output_type: Any) -> str:
    if get_origin(output_type) is list:
        return f"list[{_type_name(get_args(output_type)[0])}]"
    return getattr(output_type, "__name__", repr(output_type))
