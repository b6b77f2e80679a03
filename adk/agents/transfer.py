"""Transfer between agents, as Google ADK users know it.

An `LlmAgent` that can reach other agents (its sub-agents; its parent and its peers when its
parent is an `LlmAgent`, unless `disallow_transfer_to_parent` / `disallow_transfer_to_peers`)
offers the model a `transfer_to_agent(agent_name)` tool. The call is a tool call like any
other: `before_tool` may refuse it (`Halt`), and a name out of reach is a `TransferError` the
model sees. When a response's calls are done and one of them transferred, an `agent.transfer`
event goes out and the target runs at once, in the same invocation and on the same branch, with
its own `before_agent` / `after_agent` and model and tool hooks; the transferring agent's turn
ends with it.

The session remembers the active agent: the next message goes to the agent that last answered,
if it could hand the conversation back up to the root by transfers, else to the root.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, TypeGuard

from adk.agents.base import BaseAgent
from adk.agents.tool import string_argument
from adk.callbacks.registry import short_repr
from adk.errors import TransferError
from adk.events import Event, EventActions, ObjectType, ToolDeclaration
from adk.tools import BaseTool

if TYPE_CHECKING:
    from adk.agents.llm import LlmAgent
    from adk.context import AgentContext, Invocation, ToolContext
    from adk.sessions.base import Session

__all__ = [
    "MAX_TRANSFERS",
    "TRANSFER_TOOL",
    "TransferTool",
    "active_agent",
    "hand_over",
    "transfer_targets",
    "transferred",
]

TRANSFER_TOOL = "transfer_to_agent"
MAX_TRANSFERS = 20
"""Transfers one invocation may make: agents handing a question back and forth end there."""


def transfer_targets(agent: LlmAgent) -> list[BaseAgent]:
    """The agents `agent` may transfer to: its sub-agents, then its parent and peers if allowed.

    The parent and the peers only when the parent is an `LlmAgent`: a workflow agent decides
    itself which of its sub-agents runs when.
    """
    targets = list(agent.sub_agents)
    parent = agent.parent_agent
    if _is_llm(parent):
        if not agent.disallow_transfer_to_parent:
            targets.append(parent)
        if not agent.disallow_transfer_to_peers:
            targets.extend(peer for peer in parent.sub_agents if peer is not agent)
    return targets


def _is_llm(agent: BaseAgent | None) -> TypeGuard[LlmAgent]:
    """Whether `agent` takes part in transfers (`BaseAgent.transfers`): an `LlmAgent`."""
    return agent is not None and agent.transfers


def _reaches_parent(agent: LlmAgent) -> bool:
    """Whether `agent` may transfer to its parent: it has one, an `LlmAgent`, and may go back to it."""
    return _is_llm(agent.parent_agent) and not agent.disallow_transfer_to_parent


class TransferTool(BaseTool):
    """`transfer_to_agent(agent_name)`: hand the conversation to one of `targets`."""

    name = TRANSFER_TOOL
    idempotent = True  # it only notes where the turn goes: a resumed run makes a call cut short again
    checkpointed = False  # for the same reason, a recovered durable run makes it again

    def __init__(self, agent: LlmAgent, targets: Sequence[BaseAgent]) -> None:
        self.agent = agent
        by_name: dict[str, BaseAgent] = {}
        for target in targets:  # the first of a name wins: a sub-agent before a parent of that name
            by_name.setdefault(target.name, target)
        self.targets: Mapping[str, BaseAgent] = by_name
        listed = "\n".join(
            f"- {t.name}: {t.description}" if t.description else f"- {t.name}" for t in self.targets.values()
        )
        self.description = (
            "Transfer the conversation to another agent, when that agent is better suited to answer"
            f" (say nothing else in that answer). The agents:\n{listed}"
        )
        self._declaration = ToolDeclaration(
            name=self.name,
            description=self.description,
            parameters={
                "type": "object",
                "properties": {
                    "agent_name": {
                        "type": "string",
                        "enum": list(self.targets),
                        "description": "The name of the agent to transfer to.",
                    }
                },
                "required": ["agent_name"],
            },
        )

    @property
    def declaration(self) -> ToolDeclaration:
        return self._declaration

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {"agent_name": string_argument(self.name, args, "agent_name")}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        name = args["agent_name"]
        target = self.targets.get(name)
        if target is None:
            raise TransferError(self._unreachable(name))
        invocation = ctx.invocation
        made = invocation._transfers_made
        if made >= MAX_TRANSFERS:
            raise TransferError(
                f"this invocation already made {made} transfers, the most one may"
                f" (MAX_TRANSFERS); answer without transferring"
            )
        invocation._transfers_made = made + 1
        _transfers(invocation)[(ctx.branch, ctx.tool_call_id)] = target
        return f"Transferred to agent {name!r}."

    def _unreachable(self, name: str) -> str:
        agent = self.agent
        reachable = ", ".join(self.targets)
        parent = agent.parent_agent
        if name == agent.name:
            why = "it is the agent transferring"
        elif parent is not None and name == parent.name and agent.disallow_transfer_to_parent:
            why = "disallow_transfer_to_parent is set"
        elif (
            parent is not None
            and agent.disallow_transfer_to_peers
            and any(p.name == name for p in parent.sub_agents)
        ):
            why = "disallow_transfer_to_peers is set"
        elif agent.root_agent.find_agent(name) is not None:
            why = "it is not a sub-agent, the parent or a peer"
        else:
            why = "there is no agent of that name"
        named = short_repr(name)  # the model's text: an attacker's, perhaps, and of any length
        return f"agent {agent.name!r} cannot transfer to {named}: {why}; it may transfer to: {reachable}"

    def __repr__(self) -> str:
        return f"TransferTool({self.agent.name!r} -> {', '.join(self.targets)})"


def _transfers(invocation: Invocation) -> dict[tuple[str, str], BaseAgent]:
    """The transfers made in `invocation` whose batch of calls is not yet over, by the branch and
    id of the call that made each."""
    transfers = invocation._transfers
    if transfers is None:
        transfers = invocation._transfers = {}
    return transfers


def transferred(invocation: Invocation, results: Sequence[Event]) -> BaseAgent | None:
    """The agent the first of a batch's calls (in call order) that transferred hands over to, if any.

    A call transferred when its envelope completed as a transfer: the tool ran, and the call's
    result has no error (a `Halt`, a failure, a `Fallback` or a failing `after_tool` make none).
    Each such result is marked with `actions.transfer_to_agent`: a resumed invocation goes by the
    mark alone (adk.agents.resume), never by a result's text. The batch's transfers are taken:
    a call id is the model's, which a later call (or one on another branch) may have too.
    """
    transfers = invocation._transfers
    if not transfers:
        return None
    first = None
    for result in results:
        message = result.message
        target = (
            transfers.pop((result.branch, message.tool_call_id or ""), None) if message is not None else None
        )
        if target is not None and result.error is None:
            result.actions.transfer_to_agent = target.name
            first = first or target
    return first


async def hand_over(ctx: AgentContext, target: BaseAgent) -> AsyncGenerator[Event, None]:
    """The `agent.transfer` event, then the events of `target`, run at once on the same branch."""
    yield Event.new(
        ctx.invocation_id,
        ctx.agent.name,
        branch=ctx.branch,
        object=ObjectType.AGENT_TRANSFER,
        actions=EventActions(transfer_to_agent=target.name),
    )
    async with aclosing(target.run(ctx.invocation, ctx.branch)) as events:
        async for event in events:
            yield event


def active_agent(root: BaseAgent, session: Session) -> BaseAgent:
    """The agent that takes the session's next message: the one that last answered, if it may.

    It may if it can transfer to its parent, and that one to its own, up to `root`: the
    conversation can find its way back. Otherwise the root takes the message.
    Answers on other branches (parallel agents, agent tools) are not the conversation's.
    """
    if not root.sub_agents:
        return root
    for event in reversed(session.events):
        if event.branch or event.author == "user" or event.is_partial:
            continue
        message = event.message
        if message is None or message.role != "assistant":
            continue
        if event.author == root.name:
            return root
        agent = root.find_agent(event.author)
        if agent is None:
            continue
        up: BaseAgent | None = agent
        while _is_llm(up) and up is not root and _reaches_parent(up):
            up = up.parent_agent
        if up is root:
            return agent
    return root
