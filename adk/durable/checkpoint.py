"""One DBOS step, as a durable run makes them (steps.py, hooks.py, budgets.py, replay.py), and
the order of a run's steps across its lanes.

DBOS numbers a workflow's steps in the order they start, and on recovery hands each step the
output recorded under its number (refusing one of another name). Code on one lane starts its
steps in the same order every time; concurrent lanes (adk.agents.checkpoints: a `ParallelAgent`'s
children, the calls of one response) need not. So a step's name carries its lane
(`adk.model:gpt@/research`), and a recovered run's `StepOrder` starts each step at its recorded
turn: a lane's next recorded step when the run reaches its number; a step its lane never
recorded (one made after the crash) at a number nothing was recorded under (a step in flight at
the crash) or past the record. A run whose steps are all on its own lane reads no record.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from typing import TYPE_CHECKING, Any

from adk.agents.checkpoints import current_lane
from adk.errors import WorkflowMismatchError

if TYPE_CHECKING:
    from dbos import StepOptions, StepReservation

__all__ = ["StepOrder", "reserved", "step", "step_options", "step_order"]


step_order: contextvars.ContextVar[StepOrder | None] = contextvars.ContextVar("adk_step_order", default=None)
"""The order of the steps of the durable run going on (set for its workflow: runner.py)."""


def step_options(name: str) -> StepOptions:
    """A step that DBOS never retries: adk's own recovery (`on_model_error`, the retry policy)
    decides, and each attempt it makes is a step of its own."""
    return {"name": name, "retries_allowed": False}


async def step(name: str, body: Any, *args: Any) -> Any:
    """`body(*args)` as the DBOS step `name` (with the lane it runs on); outside a workflow, or
    inside a step (an MCP server's sampling during a tool call), simply called."""
    from dbos import DBOS

    if step_order.get() is None or DBOS.step_id is not None:
        return await DBOS.run_step_async(step_options(name), body, *args)
    reservation, name = await reserved(name)
    return await reservation.run_async(step_options(name), body, *args)


async def reserved(name: str) -> tuple[StepReservation, str]:
    """The number step `name` starts under, at its turn on its lane, and its name with the lane:
    for a step that runs as a task of its own (a streamed attempt, the stream's writer)."""
    from dbos import DBOS

    order = step_order.get()
    if order is None:
        return DBOS.reserve_step(), name
    lane = current_lane()
    if lane:
        name = f"{name}@{lane}"
    return await order.reserve(name, lane), name


class StepOrder:
    """Which step of a workflow's execution starts next, under which number."""

    def __init__(self, workflow_id: str) -> None:
        self.workflow_id = workflow_id
        self.next = 1
        """The number the next step takes (DBOS numbers a workflow's from 1)."""
        self.recorded: dict[int, str] | None = None
        """The names recorded under the numbers from `next` on; None until a lane needs them."""
        self.lanes: dict[str, deque[int]] = {}
        """Each lane's recorded numbers not taken yet, in order."""
        self.turns = asyncio.Condition()

    async def reserve(self, name: str, lane: str) -> StepReservation:
        """The number step `name` of `lane` starts under, once it is its turn."""
        if self.recorded is None and not lane and not self.turns.locked():
            return self._take(lane)  # the run's own lane, before any other made a step: in order
        async with self.turns:
            if self.recorded is None:
                await self._read()
            await self.turns.wait_for(lambda: self._due(name, lane))
            reservation = self._take(lane)
            self.turns.notify_all()
        return reservation

    def _take(self, lane: str) -> StepReservation:
        from dbos import DBOS

        reservation = DBOS.reserve_step()
        self.next = reservation.step_id + 1
        mine = self.lanes.get(lane)
        if mine and mine[0] == reservation.step_id:
            mine.popleft()
        return reservation

    def _due(self, name: str, lane: str) -> bool:
        recorded = self.recorded or {}
        mine = self.lanes.get(lane)
        if not mine:  # a step made after the crash: at a free number
            return self.next not in recorded
        number = mine[0]
        if recorded[number] != name:
            raise WorkflowMismatchError(
                f"workflow {self.workflow_id!r} no longer matches its record: step {number} was"
                f" {recorded[number]!r}, the run now makes {name!r} there (was the agent"
                " changed?); nothing was run again"
            )
        return number == self.next

    async def _read(self) -> None:
        """The record of the steps from `next` on (read aside of the workflow: not a step itself)."""
        from dbos import DBOS

        listing = DBOS.list_workflow_steps_async(self.workflow_id, load_output=False)
        steps = await asyncio.get_running_loop().create_task(listing, context=contextvars.Context())
        self.recorded = {s["function_id"]: s["function_name"] for s in steps if s["function_id"] >= self.next}
        for number in sorted(self.recorded):
            self.lanes.setdefault(_lane_of(self.recorded[number]), deque()).append(number)


def _lane_of(name: str) -> str:
    """The lane in a step's name (`adk.tool:add@/a/1`: `/a/1`); "" for the run's own."""
    at = name.rfind("@/")
    return name[at + 1 :] if at >= 0 else ""
