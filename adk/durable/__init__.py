"""Durable runs on DBOS (extra `dbos`): a run is a workflow, each model attempt and tool call a
step, recovered by the next worker with the same executor id (docs/durable.md).

`import adk` does not import this package; importing it does not import DBOS either, until a
`DurableRunner` is made or `launch` is called.
"""

from adk.durable.launch import DurableError, shutdown
from adk.durable.replay import WorkflowMismatchError
from adk.durable.runner import DurableRunner, RunHandle, launch, workflow_id
from adk.durable.steps import DurableSteps, ToolInterruptedError, make_durable

__all__ = [
    "DurableError",
    "DurableRunner",
    "DurableSteps",
    "RunHandle",
    "ToolInterruptedError",
    "WorkflowMismatchError",
    "launch",
    "make_durable",
    "shutdown",
    "workflow_id",
]
