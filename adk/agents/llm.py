"""`LlmAgent`: calls a model, runs the tools it asks for, and loops until it answers.

This module holds the agent's configuration (its model, tools, transfers, output); its run is
steps (adk/agents/llm_steps.py): a model call (adk/agents/model_call.py), a batch of tool calls
(adk/agents/tool_call.py), a hand-over. Each model call and each tool call is one envelope
(docs/recovery.md): `before_*` once, attempts inside (retried as the `on_*_error` chain and the
`RetryPolicy` decide), `after_*` once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from typing import Any

from adk.agents.base import BaseAgent
from adk.agents.llm_steps import LlmSteps
from adk.agents.metering import ModelMeter, meter_of
from adk.agents.output import CorrectOutput, Output
from adk.agents.steps import Driver, Steps
from adk.agents.tool import AgentTool
from adk.agents.transfer import TRANSFER_TOOL, TransferTool, transfer_targets
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.compaction import check_context
from adk.context import AgentContext
from adk.errors import MaxIterationsExceeded
from adk.events import Event
from adk.models.base import Declared, Model
from adk.models.resolve import resolve_model
from adk.recovery import RetryPolicy, policy_callbacks
from adk.tools import BaseTool, FunctionTool, Toolset

__all__ = ["LlmAgent", "MaxIterationsExceeded"]

log = logging.getLogger(__name__)


class LlmAgent(BaseAgent):
    """An agent that calls `model` with `instruction` and the conversation, and runs `tools`.

    Tools are `BaseTool`s, plain typed functions (wrapped in a `FunctionTool`) or agents
    (wrapped in an `AgentTool`). With `sub_agents`, or under an `LlmAgent` parent, the model is
    offered `transfer_to_agent` (docs/agents.md). With `output_type`, the final answer is JSON
    of that type, validated, and corrected up to `output_retries` times; `output_key` stores it
    (or, without a type, the answer's text) in session state.

    The tool calls of one response run concurrently; their results go back in call order, and
    one failing does not cancel the others. `max_iterations` bounds the model↔tool round trips.
    `max_context_tokens`, the model's context, starts a `Compact` before a request outgrows it.
    """

    transfers = True

    def __init__(
        self,
        name: str,
        *,
        model: Model | str,
        instruction: str = "",
        tools: Sequence[BaseTool | Toolset | BaseAgent | Callable[..., Any]] = (),
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        max_iterations: int = 10,
        retry_policy: RetryPolicy | None = None,
        description: str = "",
        sub_agents: Sequence[BaseAgent] = (),
        disallow_transfer_to_parent: bool = False,
        disallow_transfer_to_peers: bool = False,
        output_type: type[Any] | None = None,
        output_key: str | None = None,
        output_retries: int = 2,
        max_context_tokens: int | None = None,
    ) -> None:
        self.disallow_transfer_to_parent = disallow_transfer_to_parent
        self.disallow_transfer_to_peers = disallow_transfer_to_peers
        super().__init__(name, description=description, callbacks=callbacks, sub_agents=sub_agents)
        if max_iterations < 1:
            raise ValueError(f"agent {name!r}: max_iterations must be at least 1, got {max_iterations}")
        if output_retries < 0:
            raise ValueError(f"agent {name!r}: output_retries must be 0 or more, got {output_retries}")
        self.model = resolve_model(model, f"LlmAgent {name!r} model=")
        """The model; a string such as `openai:gpt-4o-mini` is made into one (adk.models.resolve)."""
        self.instruction = instruction
        self.toolsets = [t for t in tools if isinstance(t, Toolset)]
        """Sources of tools listed before each model call (`adk.mcp.McpToolset`)."""
        made = [
            t if isinstance(t, BaseTool) else AgentTool(t) if isinstance(t, BaseAgent) else FunctionTool(t)
            for t in tools
            if not isinstance(t, Toolset)
        ]
        self._own_tools = self.tools = {t.name: t for t in made}
        if len(self.tools) != len(made):
            raise ValueError(f"agent {name!r} has two tools with the same name")
        if TRANSFER_TOOL in self.tools:
            raise ValueError(f"agent {name!r}: the tool name {TRANSFER_TOOL!r} is kept for transfers")
        self.max_iterations = max_iterations
        self.max_context_tokens = check_context(name, max_context_tokens, self.callbacks.objects, self.model)
        """The model's context, in tokens (None: the model's `context_window`, if any): a `Compact`'s
        default threshold, and what the default recovery of an overflow keeps (docs/context.md)."""
        self.retry_policy = retry_policy
        self._output = Output(name, output_type, output_key) if output_type or output_key else None
        self._correct = Callbacks.of([CorrectOutput(name, output_retries)]) if output_type else Callbacks.of()
        self._relays = any(isinstance(t, AgentTool) for t in made) or any(
            getattr(t, "relays", 0) for t in tools
        )
        """Whether some tool is an agent (or a toolset that `relays`: MCP progress), whose events stream
        out while the tool calls run."""
        self._transfer: TransferTool | None = None
        self._set_transfer()
        self._stepped = type(self)._run_body is LlmAgent._run_body
        """Whether its body may be run as steps (`_steps`): its class does not change it."""
        self._recovery: tuple[Callbacks, RetryPolicy, tuple[Callbacks, bool, ModelMeter | None]] | None = None
        """The last (hooks, policy, what `recovery` gives for them): the same for every run without
        run callbacks."""

    def _adopted(self) -> None:
        self._set_transfer()

    def _set_transfer(self) -> None:
        """Offer `transfer_to_agent` if this agent can reach another (again when it gets a parent)."""
        own = self._own_tools
        own.pop(TRANSFER_TOOL, None)
        targets = transfer_targets(self)
        self._transfer = TransferTool(self, targets) if targets else None
        if self._transfer is not None:
            own[TRANSFER_TOOL] = self._transfer
        self.tools = own
        self._declarations = Declared(t.declaration for t in own.values())

    async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
        driver = Driver(LlmSteps(self, ctx, ctx.invocation.hooks_for(self)))
        try:
            while not driver.over:
                for event in await driver.batch():
                    yield event
        finally:
            await driver.aclose()  # now, when the caller stops mid-stream, not at gc

    def _steps(self, ctx: AgentContext, hooks: Callbacks) -> Steps | None:
        return LlmSteps(self, ctx, hooks) if self._stepped else None

    def result_of(self, answer: Event) -> Any:
        """Its final answer's text or, with an `output_type`, the answer's value, validated."""
        if self._output is not None and self._output.type:
            return self._output.check(answer)
        return answer.content

    def recovery(self, hooks: Callbacks, policy: RetryPolicy) -> tuple[Callbacks, bool, ModelMeter | None]:
        """The callbacks of a run's model and tool calls (`hooks`, output correction, `policy`),
        whether it has no model hooks, and its meter (adk.agents.metering): the same for every
        run without run callbacks."""
        cached = self._recovery
        if cached is not None and cached[0] is hooks and cached[1] is policy:
            return cached[2]  # the same tuple: none is made per run
        # concatenating on every run would cost more than the callbacks themselves
        recovery = hooks + self._correct + policy_callbacks(policy)
        # Without model hooks a call makes its context and Attempts only if it fails or streams.
        bare = not recovery.get("before_model") and not recovery.get("after_model")
        found = (recovery, bare, meter_of(recovery.objects))
        self._recovery = (hooks, policy, found)
        return found

    async def list_tools(self) -> None:
        """The agent's own tools and its toolsets' now; a toolset that fails is left out, with a warning."""
        tools = dict(self._own_tools)
        for toolset in self.toolsets:
            try:
                listed = await toolset.get_tools()
            except Exception as e:
                log.warning("agent %r goes on without the tools of %r: %s", self.name, toolset.name, e)
                continue
            for t in listed:
                tools.setdefault(t.name, t)
        self.tools = tools
        self._declarations = Declared(t.declaration for t in tools.values())
