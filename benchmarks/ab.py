"""Interleaved A/B of two checkouts: S1, S2, S3 and their floors, then `import adk`, in fresh processes.

`python -m benchmarks.ab /path/to/before /path/to/after [rounds]`: each round runs one process per
tree, alternating, so a busy spell on the shared machine slows both alike; prints medians with
the floor measured in the same processes. Each tree needs its own `benchmarks/runner.py`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

TURNS = """
import asyncio, benchmarks.runner as b
asyncio.run(b.per_invocation_us('S2', 300, 1))
s1, s2, s3 = (asyncio.run(b.per_invocation_us(w, 1000, 5)) for w in ('S1', 'S2', 'S3'))
f1, f2 = (min(asyncio.run(b.floor_turn_us(1000, t)) for _ in range(5)) for t in (False, True))
print(s1, s2, s3, f1, f2, b.floor_us())
"""
IMPORT = "import time; t = time.perf_counter(); import adk; print((time.perf_counter() - t) * 1e3)"
HOOK_CALLS_IN_S3 = 24  # the no-op callbacks' calls in one S3 run


def run(tree: str, code: str, cache: str) -> list[float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=tree, PYTHONPYCACHEPREFIX=os.path.join(cache, tree.strip("/").replace("/", "_")))
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    out.check_returncode()
    return [float(x) for x in out.stdout.split()]


def main() -> None:
    trees = {"before": sys.argv[1], "after": sys.argv[2]}
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with tempfile.TemporaryDirectory() as cache:
        turns: dict[str, list[list[float]]] = {k: [] for k in trees}
        imports: dict[str, list[float]] = {k: [] for k in trees}
        for tree in trees.values():
            run(tree, IMPORT, cache)  # fills the bytecode cache
        for _ in range(rounds):
            for name, tree in trees.items():
                turns[name].append(run(tree, TURNS, cache))
        for _ in range(3 * rounds):
            for name, tree in trees.items():
                imports[name] += run(tree, IMPORT, cache)
    for name in trees:
        s1, s2, s3, f1, f2, hook = (statistics.median(c) for c in zip(*turns[name], strict=True))
        per_callback = (s3 - s2) / HOOK_CALLS_IN_S3
        print(
            f"{name}: S1 {s1:.1f} µs (floor {f1:.1f}, {s1 / f1:.1f}x), S2 {s2:.1f} µs (floor {f2:.1f},"
            f" {s2 / f2:.1f}x), per callback {per_callback:.2f} µs (floor {hook:.2f},"
            f" {per_callback / hook:.1f}x), import {statistics.median(imports[name]):.0f} ms"
        )


if __name__ == "__main__":
    main()
