"""Transfer between agents (docs/agents.md): the tool, the hooks around it, the active agent."""

from __future__ import annotations

from typing import Any

import pytest

from adk import (
    AgentContext,
    Cont,
    Halt,
    LlmAgent,
    ModelContext,
    ObjectType,
    Runner,
    SequentialAgent,
    ToolContext,
)
from adk.agents import transfer
from adk.testing import ScriptedModel, call_tool, transfer_to
from tests._runtime import Recorder, call, calls, run, shapes

TRANSFER = "transfer_to_agent"


class Trace(Recorder):
    """Records `(hook, agent)`, and the tool too for the tool hooks."""

    def record(self, hook: str, ctx: AgentContext | ModelContext | ToolContext) -> None:
        if isinstance(ctx, ToolContext):
            self.trace.append((hook, ctx.agent.name, ctx.tool.name))
        else:
            self.trace.append((hook, ctx.agent.name))


def transfer_result(call_id: str, target: str, author: str) -> tuple[Any, ...]:
    return ("tool", author, TRANSFER, call_id, f"Transferred to agent {target!r}.")


async def test_a_transfer_chain_root_billing_root_runs_every_hook_in_order() -> None:
    trace: list[tuple[str, ...]] = []
    billing = LlmAgent(
        "billing", model=ScriptedModel([transfer_to("root", call_id="c2")]), description="Invoices."
    )
    root_model = ScriptedModel([transfer_to("billing", call_id="c1"), "Back at the root."])
    root = LlmAgent("root", model=root_model, sub_agents=[billing])
    runner = Runner(root, callbacks=[Trace("", trace)])

    events = await run(runner, "Is my invoice paid?")

    assert [(e.object, e.author) for e in events] == [
        (ObjectType.CHAT_COMPLETION, "user"),
        (ObjectType.CHAT_COMPLETION, "root"),
        (ObjectType.TOOL_RESPONSE, "root"),
        (ObjectType.AGENT_TRANSFER, "root"),
        (ObjectType.CHAT_COMPLETION, "billing"),
        (ObjectType.TOOL_RESPONSE, "billing"),
        (ObjectType.AGENT_TRANSFER, "billing"),
        (ObjectType.CHAT_COMPLETION, "root"),
        (ObjectType.RUNNER_COMPLETION, "root"),
    ]
    assert [e.actions.transfer_to_agent for e in events if e.object == ObjectType.AGENT_TRANSFER] == [
        "billing",
        "root",
    ]
    assert events[-2].content == "Back at the root."
    assert trace == [
        ("before_agent", "root"),
        ("before_model", "root"),
        ("after_model", "root"),
        ("before_tool", "root", TRANSFER),
        ("after_tool", "root", TRANSFER),
        ("before_agent", "billing"),
        ("before_model", "billing"),
        ("after_model", "billing"),
        ("before_tool", "billing", TRANSFER),
        ("after_tool", "billing", TRANSFER),
        ("before_agent", "root"),
        ("before_model", "root"),
        ("after_model", "root"),
        ("after_agent", "root"),
        ("after_agent", "billing"),
        ("after_agent", "root"),
    ]
    # Each agent saw the conversation so far, the other's turns included.
    second = root_model.requests[1].messages
    assert [(m.role, m.name or m.content) for m in second] == [
        ("user", "Is my invoice paid?"),
        ("assistant", ""),
        ("tool", TRANSFER),
        ("assistant", ""),
        ("tool", TRANSFER),
    ]
    stored = await runner.session_service.get("u", "s")
    assert stored is not None
    assert [e.id for e in stored.events] == [e.id for e in events]


async def test_the_tool_names_the_agents_in_reach_with_their_descriptions() -> None:
    billing = LlmAgent("billing", model=ScriptedModel([]), description="Invoices and refunds.")
    support = LlmAgent("support", model=ScriptedModel([]), disallow_transfer_to_peers=True)
    root = LlmAgent("root", model=ScriptedModel([]), sub_agents=[billing, support], description="Triage.")
    loner = LlmAgent("loner", model=ScriptedModel([]))

    [declaration] = [d for d in root._declarations if d.name == TRANSFER]
    assert declaration.parameters["properties"]["agent_name"]["enum"] == ["billing", "support"]
    assert "- billing: Invoices and refunds.\n- support" in declaration.description
    assert billing.tools[TRANSFER].declaration.parameters["properties"]["agent_name"]["enum"] == [
        "root",
        "support",
    ]
    assert support.tools[TRANSFER].declaration.parameters["properties"]["agent_name"]["enum"] == ["root"]
    assert TRANSFER not in loner.tools
    assert billing.parent_agent is root
    assert billing.root_agent is root
    assert root.find_agent("support") is support
    assert root.find_agent("nobody") is None


async def test_before_tool_refuses_a_transfer_and_the_model_answers_itself() -> None:
    class NoBilling:
        def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
            if ctx.tool.name == TRANSFER and ctx.args == {"agent_name": "billing"}:
                return Halt("Transfer refused: billing is closed today.")
            return Cont(ctx)

    billing_model = ScriptedModel([])
    root_model = ScriptedModel([transfer_to("billing", call_id="c1"), "I will help you myself."])
    root = LlmAgent(
        "root",
        model=root_model,
        sub_agents=[LlmAgent("billing", model=billing_model)],
        callbacks=[NoBilling()],
    )

    assert await shapes(Runner(root)) == [
        ("model", "user", "hi"),
        ("model", "root", "", [(TRANSFER, '{"agent_name":"billing"}')]),
        ("tool", "root", TRANSFER, "c1", "Transfer refused: billing is closed today."),
        ("model", "root", "I will help you myself."),
        ("done", "root"),
    ]
    assert billing_model.requests == []


async def test_before_agent_halting_the_target_refuses_the_transfer_and_ends_the_invocation() -> None:
    trace: list[tuple[str, ...]] = []

    class Closed(Trace):
        def before_agent(self, ctx: AgentContext) -> Cont[AgentContext] | Halt[str]:
            self.record("before_agent", ctx)
            return Halt("Billing is closed.") if ctx.agent.name == "billing" else Cont(ctx)

    billing_model = ScriptedModel([])
    root = LlmAgent(
        "root",
        model=ScriptedModel([transfer_to("billing", call_id="c1")]),
        sub_agents=[LlmAgent("billing", model=billing_model)],
    )

    assert await shapes(Runner(root, callbacks=[Closed("", trace)])) == [
        ("model", "user", "hi"),
        ("model", "root", "", [(TRANSFER, '{"agent_name":"billing"}')]),
        transfer_result("c1", "billing", "root"),
        (ObjectType.AGENT_TRANSFER, "root"),
        ("model", "billing", "Billing is closed."),
        ("done", "root"),
    ]
    assert billing_model.requests == []
    assert trace == [
        ("before_agent", "root"),
        ("before_model", "root"),
        ("after_model", "root"),
        ("before_tool", "root", TRANSFER),
        ("after_tool", "root", TRANSFER),
        ("before_agent", "billing"),
    ]


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("nobody", "there is no agent of that name"),
        ("root", "disallow_transfer_to_parent is set"),
        ("billing", "it is the agent transferring"),
        ("deep", "it is not a sub-agent, the parent or a peer"),
    ],
)
async def test_a_transfer_out_of_reach_is_a_tool_error_the_model_sees(target: str, why: str) -> None:
    billing_model = ScriptedModel([transfer_to(target, call_id="c1"), "Sorry."])
    billing = LlmAgent("billing", model=billing_model, disallow_transfer_to_parent=True)
    deep = LlmAgent("deep", model=ScriptedModel([]))
    support = LlmAgent("support", model=ScriptedModel([]), sub_agents=[deep])
    root = LlmAgent("root", model=ScriptedModel([]), sub_agents=[billing, support])

    events = await run(Runner(root), agent="billing")

    said = (
        f"Error: TransferError: agent 'billing' cannot transfer to {target!r}: {why};"
        " it may transfer to: support"
    )
    assert [(e.object, e.author, e.content) for e in events[2:]] == [
        (ObjectType.TOOL_RESPONSE, "billing", said),
        (ObjectType.CHAT_COMPLETION, "billing", "Sorry."),
        (ObjectType.RUNNER_COMPLETION, "root", ""),
    ]
    assert events[2].error is not None
    assert (events[2].error.type, events[2].error.where) == ("TransferError", f"tool:{TRANSFER}")
    assert billing_model.requests[1].messages[-1].content == said


async def test_a_transfer_to_a_peer_the_options_forbid_is_a_tool_error_the_model_sees() -> None:
    billing_model = ScriptedModel([transfer_to("support", call_id="c1"), "Sorry."])
    billing = LlmAgent("billing", model=billing_model, disallow_transfer_to_peers=True)
    support_model = ScriptedModel([])
    support = LlmAgent("support", model=support_model)
    root = LlmAgent("root", model=ScriptedModel([]), sub_agents=[billing, support])

    events = await run(Runner(root), agent="billing")

    said = (
        "Error: TransferError: agent 'billing' cannot transfer to 'support': disallow_transfer_to_peers"
        " is set; it may transfer to: root"
    )
    assert [(e.object, e.author, e.content) for e in events[2:]] == [
        (ObjectType.TOOL_RESPONSE, "billing", said),
        (ObjectType.CHAT_COMPLETION, "billing", "Sorry."),
        (ObjectType.RUNNER_COMPLETION, "root", ""),
    ]
    assert billing_model.requests[1].messages[-1].content == said
    assert support_model.requests == []


async def test_a_huge_name_from_the_model_is_cut_short_in_the_error() -> None:
    root_model = ScriptedModel([transfer_to("x" * 100_000, call_id="c1"), "ok"])
    root = LlmAgent("root", model=root_model, sub_agents=[LlmAgent("billing", model=ScriptedModel([]))])

    events = await run(Runner(root))

    assert events[2].content == (
        f"Error: TransferError: agent 'root' cannot transfer to '{'x' * 27}...{'x' * 28}': there is no"
        " agent of that name; it may transfer to: billing"
    )


async def test_arguments_that_are_not_one_agent_name_are_refused() -> None:
    root_model = ScriptedModel([call_tool(TRANSFER, call_id="c1", agent_name=3, why="x"), "ok"])
    root = LlmAgent("root", model=root_model, sub_agents=[LlmAgent("billing", model=ScriptedModel([]))])

    events = await run(Runner(root))

    assert events[2].content == (
        f"Error: ToolArgumentsError: invalid arguments for tool {TRANSFER!r}: argument 'agent_name': a string"
        " is required, got 3; argument 'why': unexpected argument (parameters: 'agent_name')"
    )


async def test_the_next_message_goes_to_the_agent_that_last_answered() -> None:
    billing_model = ScriptedModel(["Your invoice is paid.", "You are welcome."])
    root_model = ScriptedModel([transfer_to("billing", call_id="c1"), "Hello again."])
    root = LlmAgent("root", model=root_model, sub_agents=[LlmAgent("billing", model=billing_model)])
    runner = Runner(root)

    await run(runner, "Is my invoice paid?")
    second = await shapes(runner, "Thanks!")
    third = await shapes(runner, "Hi root", agent="root")

    assert second == [
        ("model", "user", "Thanks!"),
        ("model", "billing", "You are welcome."),
        ("done", "root"),
    ]
    assert third == [("model", "user", "Hi root"), ("model", "root", "Hello again."), ("done", "root")]
    # The history billing saw on its second turn: the whole conversation.
    assert [m.content for m in billing_model.requests[1].messages if m.role == "user"] == [
        "Is my invoice paid?",
        "Thanks!",
    ]
    with pytest.raises(ValueError, match="run\\(agent='nobody'\\): 'root' has no agent of that name"):
        runner.run("u", "s", "hi", agent="nobody")


async def test_an_agent_that_may_not_transfer_back_up_does_not_keep_the_conversation() -> None:
    sealed = LlmAgent("sealed", model=ScriptedModel(["Done."]), disallow_transfer_to_parent=True)
    root_model = ScriptedModel([transfer_to("sealed"), "Root again."])
    runner = Runner(LlmAgent("root", model=root_model, sub_agents=[sealed]))

    await run(runner)
    assert await shapes(runner, "next") == [
        ("model", "user", "next"),
        ("model", "root", "Root again."),
        ("done", "root"),
    ]


async def test_a_transfer_inside_a_workflow_runs_the_target_and_the_workflow_goes_on() -> None:
    fixer = LlmAgent("fixer", model=ScriptedModel(["Fixed.", "Fixed again."]))
    triage = LlmAgent(
        "triage",
        model=ScriptedModel([transfer_to("fixer", call_id="c1"), "Nothing to fix."]),
        sub_agents=[fixer],
    )
    reporter = LlmAgent("reporter", model=ScriptedModel(["Report sent.", "Second report."]))
    pipeline = SequentialAgent("pipeline", sub_agents=[triage, reporter])
    runner = Runner(pipeline)

    assert await shapes(runner) == [
        ("model", "user", "hi"),
        ("model", "triage", "", [(TRANSFER, '{"agent_name":"fixer"}')]),
        transfer_result("c1", "fixer", "triage"),
        (ObjectType.AGENT_TRANSFER, "triage"),
        ("model", "fixer", "Fixed."),
        ("model", "reporter", "Report sent."),
        ("done", "pipeline"),
    ]
    # Under a workflow agent, an agent reaches its own sub-agents only.
    assert triage.tools[TRANSFER].declaration.parameters["properties"]["agent_name"]["enum"] == ["fixer"]
    assert TRANSFER not in reporter.tools
    # The workflow's children do not keep the conversation: the next message goes to the root.
    assert (await shapes(runner, "again"))[1] == ("model", "triage", "Nothing to fix.")


async def test_of_several_calls_in_one_answer_all_run_and_the_first_transfer_wins() -> None:
    looked: list[str] = []

    def lookup(order: str) -> str:
        """Look an order up."""
        looked.append(order)
        return "shipped"

    a = LlmAgent("a", model=ScriptedModel(["A here."]))
    b = LlmAgent("b", model=ScriptedModel([]))
    three = calls(
        call("lookup", "c0", order="42"),
        call(TRANSFER, "c1", agent_name="a"),
        call(TRANSFER, "c2", agent_name="b"),
    )
    both = ScriptedModel([three])
    root = LlmAgent("root", model=both, tools=[lookup], sub_agents=[a, b])

    shaped = await shapes(Runner(root))

    assert looked == ["42"]
    assert shaped[2:] == [
        ("tool", "root", "lookup", "c0", "shipped"),
        transfer_result("c1", "a", "root"),
        transfer_result("c2", "b", "root"),
        (ObjectType.AGENT_TRANSFER, "root"),
        ("model", "a", "A here."),
        ("done", "root"),
    ]


async def test_transfers_are_bounded_per_invocation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transfer, "MAX_TRANSFERS", 2)
    ping = ScriptedModel(
        [transfer_to("pong", call_id="p1"), transfer_to("pong", call_id="p2"), "Ping stops."]
    )
    pong = LlmAgent("pong", model=ScriptedModel([transfer_to("ping", call_id="q1")]))
    runner = Runner(LlmAgent("ping", model=ping, sub_agents=[pong]))

    events = await run(runner)

    contents = [e.content for e in events if e.object == ObjectType.TOOL_RESPONSE]
    assert contents == [
        "Transferred to agent 'pong'.",
        "Transferred to agent 'ping'.",
        "Error: TransferError: this invocation already made 2 transfers, the most one may (MAX_TRANSFERS);"
        " answer without transferring",
    ]
    assert events[-2].content == "Ping stops."


async def test_the_transfer_event_is_stored_and_reads_back(tmp_path: Any) -> None:
    from adk.sessions.sqlite import SqliteSessionService

    root = LlmAgent(
        "root",
        model=ScriptedModel([transfer_to("billing", call_id="c1")]),
        sub_agents=[LlmAgent("billing", model=ScriptedModel(["Paid."]))],
    )
    async with SqliteSessionService(tmp_path / "s.sqlite3") as store:
        events = await run(Runner(root, session_service=store))
        stored = await store.get("u", "s")
    assert stored is not None
    assert stored.events == events
    [moved] = [e for e in stored.events if e.object == ObjectType.AGENT_TRANSFER]
    assert (moved.author, moved.actions.transfer_to_agent, moved.choices) == ("root", "billing", [])


def test_bad_agent_trees_are_refused_where_they_are_made() -> None:
    def agent(name: str, **kw: Any) -> LlmAgent:
        return LlmAgent(name, model=ScriptedModel([]), **kw)

    with pytest.raises(ValueError, match="agent 'root': sub_agents has two agents named 'a'"):
        agent("root", sub_agents=[agent("a"), agent("a")])
    shared = agent("shared")
    agent("first", sub_agents=[shared])
    with pytest.raises(
        ValueError,
        match=r"^agent 'second': sub-agent 'shared' is already a sub-agent of 'first'; an agent has one",
    ):
        SequentialAgent("second", sub_agents=[shared])
    with pytest.raises(TypeError, match="agent 'root': sub_agents holds 'a', which is not an agent"):
        agent("root", sub_agents=["a"])
    with pytest.raises(
        ValueError, match="agent 'root': the tool name 'transfer_to_agent' is kept for transfers"
    ):
        agent("root", tools=[transfer.TransferTool(agent("x"), [])])
