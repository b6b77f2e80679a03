"""Workflow agents: run sub-agents in sequence, in parallel, or in a loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable, Sequence
from contextlib import aclosing

from adk.agents.base import BaseAgent
from adk.agents.checkpoints import forked, handing
from adk.agents.conditions import Condition
from adk.agents.resume import escalates, in_line, loop_iterations_done, spoke
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.context import AgentContext
from adk.events import Event

__all__ = ["LoopAgent", "ParallelAgent", "SequentialAgent"]


def _running(agent: BaseAgent, ctx: AgentContext, branch: str) -> aclosing[AsyncGenerator[Event, None]]:
    """`agent`'s run on `branch`, closed when the `async with` ends, whatever ends it: an `async
    for` left by an exception (the consumer closing the run) does not close what it iterates,
    and the agents below (a `ParallelAgent`'s tasks) would run on until the collector got to it."""
    return aclosing(agent.run(ctx.invocation, branch))


class SequentialAgent(BaseAgent):
    """Runs its sub-agents one after the other, on its own branch."""

    async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
        for agent in self.sub_agents:
            if ctx.invocation.ended:
                return
            async with _running(agent, ctx, ctx.branch) as events:
                async for event in events:
                    yield event


def parallel_branch(branch: str, parallel: str, child: str) -> str:
    """The branch on which the `ParallelAgent` named `parallel`, on `branch`, runs its `child`."""
    return f"{branch}.{parallel}.{child}" if branch else f"{parallel}.{child}"


class ParallelAgent(BaseAgent):
    """Runs its sub-agents concurrently, each on its own branch (`<branch>.<this name>.<child name>`).

    Events are yielded as they come. A child goes on after a complete event only once the
    consumer has taken it (the runner stores what it takes before asking for more), so that its
    next step sees it in its branch's history. If one child fails, the others are cancelled and
    the error ends the invocation.
    """

    async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
        queue: asyncio.Queue[tuple[Event, asyncio.Future[None] | None] | Exception | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def pump(agent: BaseAgent) -> None:
            branch = parallel_branch(ctx.branch, self.name, agent.name)
            try:
                async with _running(agent, ctx, branch) as events:
                    async for event in events:
                        if event.is_partial:
                            queue.put_nowait((event, None))
                            continue
                        await handing(event)  # a recovered durable run: in the order it was stored
                        taken = loop.create_future()
                        queue.put_nowait((event, taken))
                        await taken
            except Exception as error:
                queue.put_nowait(error)
            finally:
                queue.put_nowait(None)

        tasks = [
            asyncio.create_task(pump(agent), name=f"adk:{agent.name}", context=forked(agent.name))
            for agent in self.sub_agents
        ]
        try:
            running = len(tasks)
            while running:
                item = await queue.get()
                if item is None:
                    running -= 1
                elif isinstance(item, Exception):
                    raise item
                else:
                    event, taken = item
                    yield event
                    if taken is not None and not taken.done():  # done: its child was cancelled
                        taken.set_result(None)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def finished_at(self, branch: str, events: list[Event]) -> list[int]:
        """Once all of its children have finished a run (each on its own branch)."""
        runs = [c.finished_at(parallel_branch(branch, self.name, c.name), events) for c in self.sub_agents]
        return [max(run) for run in zip(*runs, strict=False)]  # the runs every child finished


class LoopAgent(BaseAgent):
    """Runs its sub-agents in order, again and again, until one escalates, `until` holds, or `max_iterations`.

    `until` (a `Condition`, adk.agents.conditions) is judged after each sub-agent, on the state
    and the complete events that sub-agent gave.
    """

    def __init__(
        self,
        name: str,
        *,
        sub_agents: Sequence[BaseAgent],
        max_iterations: int = 10,
        until: Condition | None = None,
        description: str = "",
        callbacks: Iterable[AnyCallback] | Callbacks = (),
    ) -> None:
        super().__init__(name, description=description, callbacks=callbacks, sub_agents=sub_agents)
        if max_iterations < 1:
            raise ValueError(f"loop agent {name!r}: max_iterations must be at least 1, got {max_iterations}")
        if until is not None and not isinstance(until, Condition):
            raise TypeError(
                f"loop agent {name!r}: until={until!r} is not a Condition; use state_set, mentioned or"
                " last_event (a predicate over the last event), combined with &, | and ~"
            )
        self.max_iterations = max_iterations
        self.until = until

    def finished_at(self, branch: str, events: list[Event]) -> list[int]:
        """With its `max_iterations`-th iteration or an escalation, or, when `until` ended it,
        where an agent after it starts, on its branch or one above (no event marks where a
        loop's run ends)."""
        iteration_ends = set(self.sub_agents[-1].finished_at(branch, events))
        finished: list[int] = []
        count, running = 0, -1  # iterations of the run going on, and its latest event (-1: none)
        for i, e in enumerate(events):
            if self.find_agent(e.author) is None:
                if running >= 0 and in_line(branch, e.branch) and spoke(e):
                    finished.append(running)  # an agent after it ran: its run had ended
                    count, running = 0, -1
                continue
            running = i
            if escalates(e) or (i in iteration_ends and (count := count + 1) == self.max_iterations):
                finished.append(i)
                count, running = 0, -1
        return finished

    async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
        until = self.until
        # Resuming an invocation (cut short or paused): the iterations it had done count.
        done = loop_iterations_done(ctx, until)
        if done is None:
            return
        for _ in range(done, self.max_iterations):
            for agent in self.sub_agents:
                if ctx.invocation.ended:
                    return
                escalated = False
                step: list[Event] = []
                async with _running(agent, ctx, ctx.branch) as events:
                    async for event in events:
                        escalated = escalated or escalates(event)
                        if until is not None and not event.is_partial:
                            step.append(event)
                        yield event
                if escalated or (until is not None and until(ctx.state, step)):
                    return
