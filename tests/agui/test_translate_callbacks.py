"""Translate hooks: replacement or None, first replacement wins, errors stop; exact traces."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from ag_ui.core import BaseEvent, CustomEvent, TextMessageContentEvent

from adk.agui import AguiTranslator, TranslateContext
from adk.errors import CallbackError, CallbackRegistrationError, where
from adk.events import Event, Message
from tests.agui.support import CTX, chunk, complete, completion, run_finished, run_started, wire

Trace = list[tuple[str, str, str]]


class Redact:
    """Replaces every streamed delta's text with stars."""

    def __init__(self, trace: Trace, name: str = "redact") -> None:
        self.trace, self.name = trace, name

    def before_translate(self, event: Event, ctx: TranslateContext) -> Event | None:
        self.trace.append((self.name, "before_translate", event.object))
        if event.delta is None:
            return None
        replaced = event.clone()
        replaced.choices[0].delta = Message.assistant("*" * len(event.delta.content))
        return replaced


class Keep:
    """Looks at every event and keeps it."""

    def __init__(self, trace: Trace, name: str = "keep") -> None:
        self.trace, self.name = trace, name

    def before_translate(self, event: Event, ctx: TranslateContext) -> Event | None:
        self.trace.append((self.name, "before_translate", event.object))
        return None

    async def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> BaseEvent | None:
        self.trace.append((self.name, "after_translate", event.type.value))
        return None


class Tag:
    """Tags every AG-UI event with who saw it (async, to show both kinds of hook work)."""

    def __init__(self, trace: Trace, name: str) -> None:
        self.trace, self.name = trace, name

    async def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> BaseEvent | None:
        self.trace.append((self.name, "after_translate", event.type.value))
        return event.model_copy(update={"metadata": {"by": self.name, "run": ctx.run_id}})


class Broken:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> BaseEvent | None:
        self.trace.append(("broken", "after_translate", event.type.value))
        raise RuntimeError("no network")


class WrongType:
    def before_translate(self, event: Event, ctx: TranslateContext) -> Any:
        return "not an event"


class WrongAguiType:
    def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> Any:
        return {"type": "RUN_STARTED"}  # what the wire looks like, not an AG-UI event


async def run(callbacks: list[Any], events: list[Event], **options: Any) -> list[dict[str, Any]]:
    t = AguiTranslator(CTX, callbacks, **options)
    out = await t.start({})
    for event in events:
        out += await t.translate(event)
    return wire(out)


async def test_before_translate_replaces_the_adk_event_that_is_translated() -> None:
    trace: Trace = []
    out = await run([Redact(trace)], [chunk("secret"), completion()])
    assert [e for e in out if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "id1", "delta": "******"}
    ]
    assert trace == [
        ("redact", "before_translate", "chat.completion.chunk"),
        ("redact", "before_translate", "runner.completion"),
    ]


async def test_the_first_replacement_wins_and_stops_the_chain() -> None:
    trace: Trace = []
    callbacks = [Keep(trace, "k1"), Redact(trace, "r1"), Redact(trace, "r2")]
    await run(callbacks, [chunk("abc")])
    assert [t for t in trace if t[1] == "before_translate"] == [
        ("k1", "before_translate", "chat.completion.chunk"),
        ("r1", "before_translate", "chat.completion.chunk"),
    ]


async def test_with_continue_on_response_every_hook_runs_on_the_original_and_the_last_wins() -> None:
    trace: Trace = []
    out = await run([Tag(trace, "a"), Keep(trace), Tag(trace, "b")], [], continue_on_response=True)
    assert out == [
        {**run_started(), "metadata": {"by": "b", "run": "r1"}},
        {"type": "STATE_SNAPSHOT", "snapshot": {}, "metadata": {"by": "b", "run": "r1"}},
    ]
    assert trace == [
        ("a", "after_translate", "RUN_STARTED"),
        ("keep", "after_translate", "RUN_STARTED"),
        ("b", "after_translate", "RUN_STARTED"),
        ("a", "after_translate", "STATE_SNAPSHOT"),
        ("keep", "after_translate", "STATE_SNAPSHOT"),
        ("b", "after_translate", "STATE_SNAPSHOT"),
    ]


async def test_after_translate_sees_every_agui_event_and_may_replace_it() -> None:
    trace: Trace = []

    class Announce:
        def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> BaseEvent | None:
            trace.append(("announce", "after_translate", event.type.value))
            if isinstance(event, TextMessageContentEvent):
                return CustomEvent(name="said", value=event.delta)
            return None

    out = await run([Announce], [complete("hi"), completion()])
    assert out[2:] == [
        {"type": "TEXT_MESSAGE_START", "messageId": "id1", "role": "assistant", "name": "helper"},
        {"type": "CUSTOM", "name": "said", "value": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "id1"},
        run_finished(),
    ]
    assert [t[2] for t in trace] == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]


async def test_a_raising_hook_stops_the_chain_with_an_error_naming_it() -> None:
    trace: Trace = []
    with pytest.raises(CallbackError) as info:
        await run([Broken(trace), Tag(trace, "after")], [])
    assert str(info.value) == "callback Broken failed in after_translate: raised RuntimeError: no network"
    assert (info.value.callback, info.value.hook) == ("Broken", "after_translate")
    assert isinstance(info.value.__cause__, RuntimeError)
    assert trace == [("broken", "after_translate", "RUN_STARTED")]


async def test_a_hook_returning_the_wrong_type_is_an_error_naming_what_it_may_return() -> None:
    with pytest.raises(CallbackError) as info:
        await run([WrongType()], [completion()])
    assert str(info.value) == (
        "callback WrongType failed in before_translate: returned 'not an event'; "
        "before_translate must return an Event or None, not str"
    )


async def test_an_after_translate_hook_returning_the_wrong_type_is_an_error() -> None:
    with pytest.raises(CallbackError) as info:
        await run([WrongAguiType()], [])
    assert str(info.value) == (
        "callback WrongAguiType failed in after_translate: returned {'type': 'RUN_STARTED'}; "
        "after_translate must return an AG-UI event or None, not dict"
    )
    assert where(info.value) == "callback:WrongAguiType.after_translate"


async def test_continue_on_error_lets_another_replacement_win_and_logs_the_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    trace: Trace = []
    with caplog.at_level(logging.WARNING):
        out = await run([Broken(trace), Tag(trace, "t")], [], continue_on_error=True)
    assert out[0] == {**run_started(), "metadata": {"by": "t", "run": "r1"}}
    assert trace[:2] == [
        ("broken", "after_translate", "RUN_STARTED"),
        ("t", "after_translate", "RUN_STARTED"),
    ]
    assert "callback Broken failed in after_translate" in caplog.text
    assert {r.name for r in caplog.records} == {"adk.callbacks.chain"}


async def test_continue_on_error_without_a_replacement_raises_the_first_error_at_the_end() -> None:
    trace: Trace = []
    with pytest.raises(CallbackError, match="Broken failed in after_translate"):
        await run([Broken(trace), Keep(trace)], [], continue_on_error=True)
    assert trace == [("broken", "after_translate", "RUN_STARTED"), ("keep", "after_translate", "RUN_STARTED")]


async def test_an_error_beats_a_response_unless_continuing_on_error() -> None:
    trace: Trace = []
    with pytest.raises(CallbackError):
        await run([Broken(trace), Tag(trace, "t")], [], continue_on_response=True)
    assert trace == [("broken", "after_translate", "RUN_STARTED")]


async def test_fail_reports_a_failing_after_translate_hook_instead_of_hiding_the_run_error() -> None:
    t = AguiTranslator(CTX, [Broken([])])
    assert wire(await t.fail(ValueError("boom"))) == [
        {
            "type": "RUN_ERROR",
            "message": "callback Broken failed in after_translate: raised RuntimeError: no network",
            "code": "CallbackError",
        }
    ]


def test_hooks_are_resolved_at_registration_and_misspellings_are_refused() -> None:
    class Misspelt:
        def after_translte(self, event: BaseEvent, ctx: TranslateContext) -> None:
            return None

    with pytest.raises(
        CallbackRegistrationError, match="'after_translte' that looks like the hook 'after_translate'"
    ):
        AguiTranslator(CTX, [Misspelt()])  # type: ignore[list-item]  # the point: it has no hook
