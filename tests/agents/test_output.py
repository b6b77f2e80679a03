"""Structured output (docs/agents.md): the schema asked for, answers validated and corrected, the value."""

from __future__ import annotations

import dataclasses
import socket
import sys
import typing
from typing import Any

import pydantic_core
import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter
from typing_extensions import TypedDict

from adk import (
    AgentContext,
    Fallback,
    LlmAgent,
    LlmResponse,
    ModelContext,
    ObjectType,
    Raise,
    Runner,
    SequentialAgent,
)
from adk.agents import output_of, output_response
from adk.errors import OutputTypeError, OutputValidationError
from adk.events import Event, Message
from adk.recovery import Testing
from adk.testing import ScriptedModel, Stream, call_tool
from tests._runtime import Recorder, run, summary


class Invoice(BaseModel):
    number: str
    total: float


@dataclasses.dataclass
class Item:
    name: str
    qty: int


class Person(TypedDict):
    name: str
    age: int


VALID = '{"number": "A-1", "total": 12.5}'
MISSING_TOTAL = '{"number": "A-1"}'


class Errors(Recorder):
    """Records the hooks, and each model error by its type and problems."""

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        problems = error.problems if isinstance(error, OutputValidationError) else None
        self.trace.append(("on_model_error", type(error).__name__, ctx.attempt, problems))
        return Raise(error)


def extractor(*steps: Any, **kw: Any) -> tuple[LlmAgent, ScriptedModel]:
    model = ScriptedModel(steps)
    return LlmAgent("extractor", model=model, output_type=kw.pop("output_type", Invoice), **kw), model


async def test_a_valid_answer_is_the_typed_value_and_is_stored_under_output_key() -> None:
    trace: list[tuple[Any, ...]] = []
    agent, model = extractor(VALID, output_key="invoice")
    runner = Runner(agent, callbacks=[Errors("", trace)])

    events = await run(runner, "Invoice A-1, total 12.50")

    assert output_of(events, Invoice) == Invoice(number="A-1", total=12.5)
    [request] = model.requests
    assert request.response_format == {
        "type": "json_schema",
        "json_schema": {"name": "Invoice", "schema": Invoice.model_json_schema()},
    }
    answer = events[1]
    assert (answer.author, answer.content) == ("extractor", VALID)
    assert answer.actions.state_delta == {"invoice": {"number": "A-1", "total": 12.5}}
    stored = await runner.session_service.get("u", "s")
    assert stored is not None
    assert stored.state == {"invoice": {"number": "A-1", "total": 12.5}}
    assert [t[1] for t in trace] == ["before_agent", "before_model", "after_model", "after_agent"]


async def test_an_invalid_answer_goes_to_on_model_error_and_the_model_corrects_it(testing: Testing) -> None:
    trace: list[tuple[Any, ...]] = []
    agent, model = extractor(MISSING_TOTAL, VALID)

    events = await run(Runner(agent, callbacks=[Errors("", trace)]), "Invoice A-1")

    assert output_of(events, Invoice) == Invoice(number="A-1", total=12.5)
    assert trace == [
        ("", "before_agent", "extractor"),
        ("", "before_model", "extractor"),
        ("on_model_error", "OutputValidationError", 1, ["total: Field required"]),
        ("", "after_model", "extractor"),
        ("", "after_agent", "extractor"),
    ]
    # The failed attempt is announced (not stored); the answer says which callback asked again.
    assert [summary(e) for e in events] == [
        ("model", "user", "Invoice A-1"),
        (ObjectType.ATTEMPT_FAILED, "extractor"),
        ("model", "extractor", VALID),
        ("done", "extractor"),
    ]
    assert events[1].is_partial
    [decision] = events[2].decisions
    assert (decision.by, decision.target, decision.kind) == (
        "callback:CorrectOutput.on_model_error",
        "model:scripted",
        "retried",
    )
    # The second request showed the model its answer and why it was refused.
    assert model.requests[1].messages == [
        Message.user("Invoice A-1"),
        Message.assistant(MISSING_TOTAL),
        Message.user(
            "Your answer does not match the required JSON schema:\n- total: Field required\n"
            "Answer again with only the corrected JSON."
        ),
    ]
    assert testing.waits == [0.0]  # a correction is asked for at once


async def test_answers_still_invalid_after_output_retries_end_the_run(testing: Testing) -> None:
    trace: list[tuple[Any, ...]] = []
    agent, model = extractor("not json", '{"number": 1, "total": "x"}', output_retries=1)

    events = await run(Runner(agent, callbacks=[Errors("", trace)]))

    assert [t for t in trace if t[0] == "on_model_error"] == [
        (
            "on_model_error",
            "OutputValidationError",
            1,
            ["(answer): Invalid JSON: expected ident at line 1 column 2"],
        ),
        (
            "on_model_error",
            "OutputValidationError",
            2,
            [
                "number: Input should be a valid string",
                "total: Input should be a valid number, unable to parse string as a number",
            ],
        ),
    ]
    assert model.remaining == 0
    error = events[-1].error
    assert error is not None
    assert (error.type, error.where) == ("OutputValidationError", "model:scripted")
    assert error.message.startswith("the answer of agent 'extractor' does not match its output_type: number:")
    with pytest.raises(LookupError, match="the run ended with OutputValidationError at model:scripted"):
        output_of(events, Invoice)


async def test_the_default_bound_is_two_corrections(testing: Testing) -> None:
    agent, model = extractor("{}", "{}", "{}", VALID)

    events = await run(Runner(agent))

    assert model.remaining == 1
    assert events[-1].object == ObjectType.ERROR


async def test_a_fallback_supplies_the_value() -> None:
    class Default:
        def on_model_error(self, error: Exception, ctx: ModelContext) -> Fallback[LlmResponse] | Raise:
            if isinstance(error, OutputValidationError):
                return Fallback(output_response(Invoice(number="unknown", total=0)))
            return Raise(error)

    seen: list[str] = []

    class SeeAfter:
        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            seen.append(response.content)
            return response

    agent, model = extractor("no idea", output_key="invoice", callbacks=[Default(), SeeAfter()])

    events = await run(Runner(agent))

    assert output_of(events, Invoice) == Invoice(number="unknown", total=0)
    assert seen == ['{"number":"unknown","total":0.0}']
    assert [e.object for e in events] == [
        ObjectType.CHAT_COMPLETION,
        ObjectType.ATTEMPT_FAILED,  # partial: says the Fallback answered
        ObjectType.CHAT_COMPLETION,
        ObjectType.RUNNER_COMPLETION,
    ]
    assert events[2].actions.state_delta == {"invoice": {"number": "unknown", "total": 0.0}}
    assert model.remaining == 0


async def test_a_fallback_that_does_not_validate_either_ends_the_run() -> None:
    class Bad:
        def on_model_error(self, error: Exception, ctx: ModelContext) -> Fallback[LlmResponse]:
            return Fallback(LlmResponse.text("still no JSON"))

    agent, _ = extractor("no idea", callbacks=[Bad()])

    events = await run(Runner(agent))

    assert events[-1].error is not None
    assert events[-1].error.type == "OutputValidationError"


async def test_after_model_sees_the_answer_and_its_replacement_is_validated() -> None:
    class Raise10:
        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            return LlmResponse.text('{"number": "A-1", "total": 10}')

    agent, _ = extractor(VALID, callbacks=[Raise10()])
    assert output_of(await run(Runner(agent)), Invoice) == Invoice(number="A-1", total=10)


async def test_a_streamed_invalid_answer_is_discarded_before_the_correction(testing: Testing) -> None:
    agent, _ = extractor(Stream(['{"number": ', '"A-1"}']), VALID)

    events = await run(Runner(agent), stream=True)

    assert [(e.object, e.is_partial) for e in events[1:]] == [
        (ObjectType.CHAT_COMPLETION_CHUNK, True),
        (ObjectType.CHAT_COMPLETION_CHUNK, True),
        (ObjectType.ATTEMPT_FAILED, True),
        (ObjectType.ATTEMPT_DISCARDED, True),
        *[(ObjectType.CHAT_COMPLETION_CHUNK, True)] * 4,  # the second answer, word by word
        (ObjectType.CHAT_COMPLETION, False),
        (ObjectType.RUNNER_COMPLETION, False),
    ]
    assert output_of(events, Invoice) == Invoice(number="A-1", total=12.5)


async def test_tool_calls_are_not_validated_and_a_fenced_answer_is_accepted() -> None:
    def rate(currency: str) -> float:
        """The rate of a currency."""
        return 1.1

    fenced = "```json\n" + VALID + "\n```"
    agent, model = extractor(call_tool("rate", currency="EUR"), fenced, tools=[rate])

    events = await run(Runner(agent))

    assert output_of(events, Invoice) == Invoice(number="A-1", total=12.5)
    assert [summary(e)[0] for e in events] == ["model", "model", "tool", "model", "done"]
    assert all(r.response_format is not None for r in model.requests)


@pytest.mark.parametrize(
    ("output_type", "answer", "expected", "name"),
    [
        (list[Item], '[{"name": "pen", "qty": 2}]', [Item("pen", 2)], "list_Item_"),
        (Person, '{"name": "Ada", "age": 36}', {"name": "Ada", "age": 36}, "Person"),
        (list[Invoice], "[]", [], "list_Invoice_"),
    ],
    ids=["list of dataclasses", "TypedDict", "list of models"],
)
async def test_dataclasses_typeddicts_and_lists_of_them(
    output_type: Any, answer: str, expected: Any, name: str
) -> None:
    agent, model = extractor(answer, output_type=output_type, output_key="out")

    events = await run(Runner(agent))

    assert output_of(events, output_type) == expected
    assert model.requests[0].response_format == {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": TypeAdapter(output_type).json_schema()},
    }
    assert events[1].actions.state_delta == {"out": pydantic_core.from_json(answer)}


async def test_output_key_without_a_type_stores_the_text_for_the_next_agent() -> None:
    read: list[Any] = []

    class Reads:
        def before_model(self, ctx: ModelContext) -> Any:
            from adk import Cont

            if ctx.agent.name == "writer":
                read.append((ctx.state["summary"], ctx.state["invoice"]))
            return Cont(ctx)

    pipeline = SequentialAgent(
        "pipeline",
        sub_agents=[
            LlmAgent("summarizer", model=ScriptedModel(["A short summary."]), output_key="summary"),
            LlmAgent("extract", model=ScriptedModel([VALID]), output_type=Invoice, output_key="invoice"),
            LlmAgent("writer", model=ScriptedModel(["Done."])),
        ],
    )
    await run(Runner(pipeline, callbacks=[Reads()]))
    assert read == [("A short summary.", {"number": "A-1", "total": 12.5})]


def test_an_output_type_adk_cannot_use_is_refused_when_the_agent_is_made() -> None:
    for bad in (int, dict, "Invoice", list[int], list, Invoice | None):
        with pytest.raises(OutputTypeError, match=r"agent 'x': output_type=.* is not a pydantic model, a"):
            LlmAgent("x", model=ScriptedModel([]), output_type=bad)
    with pytest.raises(ValueError, match="agent 'x': output_retries must be 0 or more, got -1"):
        LlmAgent("x", model=ScriptedModel([]), output_type=Invoice, output_retries=-1)
    with pytest.raises(ValueError, match="agent 'x': output_key must not be empty"):
        LlmAgent("x", model=ScriptedModel([]), output_type=Invoice, output_key="")


def test_a_typing_typeddict_is_refused_before_python_3_12() -> None:
    class Old(typing.TypedDict):
        a: int

    if sys.version_info >= (3, 12):
        LlmAgent("x", model=ScriptedModel([]), output_type=Old)
        return
    with pytest.raises(
        OutputTypeError, match=r"typing\.TypedDict, which pydantic cannot read before Python 3\.12"
    ):
        LlmAgent("x", model=ScriptedModel([]), output_type=Old)


def test_a_model_pydantic_cannot_describe_is_refused_where_the_agent_is_made() -> None:
    class Odd(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        conn: socket.socket

    with pytest.raises(OutputTypeError) as caught:
        LlmAgent("odd", model=ScriptedModel([]), output_type=Odd)

    assert str(caught.value).startswith("agent 'odd': output_type=Odd: pydantic cannot describe it:")


def test_output_of_finds_the_last_answer_and_says_why_there_is_none() -> None:
    def answer(author: str, content: str) -> Event:
        return Event.from_response("i", author, LlmResponse.text(content))

    events = [
        answer("a", VALID),
        answer("b", '{"number": "B", "total": 1}'),
        Event.new("i", "b", object=ObjectType.RUNNER_COMPLETION),
    ]
    assert output_of(events, Invoice).number == "B"
    assert output_of(events, Invoice, author="a").number == "A-1"
    with pytest.raises(LookupError, match="no answer of agent 'c' among the events"):
        output_of(events, Invoice, author="c")
    with pytest.raises(LookupError, match="no answer among the events"):
        output_of([], Invoice)
    with pytest.raises(OutputValidationError, match="the answer of agent 'b' does not match"):
        output_of(events, Item)
    with pytest.raises(OutputTypeError):
        output_of(events, int)  # type: ignore[arg-type]


async def test_before_agent_context_state_is_json_data_not_the_model() -> None:
    seen: list[Any] = []

    class After:
        def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
            seen.append(ctx.state["invoice"])
            return output

    agent, _ = extractor(VALID, output_key="invoice", callbacks=[After()])
    await run(Runner(agent))
    assert seen == [{"number": "A-1", "total": 12.5}]
