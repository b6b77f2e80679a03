"""A session's horizon: how many of its first events a run may skip, every reader it has being
served by the events after them (docs/decisions.md, "A run reads a session from its horizon").

A store records it when a `compaction` event is appended, and `acquire` reads the events after
it; `get` reads them all. It is the least of what each reader of a run needs:
- every branch's history (`Session.history`): the event its latest compaction kept from, the
  latest among the compactions on the branch or an ancestor (the root's count for every branch);
  a branch without one needs every event;
- the last invocation (a resume, a paused run's answers, approvals): its first event;
- the agent that takes the next message (`adk.agents.transfer.active_agent`): for each agent
  that answered on the root branch, its latest answer (which agents qualify is the agent
  tree's to say, so each keeps its own).

It is computed from a copy of the session that holds the events after the previous horizon:
each event a reader needs from before it is also needed now, or another event after it serves.
"""

from __future__ import annotations

from adk.events import Event, ObjectType
from adk.sessions.base import Session

__all__ = ["horizon_after"]

_COMPACTION = ObjectType.COMPACTION


def horizon_after(session: Session, event: Event) -> int | None:
    """The session's horizon once `event` follows the events of `session`; None, if it stays as it
    was (only a compaction moves it)."""
    if event.object != _COMPACTION:
        return None
    events = [*session.events, event]
    at = _first_of_invocation(events, event.invocation_id)
    for branch in {e.branch for e in events} | {""}:
        at = min(at, _kept_from(events, branch))
    for answer in _latest_answers(events):
        at = min(at, answer)
    return 0 if at < 0 else session.skipped + at


def _first_of_invocation(events: list[Event], invocation_id: str) -> int:
    return next(i for i, e in enumerate(events) if e.invocation_id == invocation_id)


def _kept_from(events: list[Event], branch: str) -> int:
    """Where the history of `branch` begins: the event its latest compaction kept from; -1 (every
    event of the session) if it has none, or that event is not among `events`."""
    for at in range(len(events) - 1, -1, -1):
        e = events[at]
        b = e.branch
        if e.object != _COMPACTION or (b and b != branch and not branch.startswith(b + ".")):
            continue
        kept = next((d.kept_from for d in e.decisions if d.kind == "compacted"), "")
        return next((i for i in range(at - 1, -1, -1) if events[i].id == kept), -1) if kept else -1
    return -1


def _latest_answers(events: list[Event]) -> list[int]:
    """The position of each agent's latest answer on the root branch."""
    latest: dict[str, int] = {}
    for at in range(len(events) - 1, -1, -1):
        e = events[at]
        if e.branch or e.author == "user" or e.author in latest:
            continue
        message = e.message
        if message is not None and message.role == "assistant":
            latest[e.author] = at
    return list(latest.values())
