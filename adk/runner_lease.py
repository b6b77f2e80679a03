"""A run's lease on its session: claimed in its runner, taken in the store, renewed, released.

Two holds keep a session to one run at a time. In the runner, a `Claim` per session (the
runner's `_active` dict, keyed by (user id, session id)): a second run of the session is refused
while the first one's iterator lives, and the run after one whose iterator was dropped (a plain
`break`: asyncio closes the generator only later) or that could not release its lease takes the
lease over. In the store, the lease itself (`SessionService.acquire`), which holds across
processes sharing the store, renewed every third of the store's `lease_ttl` while the run lasts.
"""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from collections.abc import AsyncGenerator

from adk.context import Invocation
from adk.errors import SessionBusyError
from adk.events import Event, new_id
from adk.sessions.base import Session, SessionService, busy

__all__ = ["Claim", "Renewal", "hold", "release", "took"]

log = logging.getLogger(__name__)

Key = tuple[str, str]
"""(user id, session id)."""


class Claim:
    """A run's hold on its session: its lease owner token, and a weak reference to its iterator.

    An iterator the caller dropped frees the session at once for this runner, which takes its
    lease over; so does a run that ended but could not release its lease (the store failing).
    """

    __slots__ = ("ended", "invocation", "key", "owner", "renewal", "run", "session", "takeover")

    def __init__(self, key: Key) -> None:
        self.key = key
        self.owner = new_id()
        self.ended = False
        self.invocation: Invocation | None = None
        """The run's invocation once it started: `Runner.close()` ends it."""
        self.takeover: str | None = None
        """The owner of the lease this run takes over: the runner's last run of the session."""
        self.session: Session | None = None
        """The session, once the store gave this run its lease."""
        self.renewal: Renewal | None = None

    run: weakref.ref[AsyncGenerator[Event, None]]


def hold(active: dict[Key, Claim], claim: Claim) -> None:
    """Make `claim` its runner's run of its session; `SessionBusyError` while another run lives."""
    key = claim.key
    last = active.get(key)
    if last is not None:
        if not last.ended and last.run() is not None:
            raise busy(*key)
        claim.takeover = last.owner
    active[key] = claim


def took(store: SessionService, claim: Claim, session: Session) -> Session:
    """`session`, whose lease the store gave `claim` (`store.acquire(*claim.key, claim.owner,
    takeover=claim.takeover)`): held by the claim, and renewed while the run lasts."""
    claim.session = session
    if math.isfinite(store.lease_ttl):
        claim.renewal = Renewal(store, session)
    return session


async def release(store: SessionService, active: dict[Key, Claim], claim: Claim) -> None:
    """End `claim`: stop renewing, give the store's lease back, and free the session here.

    A lease the store did not take back stays claimed here, so that this runner's next run of
    the session takes it over.
    """
    released = False
    session = claim.session
    if session is not None:
        if claim.renewal is not None:
            claim.renewal.cancel()
        claim.ended = True
        try:
            await store.release(session)
            released = True
        except Exception:
            log.warning("could not release the lease of session %r", claim.key[1], exc_info=True)
    if active.get(claim.key) is claim and (released or not claim.ended):
        del active[claim.key]


class Renewal:
    """Renews a run's lease every third of the store's `lease_ttl` while the run lasts."""

    __slots__ = ("_handle", "_session", "_store", "_task")

    def __init__(self, store: SessionService, session: Session) -> None:
        self._store = store
        self._session = session
        self._task: asyncio.Task[None] | None = None
        self._handle = asyncio.get_running_loop().call_later(store.lease_ttl / 3, self._due)

    def _due(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        session = self._session
        try:
            await self._store.renew(session)
        except SessionBusyError:  # lost: the run's next append is refused, and ends it
            log.warning("the run on session %r of user %r lost its lease", session.id, session.user_id)
            return
        except Exception:
            log.warning("could not renew the lease of session %r; trying again", session.id, exc_info=True)
        self._handle = asyncio.get_running_loop().call_later(self._store.lease_ttl / 3, self._due)

    def cancel(self) -> None:
        self._handle.cancel()
        if self._task is not None:
            self._task.cancel()
