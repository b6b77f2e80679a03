"""Runs in flight (issue 31): S2 runs started together at 1,000, 10,000 and 50,000, and the cost of a
hook's first callback against a further one.

Each size runs in fresh interpreters: one timed with the cyclic collector on, one with it off
(CPU µs per run, steadier than wall time on a shared machine; RSS growth per run), and a census
with the collector off: the GC-tracked objects a live run holds (counted while every run waits in
its tool, less the count before, per run; the object kinds that grow most) and what the collector
finds once the runs have ended (0: every run freed by reference counting). `--tracemalloc` adds
the traced peak per run (slow at 50,000). In the timed runs the in-memory store never yields, so
each run goes from start to end in its task's first step: what the collector walks there is the
tasks waiting their turn and what the store keeps of the runs that ended.
The callbacks part times S2 with 0, 1, 10 and 100 no-op callbacks on every hook, sequentially.
The floor part times runs that do nothing but keep K tracked objects each (none, and what the
store keeps of an S2 run): the ratio no S2 run keeping as much can beat on this Python.
Run from the project root: `python -m benchmarks.scale [--runs 1000,10000] [--chain-only]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from typing import Any

from adk import LlmAgent, Runner, ToolContext
from adk.sessions import InMemorySessionService
from benchmarks.runner import InstantModel, Noop, NoopTool, make_runner, median_run_us, one_run, rss_mib


class GateTool(NoopTool):
    """The noop tool, holding every run at its call until all `expected` runs have reached it."""

    def __init__(self, expected: int, at_peak: Any) -> None:
        self.expected, self.at_peak, self.arrived = expected, at_peak, 0
        self.open = asyncio.Event()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        self.arrived += 1
        if self.arrived == self.expected:
            self.at_peak()
            self.open.set()
        await self.open.wait()
        return "ok"


def kinds() -> Counter[str]:
    return Counter(type(o).__name__ for o in gc.get_objects())


async def timed(n: int) -> dict[str, float]:
    """µs per run of `n` S2 runs at once, and RSS growth per run (the store keeps the sessions)."""
    await asyncio.gather(*(one_run(make_runner("S2"), f"warm{i}") for i in range(50)))
    runner = make_runner("S2")
    gc.collect()
    spent = [0.0, 0.0, 0.0]
    started: list[float] = []

    def timer(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.process_time())
        else:
            spent[info["generation"]] += time.process_time() - started.pop()

    before = rss_mib()
    gc.callbacks.append(timer)
    start = time.process_time()
    await asyncio.gather(*(one_run(runner, str(i)) for i in range(n)))
    cpu = time.process_time() - start
    gc.callbacks.remove(timer)
    per_run = [s / n * 1e6 for s in spent]
    return {
        "us": cpu / n * 1e6,
        "kib": (rss_mib() - before) * 1024 / n,
        "young": sum(per_run[:2]),
        "full": per_run[2],
    }


class _Kept:
    """One GC-tracked object of the floor's: what a stored event, message or list is to the collector."""

    __slots__ = ("ref",)

    def __init__(self) -> None:
        self.ref: object = None


async def floor(n: int, kept: int) -> dict[str, float]:
    """µs per run of `n` runs started together that do nothing but keep `kept` tracked objects
    each, as a store keeps a finished run's: what asyncio's tasks and the keeping alone cost."""
    store: dict[int, list[_Kept] | None] = {}

    async def run(i: int) -> None:  # K objects: a list and K - 1 in it (none: no list either)
        store[i] = [_Kept() for _ in range(kept - 1)] if kept else None

    gc.collect()
    start = time.process_time()
    await asyncio.gather(*(run(i) for i in range(n)))
    return {"us": (time.process_time() - start) / n * 1e6}


async def census(n: int, top: int) -> dict[str, Any]:
    """GC-tracked objects per live run (and the kinds that grow most), and what the collector finds
    after the runs end, the collector off throughout."""
    await asyncio.gather(*(one_run(make_runner("S2"), f"warm{i}") for i in range(50)))
    peak: dict[str, Any] = {}

    def at_peak() -> None:
        peak["count"], peak["kinds"] = len(gc.get_objects()), kinds()

    gate = GateTool(n, at_peak)
    runner = Runner(
        LlmAgent("bench", model=InstantModel(use_tool=True), tools=[gate]),
        session_service=InMemorySessionService(),
    )
    gc.collect()
    gc.disable()
    try:
        base, base_kinds = len(gc.get_objects()), kinds()
        await asyncio.gather(*(one_run(runner, str(i)) for i in range(n)))
        for _ in range(3):  # asyncio lets go of finished tasks on the loop's next turns
            await asyncio.sleep(0)
        after, after_kinds = len(gc.get_objects()), kinds()
        cyclic = gc.collect()
    finally:
        gc.enable()
    grown = peak["kinds"] - base_kinds
    return {
        "live": (peak["count"] - base) / n,
        "kept": (after - base) / n,
        "cyclic": cyclic / n,
        "kinds": [(name, count / n) for name, count in grown.most_common(top)],
        "kept_kinds": [(name, count / n) for name, count in (after_kinds - base_kinds).most_common(top)],
    }


async def traced(n: int) -> dict[str, float]:
    """tracemalloc's peak per run of `n` S2 runs at once."""
    await asyncio.gather(*(one_run(make_runner("S2"), f"warm{i}") for i in range(50)))
    runner = make_runner("S2")
    gc.collect()
    tracemalloc.start()
    await asyncio.gather(*(one_run(runner, str(i)) for i in range(n)))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"kib": peak / 1024 / n}


def child(mode: str, n: int, top: int) -> None:
    """One measurement, printed as JSON: what the parent starts in a fresh interpreter (`top` is
    the census' kinds to list, or the floor's objects kept a run)."""
    if mode.endswith("nogc"):
        gc.disable()
    if mode.startswith("floor"):
        print(json.dumps(asyncio.run(floor(n, top))))
        return
    work = {"gc": timed, "nogc": timed, "census": lambda n: census(n, top), "traced": traced}[mode]
    print(json.dumps(asyncio.run(work(n))))


def fresh(mode: str, n: int, top: int) -> Any:
    code = f"import benchmarks.scale as s; s.child({mode!r}, {n}, {top})"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def scale(sizes: list[int], repeats: int, top: int, trace: bool) -> None:
    print(
        "runs in flight | µs/run GC on (young, full collections) | GC off | RSS KiB/run | traced KiB/run"
        " | objects/live run | cycles/run"
    )
    kinds_at: dict[int, list[tuple[str, float]]] = {}
    kept_at: dict[int, list[tuple[str, float]]] = {}
    us: dict[int, float] = {}
    off_us: dict[int, float] = {}
    kib: dict[int, float] = {}
    kept = 0.0
    for n in sizes:
        on = [fresh("gc", n, top) for _ in range(repeats)]
        off = [fresh("nogc", n, top) for _ in range(repeats)]
        seen = fresh("census", n, top)
        kinds_at[n], kept_at[n], kept = seen["kinds"], seen["kept_kinds"], seen["kept"]
        peak = f"{fresh('traced', n, top)['kib']:.1f}" if trace else "-"
        us[n], kib[n] = statistics.median(r["us"] for r in on), statistics.median(r["kib"] for r in on)
        off_us[n] = statistics.median(r["us"] for r in off)
        print(
            f"{n:>14,} | {us[n]:12.1f}"
            f" ({statistics.median(r['young'] for r in on):.1f},"
            f" {statistics.median(r['full'] for r in on):.1f}) |"
            f" {off_us[n]:6.1f} |"
            f" {kib[n]:11.1f} | {peak:>14} |"
            f" {seen['live']:16.1f} | {seen['cyclic']:.2f} (kept {seen['kept']:.1f} objects/run)"
        )
    for n, grown in kinds_at.items():
        print(
            f"a live run at {n:,} holds (GC-tracked, per run): " + ", ".join(f"{k} {c:.1f}" for k, c in grown)
        )
        kept_kinds = ", ".join(f"{k} {c:.1f}" for k, c in kept_at[n])
        print(f"   and once ended, the store keeps per run: {kept_kinds}")
    low, high = min(sizes), max(sizes)
    print(
        f"µs per run at {high:,} against {low:,}: {us[high] / us[low]:.2f}x (target ≤ 1.2);"
        f" RSS per run at most {max(kib.values()):.1f} KiB (target ≤ 9)"
    )
    floors(low, high, repeats, round(kept), off_us)


def floors(low: int, high: int, repeats: int, kept: int, off_us: dict[int, float]) -> None:
    """The floor under the ratio: runs started together that do nothing but keep tracked objects
    (none; as many as the store keeps of an S2 run), and what adk's runs would read if their own
    work, as timed with the collector off, added nothing for the collector to walk."""
    print("the floor: runs started together that only keep K tracked objects each, µs/run GC on (off)")
    for k in (0, kept):
        at = {
            n: (
                statistics.median(fresh("floor", n, k)["us"] for _ in range(repeats)),
                statistics.median(fresh("floor-nogc", n, k)["us"] for _ in range(repeats)),
            )
            for n in (low, high)
        }
        bound = [off_us[n] - at[n][1] + at[n][0] for n in (low, high)]
        print(
            f"  K = {k:>2}: {low:,} {at[low][0]:.1f} ({at[low][1]:.1f}), {high:,} {at[high][0]:.1f}"
            f" ({at[high][1]:.1f}): {at[high][0] / at[low][0]:.2f}x; an S2 run keeping K, its own"
            f" work adding nothing to collect: {bound[1] / bound[0]:.2f}x"
        )


async def per_run_us(callbacks: int, n: int, rounds: int) -> float:
    """Median CPU µs per sequential S2 run with `callbacks` no-op callbacks on every hook."""
    agent = LlmAgent(
        "bench",
        model=InstantModel(use_tool=True),
        tools=[NoopTool()],
        callbacks=[Noop() for _ in range(callbacks)],
    )
    runner = Runner(agent, session_service=InMemorySessionService())
    for i in range(20):
        await one_run(runner, f"warm{i}")
    return await median_run_us(lambda: runner, n, rounds)


def chain(n: int, rounds: int) -> None:
    Noop.calls = 0
    asyncio.run(one_run(make_runner("S3.1"), "count"))
    calls = Noop.calls  # hook calls a run with one callback per hook
    t = {k: asyncio.run(per_run_us(k, max(n // max(k, 1), 20), rounds)) for k in (0, 1, 10, 100)}
    first = (t[1] - t[0]) / calls
    further_10, further_100 = (t[10] - t[1]) / (9 * calls), (t[100] - t[10]) / (90 * calls)
    print(f"S2 with k callbacks per hook ({calls} hook calls a run per callback), CPU µs a run:")
    print("  " + ", ".join(f"k={k}: {v:.1f}" for k, v in t.items()))
    print(
        f"  first callback on a hook: {first:.2f} µs a call; each further one: {further_10:.2f} (1→10),"
        f" {further_100:.2f} (10→100); first / further: {first / further_10:.1f}x (target ≤ 2)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", default="1000,10000,50000", help="sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="timed interpreters per size and mode")
    parser.add_argument("--top", type=int, default=12, help="object kinds to list per size")
    parser.add_argument("--tracemalloc", action="store_true", help="also the traced peak per run")
    parser.add_argument("--chain-only", action="store_true", help="only the callbacks part")
    parser.add_argument("--no-chain", action="store_true", help="skip the callbacks part")
    args = parser.parse_args()
    if not args.chain_only:
        scale([int(s) for s in args.runs.split(",")], args.repeats, args.top, args.tracemalloc)
    if not args.no_chain:
        chain(1000, 7)


if __name__ == "__main__":
    main()
