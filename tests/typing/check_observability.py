"""Type-checked only (mypy --strict), never run: the ready-made callbacks register where any callback does."""

from adk import LlmAgent, Runner
from adk.audit import AuditLog
from adk.cli import Display
from adk.telemetry import Tracing
from adk.testing import ScriptedModel

agent = LlmAgent("a", model=ScriptedModel([]), callbacks=[AuditLog(), Tracing()])
runner = Runner(agent, callbacks=[AuditLog, Tracing])  # classes are instantiated once
Runner(agent, callbacks=[Tracing(meter_provider=None, capture_content=True)])
Tracing(None, capture_content="yes")  # type: ignore[arg-type]  # a bool, or None for the environment's
LlmAgent("c", model=ScriptedModel([]), callbacks=[Display()])  # type: ignore[list-item]  # reads events only


class NotACallback:
    def before_mdoel(self) -> None: ...


LlmAgent("b", model=ScriptedModel([]), callbacks=[NotACallback()])  # type: ignore[list-item]
