"""Sessions: a conversation's events and state, and the small contract every store implements.

The contract, tested once for every store in tests/contract/:
- **Ordered appends.** An event's sequence number is its position in the session (from 1). An
  append follows the last event the caller's session has seen; if the store has more, another
  writer appended in between and the append is refused (`StaleSessionError`), so nothing
  interleaves silently.
- **A run lease.** `acquire` takes the session for one run (creating it if needed); while the
  lease lasts, `acquire` by any other owner, in any process sharing the store, raises
  `SessionBusyError`, and so does an append through another owner's copy. A lease not renewed
  within `lease_ttl` seconds expires, so a worker that died frees its sessions.
- **State scopes.** A state key prefixed `user:` is shared by every session of the user, one
  prefixed `app:` by every session in the store, and one prefixed `temp:` is never stored; other
  keys belong to the session. A store keeps the user's and the app's keys apart from the
  session's (`split_delta`), and gives each session it returns their current values merged into
  its state (`merge_scopes`); `user_state` and `app_state` read them alone.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from adk.errors import SessionBusyError, StaleSessionError, UnconfirmedAppendError
from adk.events import Event, Message, ObjectType, actions_of

__all__ = [
    "APP_PREFIX",
    "DEFAULT_LEASE_TTL",
    "TEMP_PREFIX",
    "USER_PREFIX",
    "ReadsFromHorizon",
    "ScopedDelta",
    "Session",
    "SessionService",
    "apply_event",
    "apply_state_delta",
    "busy",
    "event_json",
    "merge_scopes",
    "missing_session",
    "read_from_horizon",
    "split_delta",
    "stale",
    "unconfirmed",
]

USER_PREFIX = "user:"
"""State keys shared by every session of one user."""
APP_PREFIX = "app:"
"""State keys shared by every session in the store."""
TEMP_PREFIX = "temp:"
"""State keys that live for one invocation and are never stored."""
_SCOPED = (USER_PREFIX, APP_PREFIX, TEMP_PREFIX)

_new = object.__new__

DEFAULT_LEASE_TTL = 10.0
"""Seconds a run's lease lasts unless renewed: how long a dead worker's session stays taken."""


@dataclass(slots=True, kw_only=True, eq=False)
class Session:
    """One conversation: its stored events and its current state."""

    id: str
    user_id: str
    state: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    updated_at: float = field(default_factory=time.time)
    lease: str | None = None
    """The owner token of the run lease this copy holds (set by `acquire`), or None."""
    histories: dict[str, History] = field(default_factory=dict, repr=False)
    """Per branch, the messages an agent on it sees, kept up to date with `events` (`history`)."""
    skipped: int = 0
    """How many of the session's first stored events this copy did not read: a run's copy starts
    at the store's horizon (adk.sessions.horizon); `events[0]` is number `skipped + 1`."""

    @classmethod
    def _empty(cls, session_id: str, user_id: str) -> Session:
        """A new session with no events and no state."""
        if cls is not Session:
            return cls(id=session_id, user_id=user_id)
        # set through its slots: the dataclass's __init__, given keywords, costs twice as much
        session = _new(Session)
        session.id = session_id
        session.user_id = user_id
        session.state = {}
        session.events = []
        session.updated_at = time.time()
        session.lease = None
        session.histories = {}
        session.skipped = 0
        return session

    @property
    def last_seq(self) -> int:
        """The sequence number of the last event this copy has seen (0 when it has none)."""
        return self.skipped + len(self.events)

    def history(self, branch: str) -> list[Message]:
        """The messages an agent on `branch` sees: the session's, on its branch or an ancestor's.

        Kept per branch and extended with the events added since the last call, so that a turn
        does not cost more as the session grows. The list is shared: copy it to change it.
        """
        kept = self.histories.get(branch)
        if kept is None:
            kept = self.histories[branch] = History._empty()
        return kept.update(self.events, branch)


@dataclass(slots=True, eq=False)
class History:
    """The messages of one branch, as far as the session's events have been read.

    A `compaction` event on the branch starts it again: its summary, then the messages of the
    events it kept (from its `Compacted.kept_from`); the events before stay in the session.
    """

    messages: list[Message] = field(default_factory=list)
    read: int = 0
    """How many of the session's events have been read."""
    last: Event | None = None
    """The last event read: if it is no longer there, the events were replaced and are read again."""
    unanswered: dict[str, str] = field(default_factory=dict)
    """Tool calls (id -> tool name) of the last assistant message that have no result yet."""
    compaction: Event | None = None
    """The last `compaction` event read, which the messages start from (None: the session's first)."""
    anchor: tuple[int, Message] | None = None
    """The model's own count of the history up to its last response that reported usage, and that
    response's message (`LlmRequest.usage_anchor`)."""

    @classmethod
    def _empty(cls) -> History:
        """A history with nothing read, set through its slots (every new session makes one)."""
        history = _new(History)
        history.messages = []
        history.read = 0
        history.last = None
        history.unanswered = {}
        history.anchor = None
        history.compaction = None
        return history

    def update(self, events: list[Event], branch: str) -> list[Message]:
        """The messages after reading the events added since the last call."""
        read = self.read
        if read > len(events) or (read and events[read - 1] is not self.last):
            read = self._restart()  # the events were replaced: read them again
        messages = self.messages
        unanswered = self.unanswered
        for event in events[read:] if read else events:
            if event.is_partial:
                continue
            b = event.branch
            if b and b != branch and not branch.startswith(b + "."):
                continue
            if event.object == _COMPACTION:
                self.unanswered = unanswered
                messages = self._compacted(events, event, branch)
                unanswered = self.unanswered
                continue
            for choice in event.choices:
                message = choice.message
                if message is None:
                    continue
                if message.role == "tool":
                    unanswered.pop(message.tool_call_id or "", None)
                else:
                    if unanswered:
                        # A tool call left without a result (the caller stopped the run while it
                        # ran) gets an error result: chat APIs refuse a call never answered.
                        messages.extend(
                            Message.tool(_INTERRUPTED, tool_call_id=i, name=name)
                            for i, name in unanswered.items()
                        )
                        unanswered = {}
                    if message.tool_calls:
                        unanswered = {c.id: c.function.name for c in message.tool_calls}
                    if event.usage is not None:
                        usage = event.usage
                        self.anchor = (usage.prompt_tokens + usage.completion_tokens, message)
                messages.append(message)
        self.unanswered = unanswered
        self.read = len(events)
        self.last = events[-1] if events else None
        return messages

    def _restart(self) -> int:
        """Empty the history, to read the session's events again from the first; 0, the count read."""
        self.messages, self.unanswered, self.anchor, self.compaction = [], {}, None, None
        return 0

    def _compacted(self, events: list[Event], compaction: Event, branch: str) -> list[Message]:
        """Start again at `compaction`: its summary, then the messages of the events it kept
        (a new list: the old one may be a run's view of its past, and stays as it was)."""
        at = len(events) - 1
        while events[at] is not compaction:
            at -= 1
        kept_from = next((d.kept_from for d in compaction.decisions if d.kind == "compacted"), "")
        start = at
        while kept_from and start > 0 and events[start - 1].id != kept_from:
            start -= 1
        kept = History._empty()
        if kept_from and start > 0:  # earlier compactions among them were folded into this one
            kept.update([e for e in events[start - 1 : at] if e.object != _COMPACTION], branch)
        summary = [c.message for c in compaction.choices if c.message is not None]
        self.messages = summary + kept.messages
        self.unanswered = kept.unanswered
        self.anchor = None  # the model's counts were of the history before the compaction
        self.compaction = compaction
        return self.messages


_COMPACTION = ObjectType.COMPACTION
_INTERRUPTED = "Error: the run was stopped before this call returned"


def apply_state_delta(state: dict[str, Any], delta: Mapping[str, Any]) -> None:
    """Apply `delta` to `state` in place: a key set to None is deleted, any other value replaces.

    `temp:` keys are skipped: they are never stored.
    """
    for key, value in delta.items():
        if value is None:
            state.pop(key, None)
        elif not key.startswith(TEMP_PREFIX):
            state[key] = value


@dataclass(frozen=True, slots=True)
class ScopedDelta:
    """A state delta split by scope, as a store keeps it (`temp:` keys dropped)."""

    session: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] = field(default_factory=dict)
    """The `user:` keys (prefix kept), for every session of the event's user."""
    app: dict[str, Any] = field(default_factory=dict)
    """The `app:` keys (prefix kept), for every session in the store."""


def split_delta(delta: Mapping[str, Any]) -> ScopedDelta:
    """`delta` split into the session's keys, the user's and the app's; `temp:` keys are dropped.

    A delta without scoped keys (the common case) comes back whole as the session's part.
    """
    if not any(key.startswith(_SCOPED) for key in delta):
        return ScopedDelta(dict(delta))
    scoped = ScopedDelta()
    for key, value in delta.items():
        if key.startswith(USER_PREFIX):
            scoped.user[key] = value
        elif key.startswith(APP_PREFIX):
            scoped.app[key] = value
        elif not key.startswith(TEMP_PREFIX):
            scoped.session[key] = value
    return scoped


def merge_scopes(state: dict[str, Any], user: Mapping[str, Any], app: Mapping[str, Any]) -> None:
    """Make `state` (a session's, in place) show `user` and `app` as the current scoped values.

    Scoped keys `state` held from before and that are gone from the store are removed.
    """
    for key in [k for k in state if k.startswith(_SCOPED)]:
        del state[key]
    state.update(app)
    state.update(user)


def apply_event(session: Session, event: Event) -> None:
    """Apply `event` to the in-memory `session`: its state delta, then the event itself.

    The state dict is changed in place, since contexts hold a reference to it.
    """
    actions = actions_of(event)
    if actions is not None and actions.state_delta:
        apply_state_delta(session.state, actions.state_delta)
    session.events.append(event)
    session.updated_at = event.timestamp


class SessionService(Protocol):
    """Where sessions live. Partial (streaming) events are never stored."""

    lease_ttl: float
    """Seconds a lease lasts unless renewed; the runner renews it every third of that."""

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        """The session, created empty if it does not exist."""
        ...

    async def get(self, user_id: str, session_id: str) -> Session | None:
        """The session, or None if it does not exist."""
        ...

    async def append_event(self, session: Session, event: Event) -> None:
        """Store `event` as number `session.last_seq + 1` and apply its state delta to `session`.

        A partial event is ignored. Raises LookupError if the session is not in the store,
        `StaleSessionError` if the store has events `session` has not seen, and
        `SessionBusyError` if another owner holds the session's lease; any error means the event
        was not stored, but `UnconfirmedAppendError` (it may be).
        """
        ...

    async def delete(self, user_id: str, session_id: str) -> None:
        """Delete the session and its events; deleting a missing session does nothing."""
        ...

    async def list_sessions(self, user_id: str) -> list[str]:
        """The ids of `user_id`'s sessions, oldest first."""
        ...

    async def user_state(self, user_id: str) -> dict[str, Any]:
        """The `user:` keys (prefix kept) that every session of `user_id` shares."""
        ...

    async def app_state(self) -> dict[str, Any]:
        """The `app:` keys (prefix kept) that every session in the store shares."""
        ...

    async def acquire(
        self, user_id: str, session_id: str, owner: str, *, takeover: str | None = None
    ) -> Session:
        """Take the session's run lease for `owner` (creating the session if needed) and return it.

        Raises `SessionBusyError` while another owner's lease lasts, unless that owner is
        `takeover` (a run of the same runner that is known to be gone).
        """
        ...

    async def renew(self, session: Session) -> None:
        """Extend the lease `session` holds by `lease_ttl`; `SessionBusyError` if it was lost."""
        ...

    async def release(self, session: Session) -> None:
        """Give up the lease `session` holds, if it still holds it; `session.lease` becomes None."""
        ...


@runtime_checkable
class ReadsFromHorizon(Protocol):
    """A store that can read a session as a run does, without taking it (an optional method)."""

    async def get_from_horizon(self, user_id: str, session_id: str) -> Session | None:
        """The session with only its events after the horizon (`Session.skipped` counts the
        others), its state whole; None if it does not exist. Takes no lease and writes nothing."""
        ...


async def read_from_horizon(store: SessionService, user_id: str, session_id: str) -> Session | None:
    """The session as a run reads it, from its horizon on (adk.sessions.horizon), for a reader that
    needs only its state and its last invocation: the store's `get_from_horizon`, or its `get`
    (every event) if it has none."""
    if isinstance(store, ReadsFromHorizon):
        return await store.get_from_horizon(user_id, session_id)
    return await store.get(user_id, session_id)


def missing_session(store: str, session: Session) -> LookupError:
    """The error for an append to a session that is not in `store`."""
    return LookupError(
        f"cannot append to session {session.id!r} of user {session.user_id!r}: it is not in {store}"
        " (never created there, or deleted)"
    )


def stale(session: Session, stored: int) -> StaleSessionError:
    """The error for an append whose session copy has not seen every stored event."""
    return StaleSessionError(
        f"cannot append to session {session.id!r} of user {session.user_id!r}: the store has"
        f" {stored} event(s) and this copy has seen {session.last_seq}; another writer appended"
        " in between (read the session again)"
    )


def unconfirmed(
    session: Session, event: Event, lost: BaseException, asking: BaseException
) -> UnconfirmedAppendError:
    """The error for an append whose answer `lost` went missing, and the question after it too."""
    seq = session.last_seq + 1
    return UnconfirmedAppendError(
        f"cannot tell whether event {event.id} ({event.object}) was stored as number {seq} of session"
        f" {session.id!r} of user {session.user_id!r}: events up to number {seq - 1} are stored;"
        f" the store's answer was lost ({_line(lost)}) and it could not be asked since ({_line(asking)})",
        event_id=event.id,
        seq=seq,
    )


def _line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def busy(user_id: str, session_id: str) -> SessionBusyError:
    """The error for a session whose lease another run holds."""
    return SessionBusyError(f"session {session_id!r} of user {user_id!r} is already running")


def event_json(event: Event) -> str:
    """The event as a stored row's JSON; a state value that JSON cannot hold is a TypeError naming
    its key (the SQL stores' shared encoding)."""
    import pydantic_core  # with pydantic, loaded by the first store that writes JSON

    try:
        return event.model_dump_json()
    except pydantic_core.PydanticSerializationError as e:
        for key, value in event.actions.state_delta.items():
            try:
                pydantic_core.to_json(value)
            except pydantic_core.PydanticSerializationError:
                raise TypeError(
                    f"cannot store event {event.id}: state_delta[{key!r}] holds a {type(value).__name__},"
                    " which JSON cannot represent"
                ) from e
        raise
