"""FunctionTool and @tool: schemas, validation, calls, ToolContext, argument parsing, results."""

import dataclasses
import functools
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, cast

import pytest
from pydantic import BaseModel, Field

from adk.agents import LlmAgent
from adk.context import Invocation, ToolContext
from adk.errors import ToolArgumentsError
from adk.events import LlmResponse, Message, ObjectType, ToolCall
from adk.runner import Runner
from adk.sessions import Session
from adk.testing import ScriptedModel
from adk.tools import BaseTool, FunctionTool, parse_arguments, result_to_text, tool

if TYPE_CHECKING:
    from adk.agents.base import BaseAgent


class Address(BaseModel):
    """A postal address."""

    city: str
    zip_code: str | None = None


@dataclasses.dataclass
class Point:
    x: int
    y: int


def make_ctx(tool: BaseTool, tool_call_id: str = "call_1") -> ToolContext:
    session = Session(id="s1", user_id="u1", state={"unit": "c"})
    invocation = Invocation("inv1", session, Message.user("hi"))
    return ToolContext(
        invocation=invocation,
        agent=cast("BaseAgent", None),
        branch="root",
        tool=tool,
        args={},
        tool_call_id=tool_call_id,
    )


def schema_of(fn: Any) -> dict[str, Any]:
    return FunctionTool(fn).declaration.parameters


# --- schema -------------------------------------------------------------------------------------


def test_schema_of_scalars_optional_literal_list_and_defaults() -> None:
    def f(
        city: str,
        days: int,
        ratio: float = 0.5,
        unit: Literal["c", "f"] = "c",
        tags: list[str] | None = None,
        note: Optional[str] = None,  # noqa: UP045 -- the typing spelling must work too
    ) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "ratio": {"type": "number", "default": 0.5},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["city", "days"],
        "additionalProperties": False,
    }


def test_schema_of_nested_pydantic_model() -> None:
    def f(address: Address, extra: list[Address]) -> None: ...

    schema = schema_of(f)
    assert schema["properties"] == {
        "address": {"$ref": "#/$defs/Address"},
        "extra": {"type": "array", "items": {"$ref": "#/$defs/Address"}},
    }
    assert schema["$defs"]["Address"] == {
        "title": "Address",
        "description": "A postal address.",
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "zip_code": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
    }


def test_schema_of_function_without_parameters() -> None:
    def now() -> str:
        return "noon"

    assert schema_of(now) == {"type": "object", "properties": {}, "additionalProperties": False}


def test_parameter_names_that_clash_with_pydantic_work() -> None:
    def f(json: str, copy: int, model_config: bool = False) -> str:
        return f"{json} {copy} {model_config}"

    t = FunctionTool(f)
    assert list(t.declaration.parameters["properties"]) == ["json", "copy", "model_config"]
    assert t.validate({"json": "j", "copy": 2}) == {"json": "j", "copy": 2, "model_config": False}


def test_google_docstring_gives_description_and_argument_descriptions() -> None:
    def get_weather(city: str, days: int = 1) -> str:
        """Get the weather forecast for a city.

        Use it for any question about the weather.

        Args:
            city: The city's name,
                in English.
            days (int): How many days to forecast.

        Returns:
            The forecast.
        """
        return city

    declaration = FunctionTool(get_weather).declaration
    assert declaration.name == "get_weather"
    assert declaration.description == (
        "Get the weather forecast for a city.\n\nUse it for any question about the weather."
    )
    assert declaration.parameters["properties"] == {
        "city": {"type": "string", "description": "The city's name, in English."},
        "days": {"type": "integer", "default": 1, "description": "How many days to forecast."},
    }


def test_numpy_docstring() -> None:
    def add(x: int, y: int, label: str = "") -> int:
        """Add two numbers.

        Parameters
        ----------
        x, y : int
            The numbers
            to add.
        label : str
            A label.

        Returns
        -------
        int
        """
        return x + y

    declaration = FunctionTool(add).declaration
    assert declaration.description == "Add two numbers."
    descriptions = {k: v.get("description") for k, v in declaration.parameters["properties"].items()}
    assert descriptions == {"x": "The numbers to add.", "y": "The numbers to add.", "label": "A label."}


def test_sphinx_docstring() -> None:
    def add(x: int, y: int) -> int:
        """Add two numbers.

        :param x: The first,
            a number.
        :param int y: The second.
        :returns: The sum.
        """
        return x + y

    declaration = FunctionTool(add).declaration
    assert declaration.description == "Add two numbers."
    descriptions = {k: v.get("description") for k, v in declaration.parameters["properties"].items()}
    assert descriptions == {"x": "The first, a number.", "y": "The second."}


def test_field_description_in_the_signature_beats_the_docstring() -> None:
    def f(
        a: Annotated[int, Field(description="from Annotated", ge=0)], b: str = Field("x", max_length=3)
    ) -> None:
        """Do it.

        Args:
            a: from the docstring
            b: b from the docstring
        """

    properties = schema_of(f)["properties"]
    assert properties["a"] == {"type": "integer", "minimum": 0, "description": "from Annotated"}
    assert properties["b"] == {
        "type": "string",
        "default": "x",
        "maxLength": 3,
        "description": "b from the docstring",
    }


def test_field_without_default_is_required_and_mutable_defaults_are_not_shared() -> None:
    def f(a: int = Field(description="An a."), b: list[int] = []) -> None: ...  # noqa: B006 -- the point

    t = FunctionTool(f)
    assert t.declaration.parameters["required"] == ["a"]
    assert problems_of(t, {}) == ["argument 'a': Field required"]
    t.validate({"a": 1})["b"].append(2)
    assert t.validate({"a": 1}) == {"a": 1, "b": []}


def test_name_and_description_override() -> None:
    def f() -> None:
        """Docstring."""

    t = FunctionTool(f, name="other", description="Told to the model.")
    assert (t.name, t.description) == ("other", "Told to the model.")
    assert (t.declaration.name, t.declaration.description) == ("other", "Told to the model.")


def test_function_without_docstring_has_empty_description() -> None:
    def f(a: int) -> None: ...

    assert FunctionTool(f).description == ""


# --- validation ---------------------------------------------------------------------------------


def weather(city: str, days: int = 1, address: Address | None = None) -> str:
    return f"{city}:{days}"


def problems_of(t: BaseTool, args: dict[str, Any]) -> list[str]:
    with pytest.raises(ToolArgumentsError) as info:
        t.validate(args)
    assert info.value.tool == t.name
    return info.value.problems


def test_validate_returns_python_values_with_defaults() -> None:
    t = FunctionTool(weather)
    assert t.validate({"city": "Paris", "days": "3"}) == {"city": "Paris", "days": 3, "address": None}
    validated = t.validate({"city": "Paris", "address": {"city": "Paris"}})
    assert validated["address"] == Address(city="Paris")


def test_validate_missing_argument() -> None:
    assert problems_of(FunctionTool(weather), {}) == ["argument 'city': Field required"]


def test_validate_wrong_type() -> None:
    assert problems_of(FunctionTool(weather), {"city": "Paris", "days": "three"}) == [
        "argument 'days': Input should be a valid integer, unable to parse string as an integer, got 'three'"
    ]


def test_validate_unknown_argument() -> None:
    assert problems_of(FunctionTool(weather), {"city": "Paris", "when": "now"}) == [
        "argument 'when': unexpected argument (parameters: 'city', 'days', 'address')"
    ]


def test_validate_reports_every_problem_with_nested_paths() -> None:
    def f(points: list[int], address: Address) -> None: ...

    t = FunctionTool(f)
    problems = problems_of(t, {"points": [1, "x"], "address": {"zip_code": "1"}})
    assert problems == [
        "argument 'points[1]': Input should be a valid integer, unable to parse string as an integer,"
        " got 'x'",
        "argument 'address.city': Field required",
    ]
    with pytest.raises(ToolArgumentsError, match=r"^invalid arguments for tool 'f': argument 'points\[1\]'"):
        t.validate({"points": [1, "x"], "address": {"zip_code": "1"}})


def test_validate_shortens_long_inputs() -> None:
    (problem,) = problems_of(FunctionTool(weather), {"city": "Paris", "days": "x" * 500})
    assert problem.endswith("got '" + "x" * 76 + "...")


# --- calling ------------------------------------------------------------------------------------


async def test_run_sync_function_inline() -> None:
    t = FunctionTool(weather)
    assert await t.run(t.validate({"city": "Paris", "days": 2}), make_ctx(t)) == "Paris:2"


async def test_run_async_function() -> None:
    async def fetch(address: Address) -> dict[str, Any]:
        return {"got": address}

    t = FunctionTool(fetch)
    address = Address(city="Oslo")
    assert await t.run(t.validate({"address": {"city": "Oslo"}}), make_ctx(t)) == {"got": address}


async def test_run_returns_the_result_as_is() -> None:
    result = Point(1, 2)

    def f() -> Point:
        return result

    t = FunctionTool(f)
    assert await t.run({}, make_ctx(t)) is result


async def test_run_async_callable_object_and_partial() -> None:
    class Lookup:
        async def __call__(self, key: str) -> str:
            return key.upper()

    async def scaled(x: int, factor: int) -> int:
        return x * factor

    lookup = FunctionTool(Lookup(), name="lookup")
    double = FunctionTool(functools.partial(scaled, factor=2), name="double")
    assert await lookup.run({"key": "a"}, make_ctx(lookup)) == "A"
    assert await double.run({"x": 4}, make_ctx(double)) == 8


async def test_run_awaits_an_async_function_under_a_sync_decorator() -> None:
    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        return wrapper

    @logged
    async def fetch(key: str) -> str:
        return key.upper()

    t = FunctionTool(fetch)
    assert await t.run({"key": "a"}, make_ctx(t)) == "A"


async def test_exceptions_from_the_function_propagate() -> None:
    def broken() -> None:
        raise ValueError("boom")

    t = FunctionTool(broken)
    with pytest.raises(ValueError, match="boom"):
        await t.run({}, make_ctx(t))


# --- ToolContext --------------------------------------------------------------------------------


async def test_tool_context_is_injected_and_not_in_the_schema() -> None:
    seen: list[ToolContext] = []

    async def remember(key: str, tool_context: ToolContext, value: int = 0) -> str:
        """Remember a value.

        Args:
            key: Where to store it.
            tool_context: Not for the model.
            value: What to store.
        """
        seen.append(tool_context)
        tool_context.state[key] = value
        return f"{tool_context.tool_call_id}:{tool_context.state['unit']}"

    t = FunctionTool(remember)
    assert t.declaration.parameters == {
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "Where to store it."},
            "value": {"type": "integer", "default": 0, "description": "What to store."},
        },
        "required": ["key"],
        "additionalProperties": False,
    }
    ctx = make_ctx(t, tool_call_id="call_42")
    args = t.validate({"key": "k", "value": 5})
    assert args == {"key": "k", "value": 5}
    assert await t.run(args, ctx) == "call_42:c"
    assert seen == [ctx]
    assert ctx.state.take_delta() == {"k": 5}
    assert args == {"key": "k", "value": 5}, "run must not add the context to the caller's dict"


def test_the_model_cannot_pass_the_tool_context() -> None:
    def f(ctx: ToolContext) -> None: ...

    assert problems_of(FunctionTool(f), {"ctx": {}}) == [
        "argument 'ctx': unexpected argument (parameters: none)"
    ]


# --- decorator ----------------------------------------------------------------------------------


def test_bare_decorator() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert isinstance(add, FunctionTool)
    assert (add.name, add.description, add.idempotent, add.max_retries) == ("add", "Add.", False, 2)
    assert add(2, 3) == 5
    assert add.fn(a=2, b=3) == 5


async def test_decorator_with_options() -> None:
    @tool(name="sum_up", description="Sum.", idempotent=True, max_retries=5)
    async def add(a: int, b: int) -> int:
        return a + b

    assert isinstance(add, FunctionTool)
    assert (add.name, add.description, add.idempotent, add.max_retries) == ("sum_up", "Sum.", True, 5)
    assert await add(2, 3) == 5
    assert await add.run({"a": 1, "b": 1}, make_ctx(add)) == 2
    assert repr(add) == "FunctionTool('sum_up')"

    @tool()
    def noop() -> None: ...

    assert isinstance(noop, FunctionTool)
    assert noop.name == "noop"


# --- bad definitions ----------------------------------------------------------------------------


def no_annotation(city, days: int) -> None:  # type: ignore[no-untyped-def]
    ...


def star_args(*cities: str) -> None: ...


def star_kwargs(city: str, **options: str) -> None: ...


def positional_only(city: str, /) -> None: ...


def two_contexts(a: ToolContext, b: ToolContext) -> None: ...


class NotPydantic:
    pass


def arbitrary_type(thing: NotPydantic) -> None: ...


def optional_context(a: int, ctx: ToolContext | None = None) -> None: ...


def unresolvable(thing: "Missing") -> None: ...  # type: ignore[name-defined]  # noqa: F821


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (no_annotation, r"tool 'no_annotation' \(no_annotation\): parameter 'city' has no type annotation"),
        (star_args, r"tool 'star_args' \(star_args\): \*cities is not supported"),
        (star_kwargs, r"tool 'star_kwargs' \(star_kwargs\): \*\*options is not supported"),
        (positional_only, "tool 'positional_only' .*: parameter 'city' is positional-only"),
        (two_contexts, "tool 'two_contexts' .*: parameters 'a' and 'b' both take ToolContext"),
        (
            arbitrary_type,
            "tool 'arbitrary_type' .*: pydantic cannot describe parameter 'thing': Unable to generate",
        ),
        (optional_context, "tool 'optional_context' .*: pydantic cannot describe parameter 'ctx': "),
        (unresolvable, "tool 'unresolvable' .*: cannot read its signature: NameError: name 'Missing'"),
    ],
)
def test_bad_function_definitions_are_rejected(fn: Any, message: str) -> None:
    with pytest.raises(TypeError, match=f"^{message}"):
        FunctionTool(fn)


def test_bad_tool_names_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"^tool name '<lambda>' is not valid: .*; pass name=\.\.\.$"):
        FunctionTool(lambda: None)
    with pytest.raises(ValueError, match=r"^tool name 'get weather' is not valid"):
        FunctionTool(weather, name="get weather")
    with pytest.raises(TypeError, match=r"has no __name__: pass FunctionTool\(\.\.\., name=\.\.\.\)"):
        FunctionTool(functools.partial(weather, days=2))


# --- parse_arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"), [("", {}), ("  \n", {}), ('{"city": "Paris"}', {"city": "Paris"})]
)
def test_parse_arguments(raw: str, expected: dict[str, Any]) -> None:
    assert parse_arguments("weather", raw) == expected


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (
            '{"city": ',
            "arguments are not valid JSON (EOF while parsing a value at line 1 column 9): '{\"city\": '",
        ),
        ("[1, 2]", "arguments must be a JSON object, got a JSON array: '[1, 2]'"),
        ('"Paris"', "arguments must be a JSON object, got a JSON string: '\"Paris\"'"),
        ("null", "arguments must be a JSON object, got a JSON null: 'null'"),
    ],
)
def test_parse_arguments_errors_name_the_tool_and_the_problem(raw: str, problem: str) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        parse_arguments("weather", raw)
    assert (info.value.tool, info.value.problems) == ("weather", [problem])
    assert str(info.value) == f"invalid arguments for tool 'weather': {problem}"


# --- result_to_text -----------------------------------------------------------------------------


@dataclasses.dataclass
class Blob:
    data: bytes
    parts: list[bytes]


class Packet(BaseModel):
    payload: bytes


CIRCULAR: list[Any] = []
CIRCULAR.append(CIRCULAR)


class Opaque:
    def __str__(self) -> str:
        return "opaque!"


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ("plain text", "plain text"),
        ({"temp": 21, "unit": "c"}, '{"temp":21,"unit":"c"}'),
        ([1, "a", None], '[1,"a",null]'),
        ((1, 2), "[1,2]"),
        (Address(city="Oslo"), '{"city":"Oslo","zip_code":null}'),
        (Point(1, 2), '{"x":1,"y":2}'),
        (
            {"where": Address(city="Oslo"), "what": Opaque()},
            '{"where":{"city":"Oslo","zip_code":null},"what":"opaque!"}',
        ),
        (None, "null"),
        (42, "42"),
        (True, "true"),
        (Opaque(), "opaque!"),
        (
            {"magic": b"\x89PNG\xff", "text": b"utf-8 \xc3\xa9"},
            '{"magic":"b\'\\\\x89PNG\\\\xff\'","text":"utf-8 é"}',
        ),
        (Blob(b"\xff", [b"\xfe"]), '{"data":"b\'\\\\xff\'","parts":["b\'\\\\xfe\'"]}'),
        (Packet(payload=b"\xff"), '{"payload":"b\'\\\\xff\'"}'),
        ({b"\xff": 1}, "{\"b'\\\\xff'\":1}"),
        (CIRCULAR, "[[...]]"),
    ],
)
def test_result_to_text(result: Any, text: str) -> None:
    assert result_to_text(result) == text


def test_a_tool_returning_bytes_that_are_not_utf8_gives_the_model_its_result() -> None:
    @tool
    def header() -> dict[str, bytes]:
        """The first bytes of the file."""
        return {"magic": b"\x89PNG\xff"}

    model = ScriptedModel([LlmResponse.calls(ToolCall.of("header", id="c1")), "a PNG"])
    events = Runner(LlmAgent("a", model=model, tools=[header])).run_sync("u", "s", "what is it?")

    result = next(e for e in events if e.object == ObjectType.TOOL_RESPONSE)
    assert (result.error, result.content) == (None, '{"magic":"b\'\\\\x89PNG\\\\xff\'"}')
    assert model.requests[1].messages[-1].content == result.content
