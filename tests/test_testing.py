"""ScriptedModel: replays its steps, records requests, and says clearly when the script is off."""

from __future__ import annotations

import pytest

from adk.agents import LlmAgent
from adk.errors import ServerError
from adk.events import LlmResponse, Message
from adk.models.base import LlmRequest
from adk.runner import Runner
from adk.testing import ScriptedModel, ScriptError, Stream
from tests._runtime import call, calls, run, summary


async def answers(model: ScriptedModel, request: LlmRequest) -> list[LlmResponse]:
    return [r async for r in model.generate(request)]


async def test_steps_are_replayed_in_order_and_requests_recorded() -> None:
    async def later(request: LlmRequest) -> str:
        return f"async saw {len(request.messages)}"

    response = calls(call("t", "c1"))
    model = ScriptedModel(["text", response, lambda r: f"saw {r.messages[0].content}", later])
    requests = [LlmRequest(messages=[Message.user(str(i))]) for i in range(4)]
    got = [await answers(model, r) for r in requests]
    assert [[(a.content, a.is_partial, a.done) for a in g] for g in got] == [
        [("text", False, True)],
        [("", False, True)],
        [("saw 2", False, True)],
        [("async saw 1", False, True)],
    ]
    assert got[1] == [response]
    assert got[0][0].model == "scripted"
    assert model.requests == requests
    model.assert_done()


async def test_an_exception_step_is_raised() -> None:
    model = ScriptedModel([ServerError("503 from the scripted server", status_code=503)])
    with pytest.raises(ServerError, match="503 from the scripted server"):
        await answers(model, LlmRequest())


async def test_a_streamed_text_goes_out_word_by_word_then_complete() -> None:
    model = ScriptedModel(["a b  c"])
    got = await answers(model, LlmRequest(stream=True))
    assert [(r.content, r.is_partial) for r in got] == [
        ("a", True),
        (" b", True),
        (" ", True),
        (" c", True),
        ("a b  c", False),
    ]
    assert "".join(r.content for r in got[:-1]) == got[-1].content
    assert {r.id for r in got} == {got[-1].id}


async def test_a_streamed_tool_call_streams_its_arguments_after_the_text() -> None:
    model = ScriptedModel([LlmResponse.calls(call("t", "c1", q="a b"), call("u", "c2"), content="On it")])
    got = await answers(model, LlmRequest(stream=True))
    assert [
        (
            r.is_partial,
            r.content,
            [(c.id, c.function.name, c.function.arguments) for c in r.choices[0].delta.tool_calls],
        )
        for r in got[:-1]
        if r.choices[0].delta is not None
    ] == [
        (True, "On", []),
        (True, " it", []),
        (True, "", [("c1", "t", '{"q":')]),
        (True, "", [("c1", "t", ' "a')]),
        (True, "", [("c1", "t", ' b"}')]),
        (True, "", [("c2", "u", "{}")]),
    ]
    assert (got[-1].is_partial, got[-1].tool_calls) == (False, (call("t", "c1", q="a b"), call("u", "c2")))


async def test_a_stream_step_that_completes_goes_out_in_its_own_chunks_once() -> None:
    model = ScriptedModel([Stream(["Hel", "lo w", "orld"])])
    got = await answers(model, LlmRequest(stream=True))
    assert [(r.content, r.is_partial) for r in got] == [
        ("Hel", True),
        ("lo w", True),
        ("orld", True),
        ("Hello world", False),
    ]


async def test_calling_more_times_than_scripted_is_a_clear_error() -> None:
    model = ScriptedModel(["only one"], name="planner")
    await answers(model, LlmRequest())
    with pytest.raises(ScriptError) as info:
        await answers(model, LlmRequest(messages=[Message.user("one more?")]))
    assert str(info.value) == (
        "ScriptedModel 'planner' was called 2 time(s) but only 1 step(s) were scripted; "
        "last request's messages: ['one more?']"
    )


async def test_an_exhausted_script_ends_a_run_with_an_error_event_naming_the_model() -> None:
    model = ScriptedModel([calls(call("missing", "c1"))])
    events = await run(Runner(LlmAgent("root", model=model)))
    assert summary(events[-1]) == ("error", "root", "ScriptError", "model:scripted")
    assert events[-1].error is not None
    assert "called 2 time(s) but only 1 step(s) were scripted" in events[-1].error.message


async def test_assert_done_fails_when_steps_are_left() -> None:
    model = ScriptedModel(["one", "two"])
    await answers(model, LlmRequest())
    assert model.remaining == 1
    with pytest.raises(ScriptError, match=r"ScriptedModel 'scripted' was called 1 time\(s\) but 2 step\(s\)"):
        model.assert_done()
