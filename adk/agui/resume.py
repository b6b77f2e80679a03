"""A client that reconnects continues from the last event it saw: SSE `id:` lines and the
`Last-Event-ID` request header.

Each stored adk event's AG-UI events go out with that event's id on their last SSE message (an
id-only message when it translates to nothing), so a client's last event id names the last event
it was shown whole. A request with `Last-Event-ID` asks for the rest of the run that event belongs
to; a runner that can follow a run another process executes (`Continues`: adk.durable's
`QueuedRunner`) gives it. A plain runner stops a run when its client goes away: it has none to
continue.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

    from adk.agui.translate import AguiTranslator
    from adk.events import Event

__all__ = ["Continues", "prime", "sse"]


@runtime_checkable
class Continues(Protocol):
    """A runner that continues a run for a client that reconnects."""

    async def continued(
        self, user_id: str, session_id: str, after: str
    ) -> tuple[list[Event], AsyncGenerator[Event, None]]:
        """The run the session's event `after` belongs to: its events up to that one (what the
        client was shown), and the rest as they are stored, until the run ends. `LookupError`
        naming it when the session has no event `after`."""
        ...


def sse(encode: Callable[[BaseEvent], str], out: Sequence[BaseEvent], event: Event | None = None) -> bytes:
    """`out` as SSE messages; with the stored `event` they translate, its id on the last one."""
    messages = [encode(e) for e in out]
    if event is not None and not event.is_partial:  # a partial chunk is not stored: no id
        tagged = f"id: {event.id}\n"
        messages[-1:] = [tagged + messages[-1]] if messages else [tagged + "\n"]
    return "".join(messages).encode()


async def prime(translator: AguiTranslator, seen: Sequence[Event]) -> list[BaseEvent]:
    """Translate, without sending, the events a reconnecting client was shown, so that the
    translator knows what the run made (its interrupts, its open messages); what ends the run
    if they did (RUN_FINISHED or RUN_ERROR, to send again)."""
    from ag_ui.core import EventType

    out: list[BaseEvent] = []
    for event in seen:
        out = await translator.translate(event)
    ends = (EventType.RUN_FINISHED, EventType.RUN_ERROR)
    return [e for e in out if e.type in ends] if translator.done else []
