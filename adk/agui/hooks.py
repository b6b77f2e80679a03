"""The translate hooks, a hook family of their own declared here, at import: `before_translate`
(an adk event, before it is translated) and `after_translate` (an AG-UI event, before it is sent).

A hook returns a replacement or None (keep); the first replacement wins (the last, with
`continue_on_response`); a hook that raises or returns something else stops the run with a
`CallbackError` naming it (unless `continue_on_error`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

from adk.callbacks.registry import REPLACE, Hook, declare_hooks
from adk.events import Event

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent, RunAgentInput

__all__ = [
    "AFTER_TRANSLATE",
    "BEFORE_TRANSLATE",
    "AfterTranslate",
    "BeforeTranslate",
    "TranslateCallback",
    "TranslateContext",
]


def _agui_event() -> type:
    from ag_ui.core import BaseEvent

    return BaseEvent


BEFORE_TRANSLATE, AFTER_TRANSLATE = declare_hooks(
    Hook("before_translate", REPLACE, Event, "an Event or None"),
    Hook("after_translate", REPLACE, _agui_event, "an AG-UI event or None"),
)
"""The translate hooks, a family of their own: replace chains run by the callback core."""


@dataclass(frozen=True, slots=True)
class TranslateContext:
    """What the translate hooks know about the run they translate."""

    thread_id: str
    """The AG-UI thread: the adk session id."""
    run_id: str
    """The AG-UI run: the adk invocation id, unless the translator is used on its own."""
    invocation_id: str
    user_id: str = ""
    input: RunAgentInput | None = None
    """The request that started the run (its `forwarded_props`, `context`, ...), when served."""


class BeforeTranslate(Protocol):
    """Before an adk event is translated: return a replacement event, or None to keep it."""

    def before_translate(
        self, event: Event, ctx: TranslateContext, /
    ) -> Event | Awaitable[Event | None] | None: ...


class AfterTranslate(Protocol):
    """After an AG-UI event is made, before it is sent: return a replacement, or None to keep it."""

    def after_translate(
        self, event: BaseEvent, ctx: TranslateContext, /
    ) -> BaseEvent | Awaitable[BaseEvent | None] | None: ...


TranslateCallback: TypeAlias = BeforeTranslate | AfterTranslate | type[BeforeTranslate] | type[AfterTranslate]
"""What may be registered as a translate callback: an instance or module with a hook, or such a class."""
