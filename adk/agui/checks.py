"""What the AG-UI endpoint checks in a request beyond its schema: ids of a bounded length, and a
`state` that writes only the thread's own keys.

A client's state is the session's own: `app:` keys are shared by every user, `user:` keys by
every thread of the user, `temp:` keys live in one run on the server, so a client that could
write them would reach other threads (one identity setting `app:is_admin` for all). The
STATE_SNAPSHOT a client is sent holds the scoped keys too, and clients send their state back
with each request: a scoped key whose value is the session's current one is that echo, not a
write, and is passed over; any other scoped key is refused, naming it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from adk.sessions.base import APP_PREFIX, TEMP_PREFIX, USER_PREFIX

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput

__all__ = ["MAX_ID", "check_ids", "client_state_delta"]

MAX_ID = 256
"""The longest id a client may send (a thread, run, message, tool call or interrupt id), in
characters: ids are stored (a thread's is the session id, a run's is on every event) and echoed."""

_SCOPES = {
    APP_PREFIX: "app: keys are shared by every user",
    USER_PREFIX: "user: keys are shared by every thread of the user",
    TEMP_PREFIX: "temp: keys live in one run, on the server",
}


def check_ids(run: RunAgentInput) -> None:
    """Refuse (ValueError naming it) an id of `run` longer than `MAX_ID` characters."""
    for where, value in _ids(run):
        if len(value) > MAX_ID:
            raise ValueError(f"{where}: an id of at most {MAX_ID} characters, not {len(value)}")


def _ids(run: RunAgentInput) -> Iterator[tuple[str, str]]:
    """Every id in `run`, with where it is (as the client wrote it: camelCase)."""
    yield "threadId", run.thread_id
    yield "runId", run.run_id
    if run.parent_run_id is not None:
        yield "parentRunId", run.parent_run_id
    for i, message in enumerate(run.messages):
        yield f"messages.{i}.id", message.id
        if message.role == "tool":
            yield f"messages.{i}.toolCallId", message.tool_call_id
        elif message.role == "assistant":
            for j, call in enumerate(message.tool_calls or ()):
                yield f"messages.{i}.toolCalls.{j}.id", call.id
    for i, entry in enumerate(run.resume or ()):
        yield f"resume.{i}.interruptId", entry.interrupt_id


def client_state_delta(client: Mapping[str, Any], session: Mapping[str, Any]) -> dict[str, Any]:
    """The change `client` (a request's `state`) makes to the session's `session` state: its keys
    whose values differ (None deletes a key). A scoped key that differs is refused (ValueError
    naming it); one equal to the session's value (None: absent) is an echo, left out."""
    missing = object()
    delta: dict[str, Any] = {}
    for key, value in client.items():
        current = session.get(key, missing)
        if current == value or (current is missing and value is None and key.startswith(tuple(_SCOPES))):
            continue
        for prefix, why in _SCOPES.items():
            if key.startswith(prefix):
                raise ValueError(
                    f"state[{key!r}]: a client writes only its thread's own keys ({why}); send a"
                    " scoped key back as the last STATE_SNAPSHOT had it, or leave it out"
                )
        delta[key] = value
    return delta
