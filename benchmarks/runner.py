"""Framework overhead of the runtime: workloads S1-S4 of docs/runtime.md with a model that answers at once.

Run from the project root: `python -m benchmarks.runner` (`--quick` for a smoke run, `--profile S2`
to print where the time goes). Prints medians of CPU time per invocation (steadier than wall time
on a shared machine), S4's wall time, and this machine's speed against the design's per-hook floor (0.23 µs).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from adk import (
    AgentContext,
    BaseTool,
    Cont,
    Event,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    Message,
    ModelContext,
    Raise,
    Runner,
    ToolContext,
)
from adk.agents import ParallelAgent
from adk.events import ToolCall, ToolDeclaration, new_id
from adk.sessions import InMemorySessionService, SqliteSessionService

TEXT = LlmResponse.text("hello")
CALL = LlmResponse.calls(ToolCall.of("noop", "{}", id="call_1"))


class InstantModel:
    """Answers at once with a prebuilt response: a tool call for a user turn (S2) or text."""

    name = "instant"

    def __init__(self, use_tool: bool) -> None:
        self.use_tool = use_tool

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        if self.use_tool and request.messages[-1].role == "user":
            yield CALL
        else:
            yield TEXT


class NoopTool(BaseTool):
    name = "noop"
    declaration = ToolDeclaration(name="noop")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return "ok"


class Noop:
    """A no-op callback on every hook; counts its calls."""

    calls = 0

    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        Noop.calls += 1
        return Cont(ctx)

    def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        Noop.calls += 1
        return output

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        Noop.calls += 1
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        Noop.calls += 1
        return response

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        return Raise(error)

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        Noop.calls += 1
        return Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        Noop.calls += 1
        return result

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Raise:
        return Raise(error)


def make_runner(workload: str) -> Runner:
    if workload == "P3":  # a ParallelAgent of three children, one text turn each
        children = [LlmAgent(f"c{i}", model=InstantModel(use_tool=False)) for i in range(3)]
        return Runner(ParallelAgent("p", sub_agents=children), session_service=InMemorySessionService())
    tool = workload != "S1"
    callbacks = [Noop() for _ in range(3 if workload == "S3" else 1 if workload == "S3.1" else 0)]
    agent = LlmAgent(
        "bench",
        model=InstantModel(use_tool=tool),
        tools=[NoopTool()] if tool else [],
        callbacks=callbacks,
    )
    return Runner(agent, session_service=InMemorySessionService())


async def one_run(runner: Runner, session_id: str) -> None:
    async for _ in runner.run("u", session_id, "hi"):
        pass


async def per_invocation_us(workload: str, n: int, rounds: int) -> float:
    """Median CPU µs per invocation over `rounds` rounds of `n` sequential runs, each on a new session."""
    return await median_run_us(lambda: make_runner(workload), n, rounds)


async def median_run_us(make: Callable[[], Runner], n: int, rounds: int) -> float:
    """Median CPU µs per run over `rounds` rounds of `n` sequential runs, each on a new session, of
    the runner `make()` gives each round."""
    results = []
    for r in range(rounds):
        runner = make()
        gc.collect()
        start = time.process_time()
        for i in range(n):
            await one_run(runner, f"{r}-{i}")
        results.append((time.process_time() - start) / n * 1e6)
    return statistics.median(results)


def floor_us() -> float:
    """The design's per-hook floor measured here: call a sync hook, check for `Cont`, thread the context."""

    class Hook:
        def before_model(self, ctx: int) -> Cont[int]:
            return Cont(ctx)

    hooks = [Hook().before_model for _ in range(3)]

    def chain(ctx: int) -> int:
        for hook in hooks:
            result = hook(ctx)
            if type(result) is Cont:
                ctx = result.ctx
        return ctx

    n = 100_000
    runs = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(n):
            chain(1)
        runs.append((time.process_time() - start) / n / 3 * 1e6)
    return min(runs)


def hand_written(tool: bool) -> tuple[dict[str, list[object]], Callable[[str], Awaitable[None]]]:
    """A hand-written S1 (S2 with `tool`) turn: the same model and tool calls, a list for history,
    and the sessions it keeps."""
    model, noop = InstantModel(use_tool=tool), NoopTool()
    request = LlmRequest()
    sessions: dict[str, list[object]] = {}

    async def turn(session_id: str) -> None:
        history = sessions.setdefault(session_id, [])
        history.append(Message.user("hi"))
        while True:
            request.messages = history  # type: ignore[assignment]
            response = [r async for r in model.generate(request)][-1]
            history.append(response)
            calls = response.tool_calls
            if not calls:
                return
            for call in calls:
                history.append(Message.tool(str(await noop.run({}, None)), tool_call_id=call.id, name="noop"))  # type: ignore[arg-type]

    return sessions, turn


async def floor_turn_us(n: int, tool: bool) -> float:
    """CPU µs per hand-written turn (`hand_written`)."""
    _, turn = hand_written(tool)
    start = time.process_time()
    for i in range(n):
        await turn(str(i))
    return (time.process_time() - start) / n * 1e6


async def skeleton_turn_us(n: int) -> float:
    """CPU µs per S1 turn of a runner's skeleton: the same three async generators (the run's, the
    agent body's, the model's stream), events, session and request, made as adk makes them, and
    nothing the runner guarantees (leases, checks, invocation, context variable, hooks).

    What S1 costs beyond it is the price of those guarantees (docs/performance.md)."""
    from adk.events import new_choice, new_event
    from adk.models.base import new_request
    from adk.sessions.base import Session

    model = InstantModel(use_tool=False)
    sessions: dict[str, Session] = {}

    async def body(invocation_id: str, history: list[Message]) -> AsyncIterator[Event]:
        complete = TEXT
        async for chunk in model.generate(new_request("", history[:], [], False, None)):
            complete = chunk
        yield Event.from_response(invocation_id, "bench", complete)

    async def run(session_id: str) -> AsyncIterator[Event]:
        message = Message.user("hi")
        session = sessions[session_id] = Session._empty(session_id, "u")
        first = new_event("i", "user")
        first.choices = [new_choice(message)]
        session.events.append(first)
        yield first
        async for event in body("i", [message]):
            session.events.append(event)
            yield event
        done = new_event("i", "bench", "runner.completion")
        session.events.append(done)
        yield done

    start = time.process_time()
    for i in range(n):
        async for _ in run(str(i)):
            pass
    return (time.process_time() - start) / n * 1e6


async def long_session_ratio(store: str, stored: int = 1000, n: int = 100) -> tuple[float, float]:
    """µs per S1 turn in fresh sessions and in one session already holding `stored` events."""
    with tempfile.TemporaryDirectory() as tmp:
        if store == "sqlite":
            service: Any = SqliteSessionService(os.path.join(tmp, "s.sqlite3"))
        elif store == "postgresql":
            from adk.sessions.postgres import PostgresSessionService
            from benchmarks.sessions import POSTGRES

            service = PostgresSessionService(POSTGRES, schema=f"adk_bench_{new_id()[:8]}")
        else:
            service = InMemorySessionService()
        runner = Runner(LlmAgent("bench", model=InstantModel(use_tool=False)), session_service=service)
        while True:
            session = await service.get("u", "long")
            if session is not None and len(session.events) >= stored:
                break
            await one_run(runner, "long")
        clock = time.process_time if store == "memory" else time.perf_counter  # the others wait on I/O
        fresh, long = [], []
        for i in range(n):  # interleaved, so that a slow spell slows both alike
            start = clock()
            await one_run(runner, f"fresh-{i}")
            fresh.append(clock() - start)
            start = clock()
            await one_run(runner, "long")
            long.append(clock() - start)
        if store == "sqlite":
            service.close()
        elif store == "postgresql":
            await (await service._connect()).execute(f"DROP SCHEMA {service.schema} CASCADE")
            await service.close()
    return statistics.median(fresh) * 1e6, statistics.median(long) * 1e6


RUNNERS: list[object] = []
"""What the last S4 kept: its runner (or the floor's sessions), alive for the memory measurement."""


async def s4(n: int = 1000) -> float:
    runner = make_runner("S2")
    RUNNERS.append(runner)
    gc.collect()
    start = time.perf_counter()
    await asyncio.gather(*(one_run(runner, str(i)) for i in range(n)))
    return (time.perf_counter() - start) * 1e3


async def s4_floor(n: int = 1000) -> float:
    """S4 by hand: 1,000 hand-written S2 turns at once, each a task as `gather` makes it."""
    sessions, turn = hand_written(True)
    RUNNERS.append(sessions)
    gc.collect()
    start = time.perf_counter()
    await asyncio.gather(*(turn(str(i)) for i in range(n)))
    return (time.perf_counter() - start) * 1e3


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def s4_memory(repeats: int = 7) -> tuple[float, float, float, float, float]:
    """S4's median wall ms and its floor's (alternated, `repeats` each), the RSS growth MiB of the
    first S4 (its 1,000 sessions still held), and the tracemalloc peak MiB of S4 and of its floor."""
    asyncio.run(s4(50))  # warm up imports and caches
    gc.collect()
    before = rss_mib()  # first, before freed memory is there to be reused
    walls = [asyncio.run(s4())]
    rss = rss_mib() - before
    floors: list[float] = []
    for _ in range(repeats):
        for run, times in ((s4_floor, floors), (s4, walls)):
            RUNNERS.clear()
            times.append(asyncio.run(run()))
    peaks = []
    for run in (s4, s4_floor):
        RUNNERS.clear()
        gc.collect()
        tracemalloc.start()
        asyncio.run(run())
        peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
        tracemalloc.stop()
    return statistics.median(walls), statistics.median(floors), rss, peaks[0], peaks[1]


def in_subprocess(code: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    return out.stdout.strip()


def import_ms(rounds: int, statement: str = "import adk") -> float:
    """Median time of `statement` in a fresh interpreter, bytecode cached as in an installed package.

    With PYTHONDONTWRITEBYTECODE set, and no __pycache__ in a fresh checkout, every run would
    compile adk's source again: a cost that no installed copy pays.
    """
    code = f"import time; t = time.perf_counter(); {statement}; print((time.perf_counter() - t) * 1e3)"
    with tempfile.TemporaryDirectory() as cache:
        env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        in_subprocess(code, env)  # fills the cache
        return statistics.median(float(in_subprocess(code, env)) for _ in range(rounds))


def profile(workload: str, n: int) -> None:
    """cProfile of `n` runs with the garbage collector off (it would be charged to whatever
    allocated last), then the collector's own share of the same runs, timed apart."""
    runner = make_runner(workload)

    async def many(prefix: str) -> None:
        for i in range(n):
            await one_run(runner, f"{prefix}{i}")

    asyncio.run(many("warm"))
    gc.collect()
    gc.disable()
    try:
        profiler = cProfile.Profile()
        profiler.runcall(asyncio.run, many("profiled"))
    finally:
        gc.enable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    spent: list[float] = []

    def timer(phase: str, info: dict[str, int]) -> None:
        spent.append(time.perf_counter() if phase == "start" else time.perf_counter() - spent.pop())

    gc.callbacks.append(timer)
    try:
        start = time.perf_counter()
        asyncio.run(many("timed"))
        total = time.perf_counter() - start
    finally:
        gc.callbacks.remove(timer)
    per_run, collected = total / n * 1e6, sum(spent) / n * 1e6
    print(f"unprofiled: {per_run:.1f} µs a run, of which garbage collection {collected:.1f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few iterations: a smoke test")
    parser.add_argument("--profile", choices=["S1", "S2", "S3"], help="profile a workload instead")
    args = parser.parse_args()
    # 1,000 runs a round: more would grow the in-memory store enough to time the garbage collector
    n, rounds = (200, 3) if args.quick else (1000, 15)
    if args.profile:
        profile(args.profile, n)
        return

    def measure(workload: str) -> float:
        return asyncio.run(per_invocation_us(workload, n, rounds))

    floor = floor_us()
    print(
        f"this machine: per-hook floor {floor:.2f} µs, the design's 0.23: scale targets by {floor / 0.23:.1f}"
    )
    measure("S2")  # warm up
    s1, s2 = measure("S1"), measure("S2")
    Noop.calls = 0
    asyncio.run(one_run(make_runner("S3"), "count"))
    hook_calls = Noop.calls
    s3 = measure("S3")
    per_callback = (s3 - s2) / hook_calls
    # the third and second callbacks alone: S2 has no hook at all, so S3 - S2 also holds what the
    # first callback on a hook costs beyond itself (a model call's envelope, the agent's own run)
    one_more = (s3 - measure("S3.1")) / (hook_calls * 2 / 3)
    f1 = min(asyncio.run(floor_turn_us(n, False)) for _ in range(rounds))
    f2 = min(asyncio.run(floor_turn_us(n, True)) for _ in range(rounds))
    skeleton = statistics.median(asyncio.run(skeleton_turn_us(n)) for _ in range(rounds))
    print(
        f"S1 one text turn:            {s1:8.1f} µs/invocation (target ≤ 15), floor {f1:.1f}: {s1 / f1:.0f}x"
    )
    print(f"   a runner's skeleton:      {skeleton:8.1f} µs (the same generators and events, no guarantees)")
    print(
        f"S2 model → tool → model:     {s2:8.1f} µs/invocation (target ≤ 40), floor {f2:.1f}: {s2 / f2:.0f}x"
    )
    print(f"S3 S2 + 3 no-op callbacks:   {s3:8.1f} µs/invocation")
    print(
        f"   per callback call:        {per_callback:8.2f} µs, {hook_calls} a run,"
        f" floor {floor:.2f}: {per_callback / floor:.1f}x (with what a first callback on a hook brings:"
        " its call's envelope)"
    )
    print(
        f"   one more callback:        {one_more:8.2f} µs a call (three callbacks a hook against one),"
        f" floor {floor:.2f}: {one_more / floor:.1f}x (target ≤ 1.5x; benchmarks.chain times it alone)"
    )
    print(
        f"P3 three parallel text turns: {measure('P3'):7.1f} µs/invocation (no target; S1 is one such turn)"
    )
    for store in ("memory", "sqlite", "postgresql"):
        try:
            fresh, long = asyncio.run(long_session_ratio(store, n=30 if args.quick else 200))
        except (ImportError, ConnectionError) as e:
            print(f"S1 turn, 1,000 stored events ({store}): not measured ({e})")
            continue
        print(
            f"S1 turn, 1,000 stored events ({store}): {long:8.1f} µs against {fresh:.1f} fresh:"
            f" {long / fresh:.2f}x (target ≤ 1.2)"
        )
    code = f"import benchmarks.runner as b; print(*b.s4_memory({3 if args.quick else 7}))"
    wall, floor4, rss, peak, floor_peak = (float(x) for x in in_subprocess(code).split())
    print(
        f"S4 1,000 S2 runs at once:    {wall:8.1f} ms wall (target ≤ 60),"
        f" floor {floor4:.1f}: {wall / floor4:.1f}x"
    )
    print(
        f"   memory:                   {rss:8.1f} MiB RSS growth, {peak:.1f} MiB traced peak (target ≤ 15),"
        f" floor {floor_peak:.1f}: {peak / floor_peak:.1f}x"
    )
    deps = import_ms(rounds, "import asyncio, pydantic.main, pydantic.fields")  # what adk cannot go below
    bare = import_ms(rounds, "import asyncio")
    loaded = in_subprocess("import adk, sys; print(sorted({'pydantic', 'openai'} & set(sys.modules)))")
    print(f"import adk:                  {import_ms(rounds):8.1f} ms (target ≤ 120), loading {loaded}")
    print(f"   asyncio alone (floor):    {bare:8.1f} ms; asyncio + pydantic: {deps:.1f} ms")


if __name__ == "__main__":
    main()
