"""Tools: `BaseTool`, and `FunctionTool` / `@tool` that make one from a typed Python function.

A `FunctionTool` builds a pydantic validator of the function's parameters once, when it is
created: it gives the JSON schema the LLM sees and validates the arguments it sends back.
Pydantic is imported where it is used (a tool made, arguments parsed, a result written), so
importing adk does not load it.
`parse_arguments` and `result_to_text` are the runtime's two ends of a tool call: the model's
JSON text in, the tool's result out as text.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Generic,
    NotRequired,
    ParamSpec,
    TypeVar,
    get_args,
    get_origin,
    overload,
)

from adk.callbacks.registry import is_async
from adk.context import ToolContext
from adk.errors import ToolArgumentsError
from adk.events import ToolDeclaration
from adk.limits.timeouts import positive

if TYPE_CHECKING:
    from pydantic import TypeAdapter
    from pydantic.json_schema import GenerateJsonSchema
    from pydantic_core import ErrorDetails

__all__ = ["BaseTool", "FunctionTool", "Toolset", "parse_arguments", "result_to_text", "tool"]

P = ParamSpec("P")
R = TypeVar("R")


class BaseTool(ABC):
    """A tool the model can call.

    `validate` turns the model's decoded JSON arguments into the arguments `run` takes, raising
    `ToolArgumentsError` that names each bad argument; `run` does the work.
    """

    name: str
    description: str = ""
    idempotent: bool = False
    """An idempotent tool may be re-run by the default retry policy after a transient failure."""
    max_retries: int = 2
    """How many times the tool may raise `ToolRetry` in one invocation before it is an error."""
    requires_approval: bool = False
    """Every call waits for a person's approval before it runs (docs/approvals.md)."""
    timeout: float | None = None
    """Seconds a call may run before it is cancelled with a `ToolTimeoutError` (docs/limits.md)."""
    checkpointed: bool = True
    """A durable run records each call as a step, whose result a recovered run takes from the
    record (docs/durable.md). False for a tool whose body is the run's own work, made again on
    recovery: an agent tool (its agent's calls are steps of their own), a transfer."""

    @property
    @abstractmethod
    def declaration(self) -> ToolDeclaration:
        """The tool's name, description and JSON schema, as the model sees them."""

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Check `args` against the tool's schema; raise `ToolArgumentsError` if they fail."""
        return dict(args)

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Run the tool with validated `args`."""


class Toolset(ABC):
    """Tools known only at run time (an MCP server's): an agent lists them before each model call."""

    name: str

    @abstractmethod
    async def get_tools(self) -> Sequence[BaseTool]:
        """The tools now; raise (naming the source) when they cannot be had: the agent goes on without."""

    async def close(self) -> None:  # noqa: B027  # optional: most toolsets hold nothing
        """Release what the tools hold (connections, processes); `Runner.close()` calls it."""


class FunctionTool(BaseTool, Generic[P, R]):
    """A tool made from a typed Python function, sync or async.

    Each parameter becomes an argument in the JSON schema, described by the docstring's
    Args/Parameters section; a parameter annotated `ToolContext` receives the tool context
    instead. Sync functions are called inline, not in a thread: a tool that blocks should be
    `async`, and one with a `timeout` must be. The tool stays callable like the function it
    wraps, which is also `fn`.
    """

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        idempotent: bool = False,
        max_retries: int = 2,
        requires_approval: bool = False,
        timeout: float | None = None,
    ) -> None:
        self.fn = fn
        self.name = name if name is not None else _name_of(fn)
        if not re.fullmatch(_VALID_NAME, self.name):
            raise ValueError(
                f"tool name {self.name!r} is not valid: use 1-64 letters, digits, '_' or '-'"
                + ("" if name is not None else "; pass name=...")
            )
        doc = inspect.getdoc(fn.func if isinstance(fn, functools.partial) else fn)
        summary, param_docs = _parse_docstring(doc or "")
        self.description = description if description is not None else summary
        self.idempotent = idempotent
        self.max_retries = max_retries
        self.requires_approval = requires_approval
        self.timeout = positive(timeout, f"tool {self.name!r}: timeout")
        self._call: Callable[..., Any] = fn
        self._is_async = is_async(fn)
        if self.timeout is not None and not self._is_async:  # called inline: nothing could cancel it
            raise ValueError(
                f"tool {self.name!r}: timeout needs an async function; a sync one runs inline, where"
                " no timeout can cancel it"
            )
        adapter, schema, self._params, self._ctx_param = _arguments_adapter(self.name, fn, param_docs)
        self._validate_python = adapter.validate_python
        self._declaration = ToolDeclaration(name=self.name, description=self.description, parameters=schema)

    @property
    def declaration(self) -> ToolDeclaration:
        return self._declaration

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the function takes them (a pydantic model parameter gets an instance)."""
        import pydantic_core

        try:
            return self._validate_python(args)
        except pydantic_core.ValidationError as e:
            raise ToolArgumentsError(self.name, [self._problem(error) for error in e.errors()]) from None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Call the function with validated `args` (and `ctx`, if it takes one); return its result."""
        if self._ctx_param is not None:
            args = {**args, self._ctx_param: ctx}
        if self._is_async:
            return await self._call(**args)
        return self._call(**args)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool({self.name!r})"

    def _problem(self, error: ErrorDetails) -> str:
        loc = error["loc"]
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)[1:]
        match error["type"]:
            case "missing":
                problem = error["msg"]
            case "extra_forbidden":
                expected = ", ".join(repr(p) for p in self._params) or "none"
                problem = f"unexpected argument (parameters: {expected})"
            case _:
                problem = f"{error['msg']}, got {_short_repr(error['input'])}"
        return f"argument {where!r}: {problem}"


@overload
def tool(fn: Callable[P, R], /) -> FunctionTool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    idempotent: bool = False,
    max_retries: int = 2,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    idempotent: bool = False,
    max_retries: int = 2,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a `FunctionTool` of the decorated function: `@tool` or `@tool(requires_approval=True)`."""

    def wrap(fn: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool(
            fn,
            name=name,
            description=description,
            idempotent=idempotent,
            max_retries=max_retries,
            requires_approval=requires_approval,
            timeout=timeout,
        )

    return wrap if fn is None else wrap(fn)


def parse_arguments(tool_name: str, raw: str) -> dict[str, Any]:
    """Decode the model's argument text for `tool_name`: a JSON object, or empty for none."""
    if raw == "{}" or not raw.strip():  # the common call without arguments: no parser for it
        return {}
    import pydantic_core

    try:
        args = pydantic_core.from_json(raw)
    except ValueError as e:
        raise ToolArgumentsError(
            tool_name, [f"arguments are not valid JSON ({e}): {_short_repr(raw)}"]
        ) from None
    if not isinstance(args, dict):
        raise ToolArgumentsError(
            tool_name, [f"arguments must be a JSON object, got a JSON {_json_kind(args)}: {_short_repr(raw)}"]
        )
    return args


def result_to_text(result: Any) -> str:
    """A tool's result as the text sent to the model: a str as is, data as JSON, anything else str().

    Within data, values JSON cannot hold are written with str(); data that cannot be written at
    all (a list that holds itself) is written with str() whole. A result whose type has a
    `text_for_model()` method (an MCP tool's `McpResult`) is written by it.
    """
    if isinstance(result, str):
        return result
    own = getattr(type(result), "text_for_model", None)
    if own is not None:
        return str(own(result))
    if isinstance(result, _JSON_TYPES) or _is_dataclass(result) or _is_model(result):
        import pydantic_core

        try:
            return pydantic_core.to_json(result, fallback=str).decode()
        except pydantic_core.PydanticSerializationError:
            pass
        try:  # pydantic refuses bytes that are not UTF-8 rather than calling the fallback
            return pydantic_core.to_json(_undecodable_as_str(result), fallback=str).decode()
        except (pydantic_core.PydanticSerializationError, RecursionError):
            pass
    return str(result)


def _undecodable_as_str(value: Any) -> Any:
    """`value`, in plain containers, with each bytes value that is not UTF-8 replaced by its str()."""
    match value:
        case bytes() | bytearray():
            try:
                value.decode()
            except UnicodeDecodeError:
                return str(value)
            return value
        case _ if _is_model(value):
            return _undecodable_as_str(value.model_dump())
        case Mapping():
            return {_undecodable_as_str(k): _undecodable_as_str(v) for k, v in value.items()}
        case list() | tuple() | set() | frozenset():
            return [_undecodable_as_str(v) for v in value]
        case _ if _is_dataclass(value):
            return {f.name: _undecodable_as_str(getattr(value, f.name)) for f in dataclasses.fields(value)}
        case _:
            return value


def _is_dataclass(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _is_model(value: Any) -> bool:
    """Whether `value` is a pydantic model instance (there is none before pydantic is loaded)."""
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(value, main.BaseModel)


_VALID_NAME = r"[A-Za-z0-9_-]{1,64}"
_JSON_TYPES = (Mapping, list, tuple, set, frozenset, int, float, type(None))
# Built from types known only at run time.
_Annotated: Any = Annotated


@functools.cache
def _tool_json_schema() -> type[GenerateJsonSchema]:
    """Pydantic's JSON schema without per-field titles, which only repeat the argument names."""
    from pydantic.json_schema import GenerateJsonSchema

    class ToolJsonSchema(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    return ToolJsonSchema


def _name_of(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        raise TypeError(f"{fn!r} has no __name__: pass FunctionTool(..., name=...)")
    return name


def _arguments_adapter(
    tool_name: str, fn: Callable[..., Any], param_docs: dict[str, str]
) -> tuple[TypeAdapter[dict[str, Any]], dict[str, Any], tuple[str, ...], str | None]:
    """A validator of `fn`'s arguments, its JSON schema, the parameter names, the ToolContext parameter.

    The arguments are a TypedDict, so validation yields the keyword arguments directly and any
    parameter name works (on a BaseModel, `json` or `_private` would clash or be private).
    """
    from pydantic import ConfigDict, Field, PydanticUserError, TypeAdapter, with_config
    from pydantic.fields import FieldInfo
    from typing_extensions import TypedDict  # pydantic needs typing_extensions' TypedDict before 3.12

    typed_dict: Any = TypedDict  # built from types known only at run time

    where = f"tool {tool_name!r} ({getattr(fn, '__qualname__', repr(fn))})"
    try:
        signature = inspect.signature(fn, eval_str=True)
    except (NameError, TypeError, ValueError) as e:
        raise TypeError(f"{where}: cannot read its signature: {type(e).__name__}: {e}") from e
    annotations: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise TypeError(f"{where}: {star}{param.name} is not supported; name every parameter")
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(f"{where}: parameter {param.name!r} is positional-only; tools take keywords")
        if param.annotation is param.empty:
            raise TypeError(f"{where}: parameter {param.name!r} has no type annotation")
        if param.annotation is ToolContext:
            if ctx_param is not None:
                raise TypeError(f"{where}: parameters {ctx_param!r} and {param.name!r} both take ToolContext")
            ctx_param = param.name
            continue
        base, *metadata = (
            get_args(param.annotation) if get_origin(param.annotation) is Annotated else (param.annotation,)
        )
        # Later metadata wins: the docstring's description, then the user's Field()s, then the default.
        if param.name in param_docs:
            metadata.insert(0, Field(description=param_docs[param.name]))
        default = param.default
        if default is not param.empty:
            metadata.append(default if isinstance(default, FieldInfo) else Field(default=default))
        required = default is param.empty or (isinstance(default, FieldInfo) and default.is_required())
        annotations[param.name] = annotation = _Annotated[(base, *metadata)] if metadata else base
        fields[param.name] = annotation if required else NotRequired[annotation]
    try:
        arguments = with_config(ConfigDict(extra="forbid"))(typed_dict(tool_name, fields))
        adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(arguments)
        schema = adapter.json_schema(schema_generator=_tool_json_schema())
    except PydanticUserError as e:
        bad = next((f"parameter {n!r}" for n, a in annotations.items() if not _describable(a)), "it")
        first_line = str(e).partition("\n")[0]
        raise TypeError(f"{where}: pydantic cannot describe {bad}: {first_line}") from e
    schema.pop("title", None)
    return adapter, schema, tuple(fields), ctx_param


def _describable(annotation: Any) -> bool:
    from pydantic import PydanticUserError, TypeAdapter

    try:
        TypeAdapter(annotation).json_schema()
    except PydanticUserError:
        return False
    return True


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_kind(value: Any) -> str:
    match value:
        case list():
            return "array"
        case str():
            return "string"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case _:
            return "null"


# Docstring sections whose entries describe parameters (Google style, NumPy style).
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
# Patterns, not compiled ones: `re` compiles and caches them on first use, so importing adk doesn't.
_GOOGLE_SECTION = (
    r"(?i:args|arguments|parameters|params|keyword args|keyword arguments|other parameters|returns?|"
    r"yields?|raises|examples?|notes?|attributes|see also|warnings?|todo|references):\s*"
)
_NUMPY_UNDERLINE = r"-{3,}\s*"
_SPHINX_PARAM = r":(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(\w+):\s*(.*)"
_GOOGLE_ENTRY = r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)"
_NUMPY_ENTRY = r"(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?"


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The text before any section, and the parameter descriptions (Google, NumPy or Sphinx style)."""
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    summary_end = len(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.fullmatch(_GOOGLE_SECTION, line):
            end = _section_end(lines, i + 1, lambda j: bool(lines[j]) and not lines[j][0].isspace())
            if line.rstrip()[:-1].lower() in _PARAM_SECTIONS:
                params.update(_entries(lines[i + 1 : end], _GOOGLE_ENTRY, description_inline=True))
        elif line and i + 1 < len(lines) and re.fullmatch(_NUMPY_UNDERLINE, lines[i + 1]):
            end = _section_end(
                lines,
                i + 2,
                lambda j: j + 1 < len(lines) and bool(re.fullmatch(_NUMPY_UNDERLINE, lines[j + 1])),
            )
            if line.strip().lower() in _PARAM_SECTIONS:
                params.update(_entries(lines[i + 2 : end], _NUMPY_ENTRY, description_inline=False))
        elif line.startswith(":"):
            end = _section_end(lines, i + 1, lambda j: not lines[j][:1].isspace())
            if m := re.fullmatch(_SPHINX_PARAM, line):
                params[m[1]] = _join([m[2], *lines[i + 1 : end]])
        else:
            i += 1
            continue
        summary_end = min(summary_end, i)
        i = end
    return "\n".join(lines[:summary_end]).strip(), params


def _section_end(lines: list[str], start: int, ends_at: Callable[[int], bool]) -> int:
    return next((j for j in range(start, len(lines)) if ends_at(j)), len(lines))


def _entries(body: list[str], entry: str, *, description_inline: bool) -> dict[str, str]:
    """Parameter entries of a section body: a line at the body's indent, then deeper continuations."""
    indents = [len(line) - len(line.lstrip()) for line in body if line.strip()]
    if not indents:
        return {}
    base = min(indents)
    entries: dict[str, str] = {}
    names: list[str] = []
    parts: list[str] = []
    for line in [*body, ""]:
        deeper = len(line) - len(line.lstrip()) > base
        if line.strip() and deeper:
            parts.append(line)
            continue
        if names and (text := _join(parts)):
            entries.update(dict.fromkeys(names, text))
        names, parts = [], []
        if line.strip() and (m := re.fullmatch(entry, line.strip())):
            names = [name.strip().lstrip("*") for name in m[1].split(",")]
            parts = [m[2]] if description_inline else []
    return entries


def _join(parts: list[str]) -> str:
    return " ".join(part.strip() for part in parts if part.strip())
