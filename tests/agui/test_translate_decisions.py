"""Callback decisions on adk events become CUSTOM `adk.decision` events, each told once."""

from __future__ import annotations

from adk.agui import AguiTranslator
from adk.callbacks.decisions import Halted, Retried
from adk.events import Event, ObjectType
from tests.agui.support import AUTHOR, CTX, INV, complete, completion, text, tool_response, tool_result, wire

RETRIED = Retried("callback:RetryPolicy.on_model_error", "model:m", 2, 0.5, "ServerError", "503")


def custom(decision: dict[str, object]) -> dict[str, object]:
    return {"type": "CUSTOM", "name": "adk.decision", "value": decision}


async def translate(*events: Event) -> list[dict[str, object]]:
    t = AguiTranslator(CTX)
    out = []
    for event in events:
        out += await t.translate(event)
    return wire(out)


async def test_a_retry_is_told_as_it_happens_and_not_again_with_the_response() -> None:
    failed = Event.new(INV, AUTHOR, object=ObjectType.ATTEMPT_FAILED, is_partial=True, decisions=(RETRIED,))
    answer = complete("Hello")
    answer.decisions = (RETRIED,)  # repeated on the response, for the record
    retried = {
        "by": "callback:RetryPolicy.on_model_error",
        "target": "model:m",
        "attempt": 2,
        "wait": 0.5,
        "error": "ServerError",
        "message": "503",
        "kind": "retried",
    }
    assert await translate(failed, answer, completion()) == [
        custom(retried),
        *text("id1", "Hello"),
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": INV},
    ]


async def test_a_halt_comes_before_what_it_shaped() -> None:
    answer = complete("No.")
    answer.decisions = (Halted("callback:Guard.before_model", "model:m"),)
    refused = tool_response("c1", "refused")
    refused.decisions = (Halted("callback:Authorize.before_tool", "tool:weather"),)
    assert await translate(answer, refused) == [
        custom({"by": "callback:Guard.before_model", "target": "model:m", "kind": "halted"}),
        *text("id1", "No."),
        custom({"by": "callback:Authorize.before_tool", "target": "tool:weather", "kind": "halted"}),
        tool_result("id2", "c1", "refused"),
    ]
