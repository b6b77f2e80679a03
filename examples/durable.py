"""A durable run on DBOS, without setup: its record and the sessions in SQLite files.

The run is a DBOS workflow; the model's answer and the `book` call are checkpointed steps. Run
it again with the same invocation id and nothing runs again: the room is booked once. Kill the
process mid-run and start it again with the same executor id, and DBOS finishes the run where it
stopped (docs/durable.md). Needs the dbos extra. Run it: python examples/durable.py
"""

import asyncio
import tempfile
from pathlib import Path

from adk import LlmAgent, SqliteSessionService
from adk.durable import DurableRunner, launch, shutdown
from adk.testing import ScriptedModel, call_tool

bookings: list[str] = []


def book(room: str) -> str:
    """Book a room: not idempotent, so a durable run books it at most once.

    Args:
        room: the room's name.
    """
    bookings.append(room)
    return f"booked the {room} room"


def make_agent() -> LlmAgent:
    model = ScriptedModel([call_tool("book", room="blue", call_id="call-1"), "The blue room is yours."])
    return LlmAgent("concierge", model=model, tools=[book])


agent = make_agent()  # for `adk run examples/durable.py` and `adk web` (a plain run there)


async def main(folder: Path) -> list[str]:
    store = SqliteSessionService(folder / "sessions.sqlite3")
    runner = DurableRunner(make_agent(), session_service=store)
    await launch(f"sqlite:///{folder / 'dbos.sqlite'}", runners=[runner], executor_id="example")
    try:
        lines = []
        async for event in runner.run("ada", "trip", "Book me a room", invocation_id="booking-1"):
            if event.message is not None and event.message.content:
                lines.append(f"{event.author}: {event.message.content}")
        again = [e async for e in runner.run("ada", "trip", "Book me a room", invocation_id="booking-1")]
        lines.append(f"the same run again: {len(again)} events; bookings: {bookings}")
        return lines
    finally:
        shutdown()
        store.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        print("\n".join(asyncio.run(main(Path(folder)))))
