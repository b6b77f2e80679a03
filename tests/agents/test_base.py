"""The flow every agent follows: before_agent / after_agent and state deltas (docs/runtime.md)."""

from __future__ import annotations

from typing import Any

from adk.agents import LlmAgent, SequentialAgent
from adk.callbacks.results import Cont, Halt
from adk.context import AgentContext
from adk.events import Message, ObjectType
from adk.runner import Runner
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel
from tests._runtime import Recorder, run, shapes, summary


class HaltAgent:
    def __init__(self, content: Any, agent: str | None = None) -> None:
        self.content = content
        self.agent = agent

    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext] | Halt[Any]:
        if self.agent is None or ctx.agent.name == self.agent:
            return Halt(self.content)
        return Cont(ctx)


async def test_before_agent_halt_emits_one_event_and_ends_the_invocation() -> None:
    trace: list[tuple[str, ...]] = []
    model = ScriptedModel([])
    agent = LlmAgent("root", model=model, callbacks=[HaltAgent("closed today"), Recorder("after", trace)])
    events = await run(Runner(agent))
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "closed today"),
        ("done", "root"),
    ]
    halted = events[1]
    assert halted.author == "root"
    assert halted.done is True
    assert halted.message == Message.assistant("closed today")
    assert model.requests == []
    # the recorder after the halting callback never ran, nor did after_agent
    assert trace == []


async def test_before_agent_halt_with_a_message() -> None:
    message = Message.assistant("from a message")
    agent = LlmAgent("root", model=ScriptedModel([]), callbacks=[HaltAgent(message)])
    events = await run(Runner(agent))
    assert events[1].message == message


async def test_before_agent_halt_in_a_sub_agent_stops_the_sequence() -> None:
    first = ScriptedModel(["one"])
    third = ScriptedModel([])
    trace: list[tuple[str, ...]] = []
    seq = SequentialAgent(
        "seq",
        sub_agents=[
            LlmAgent("a", model=first),
            LlmAgent("b", model=ScriptedModel([]), callbacks=[HaltAgent("stop here")]),
            LlmAgent("c", model=third),
        ],
    )
    runner = Runner(seq, callbacks=[Recorder("r", trace)])
    assert await shapes(runner) == [
        ("model", "user", "hi"),
        ("model", "a", "one"),
        ("model", "b", "stop here"),
        ("done", "seq"),
    ]
    assert third.requests == []
    assert trace == [
        ("r", "before_agent", "seq"),
        ("r", "before_agent", "a"),
        ("r", "before_model", "a"),
        ("r", "after_model", "a"),
        ("r", "after_agent", "a"),
        ("r", "before_agent", "b"),
    ]


async def test_before_agent_cont_runs_the_agent() -> None:
    trace: list[tuple[str, ...]] = []
    agent = LlmAgent("root", model=ScriptedModel(["hello"]), callbacks=[Recorder("cb", trace)])
    assert await shapes(Runner(agent)) == [
        ("model", "user", "hi"),
        ("model", "root", "hello"),
        ("done", "root"),
    ]
    assert trace == [
        ("cb", "before_agent", "root"),
        ("cb", "before_model", "root"),
        ("cb", "after_model", "root"),
        ("cb", "after_agent", "root"),
    ]


class Replace:
    def __init__(self) -> None:
        self.seen: list[Message | None] = []

    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        self.seen.append(output)
        return Message.assistant(f"[{ctx.agent.name}] " + (output.content if output else "nothing"))


class Keep:
    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        return output


async def test_after_agent_replacement_is_emitted_as_a_new_final_event() -> None:
    replace = Replace()
    runner = Runner(LlmAgent("root", model=ScriptedModel(["hello"]), callbacks=[replace]))
    events = await run(runner)
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "hello"),
        ("model", "root", "[root] hello"),
        ("done", "root"),
    ]
    assert replace.seen == [Message.assistant("hello")]
    assert events[2].done is True
    # both stay in the session: the original answer and its replacement
    session = await runner.session_service.get("u", "s")
    assert session is not None
    assert [e.id for e in session.events] == [e.id for e in events]


async def test_after_agent_returning_the_output_emits_nothing() -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel(["hello"]), callbacks=[Keep()]))
    assert await shapes(runner) == [("model", "user", "hi"), ("model", "root", "hello"), ("done", "root")]


async def test_after_agent_is_a_fold_in_order() -> None:
    class Suffix:
        def __init__(self, s: str) -> None:
            self.s = s

        def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
            assert output is not None
            return Message.assistant(output.content + self.s)

    runner = Runner(
        LlmAgent("root", model=ScriptedModel(["x"]), callbacks=[Suffix("1")]), callbacks=[Suffix("0")]
    )
    assert await shapes(runner, callbacks=[Suffix("2")]) == [
        ("model", "user", "hi"),
        ("model", "root", "x"),
        ("model", "root", "x012"),
        ("done", "root"),
    ]


async def test_after_agent_is_skipped_when_the_invocation_was_ended() -> None:
    class EndInModel:
        def after_model(self, response: Any, ctx: Any) -> Any:
            ctx.end_invocation()
            return response

    replace = Replace()
    runner = Runner(LlmAgent("root", model=ScriptedModel(["hello"]), callbacks=[EndInModel(), replace]))
    assert await shapes(runner) == [("model", "user", "hi"), ("model", "root", "hello"), ("done", "root")]
    assert replace.seen == []


async def test_after_agent_of_a_workflow_agent_sees_the_last_child_output() -> None:
    replace = Replace()
    seq = SequentialAgent(
        "seq",
        sub_agents=[LlmAgent("a", model=ScriptedModel(["one"])), LlmAgent("b", model=ScriptedModel(["two"]))],
        callbacks=[replace],
    )
    assert await shapes(Runner(seq)) == [
        ("model", "user", "hi"),
        ("model", "a", "one"),
        ("model", "b", "two"),
        ("model", "seq", "[seq] two"),
        ("done", "seq"),
    ]
    assert replace.seen == [Message.assistant("two")]


class SetState:
    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        ctx.state[f"{ctx.agent.name}_started"] = True
        return Cont(ctx)

    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        ctx.state[f"{ctx.agent.name}_done"] = output.content if output else None
        return output


async def test_state_changes_of_agent_callbacks_go_out_as_state_update_events() -> None:
    service = InMemorySessionService()
    runner = Runner(
        LlmAgent("root", model=ScriptedModel(["hello"]), callbacks=[SetState()]), session_service=service
    )
    events = await run(runner)
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("state", "root", {"root_started": True}),
        ("model", "root", "hello"),
        ("state", "root", {"root_done": "hello"}),
        ("done", "root"),
    ]
    assert events[1].object == ObjectType.STATE_UPDATE
    session = await service.get("u", "s")
    assert session is not None
    assert session.state == {"root_started": True, "root_done": "hello"}
    assert [e.id for e in session.events] == [e.id for e in events]


async def test_state_change_with_a_halt_rides_on_the_halt_event() -> None:
    class HaltWithState:
        def before_agent(self, ctx: AgentContext) -> Halt[str]:
            ctx.state["why"] = "closed"
            return Halt("closed")

    service = InMemorySessionService()
    runner = Runner(
        LlmAgent("root", model=ScriptedModel([]), callbacks=[HaltWithState()]), session_service=service
    )
    events = await run(runner)
    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "closed"),
        ("done", "root"),
    ]
    assert events[1].actions.state_delta == {"why": "closed"}
    session = await service.get("u", "s")
    assert session is not None
    assert session.state == {"why": "closed"}


async def test_agent_callbacks_fire_for_sub_agents_and_workflow_agents() -> None:
    trace: list[tuple[str, ...]] = []
    seq = SequentialAgent(
        "seq",
        sub_agents=[
            LlmAgent("a", model=ScriptedModel(["one"]), callbacks=[Recorder("a-own", trace)]),
            LlmAgent("b", model=ScriptedModel(["two"])),
        ],
        callbacks=[Recorder("seq-own", trace)],
    )
    await run(Runner(seq, callbacks=[Recorder("runner", trace)]), callbacks=[Recorder("run", trace)])
    agent_hooks = [t for t in trace if t[1].endswith("_agent")]
    assert agent_hooks == [
        ("runner", "before_agent", "seq"),
        ("seq-own", "before_agent", "seq"),
        ("run", "before_agent", "seq"),
        ("runner", "before_agent", "a"),
        ("a-own", "before_agent", "a"),
        ("run", "before_agent", "a"),
        ("runner", "after_agent", "a"),
        ("a-own", "after_agent", "a"),
        ("run", "after_agent", "a"),
        ("runner", "before_agent", "b"),
        ("run", "before_agent", "b"),
        ("runner", "after_agent", "b"),
        ("run", "after_agent", "b"),
        ("runner", "after_agent", "seq"),
        ("seq-own", "after_agent", "seq"),
        ("run", "after_agent", "seq"),
    ]
    # an agent's own callbacks apply to that agent only, not to its sub-agents
    assert not [t for t in trace if t[0] == "seq-own" and t[2] != "seq"]
