"""One DBOS step, as the durable wrappers make them (steps.py, hooks.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbos import StepOptions

__all__ = ["step", "step_options"]


def step_options(name: str) -> StepOptions:
    """A step that DBOS never retries: adk's own recovery (`on_model_error`, the retry policy)
    decides, and each attempt it makes is a step of its own."""
    return {"name": name, "retries_allowed": False}


async def step(name: str, body: Any, *args: Any) -> Any:
    """`body(*args)` as the DBOS step `name` (outside a workflow, simply called)."""
    from dbos import DBOS

    return await DBOS.run_step_async(step_options(name), body, *args)
