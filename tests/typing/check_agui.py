"""Type-checked only (mypy --strict), never run: the translate hooks' protocols and the app's API."""

from typing import assert_type

from ag_ui.core import BaseEvent, CustomEvent
from starlette.applications import Starlette
from starlette.requests import Request

from adk.agents import LlmAgent
from adk.agui import AfterTranslate, AguiTranslator, BeforeTranslate, TranslateContext, create_app
from adk.events import Event
from adk.runner import Runner
from adk.testing import ScriptedModel


class Redact:
    def before_translate(self, event: Event, ctx: TranslateContext) -> Event | None:
        return None


class Announce:
    async def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> BaseEvent | None:
        return CustomEvent(name="seen", value=event.type.value)


class ReturnsText:
    def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> str:
        return "no"


before: BeforeTranslate = Redact()
after: AfterTranslate = Announce()
wrong: AfterTranslate = ReturnsText()  # type: ignore[assignment]

ctx = TranslateContext(thread_id="t", run_id="r", invocation_id="r")
translator = AguiTranslator(ctx, [Redact(), Announce, before, after])
runner = Runner(LlmAgent("a", model=ScriptedModel(["hi"])))
assert_type(create_app(runner, translate_callbacks=[Redact, Announce()]), Starlette)
create_app(runner, translate_callbacks=[object()])  # type: ignore[list-item]
create_app(runner, identity=lambda request: request.headers.get("x-user"))


async def verify(request: Request) -> str | None:
    return "ann" if request.headers.get("authorization") == "Bearer ok" else None


create_app(runner, identity=verify, cors_origins=["https://app.example"], max_body=4096)
create_app(runner, identity=lambda request: 42)  # type: ignore[arg-type,return-value]
