"""Machine instructions per turn and per chain call, counted by valgrind's callgrind.

Timings on a shared machine move by 10-20% from one run to the next; an instruction count is the
same from run to run within about 1% (string hashing is seeded alike), so a change of a few
percent shows. Each figure is the count for 2n iterations less the count for n, over n: start-up
and import cancel out. The imports' objects are frozen out of the collector's sight
(`gc.freeze`): else whether a full collection of them falls in one counted run and not in the
other, which the imported code's size decides, moves a turn's count by a tenth (S2 read 269,300
and 308,500 for the same code). The counts still include the collections of what the turns
keep. Instructions are not time (a cache miss costs more than an add) but a change that removes
some rarely makes a turn slower. Needs valgrind; run from the project root:
`python -m benchmarks.instructions [name ...]`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

TURNS = "for i in range(n): await runner.one_run(r, str(i))"
LONG_TURNS = "for i in range(n): await long_session.turn(r, 'long')"
RUNS = {
    # name: (iterations, the body of `async def main(n)`)
    "S1": (1000, "r = runner.make_runner('S1')\n    for i in range(n): await runner.one_run(r, str(i))"),
    "S2": (1000, "r = runner.make_runner('S2')\n    for i in range(n): await runner.one_run(r, str(i))"),
    "B0": (1000, "r = budget.make_runner(False)\n    " + TURNS),
    "B1": (1000, "r = budget.make_runner(True)\n    " + TURNS),
    "BF": (1000, "r = budget.make_runner(True, floor=True)\n    " + TURNS),
    "BN": (1000, "r = budget.make_runner(True, null=True)\n    " + TURNS),
    "S3": (500, "r = runner.make_runner('S3')\n    for i in range(n): await runner.one_run(r, str(i))"),
    "S3.1": (500, "r = runner.make_runner('S3.1')\n    for i in range(n): await runner.one_run(r, str(i))"),
    # a turn in a fresh session, and in one of 10,000 events with a compaction (benchmarks.long_session)
    "L0": (200, "r = await long_session.memory_runner(0)\n    " + LONG_TURNS),
    "L10k": (200, "r = await long_session.memory_runner(10_000)\n    " + LONG_TURNS),
    "floor before, 1 hook": (20_000, "for _ in range(n): await chain.floor_before_sync(FNS, CTX)"),
    "floor before, 3 hooks": (20_000, "for _ in range(n): await chain.floor_before_sync(FNS * 3, CTX)"),
    "run_before Callbacks, 1": (20_000, "for _ in range(n): await run_before(CBS, 'before_model', CTX)"),
    "run_before list, 1": (20_000, "for _ in range(n): await run_before(ONE, 'before_model', CTX)"),
    "run_before list, 3": (20_000, "for _ in range(n): await run_before(THREE, 'before_model', CTX)"),
    "floor after, 1 hook": (20_000, "for _ in range(n): await chain.floor_after_sync(AFTERS, RESPONSE, CTX)"),
    "run_after Callbacks, 1": (
        20_000,
        "for _ in range(n): await run_after(CBS, 'after_model', RESPONSE, CTX)",
    ),
    "run_after list, 1": (20_000, "for _ in range(n): await run_after(ONE, 'after_model', RESPONSE, CTX)"),
}

PROGRAM = """
import asyncio, gc, sys
from benchmarks import budget, chain, long_session, runner
from adk.callbacks import Callbacks, run_after, run_before
gc.collect()
gc.freeze()
ONE = [chain.SyncNoop()]
THREE = [chain.SyncNoop(), chain.SyncNoop(), chain.SyncNoop()]
CBS = Callbacks.of(ONE)
FNS, AFTERS = (ONE[0].before_model,), (ONE[0].after_model,)
CTX, RESPONSE = object(), runner.TEXT
async def main(n):
    {body}
asyncio.run(main(int(sys.argv[1])))
"""


def instructions(body: str, n: int, cache: str) -> int:
    """Instructions callgrind counted for one process running `body` `n` times.

    Bytecode is read from `cache`, written there by a first run without valgrind: a module
    compiled in one of the two counted runs and not in the other (a source changed between them,
    or no bytecode written at all) would count its compilation as the turns' cost.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONHASHSEED="0", PYTHONPYCACHEPREFIX=cache)
    program = [sys.executable, "-c", PROGRAM.format(body=body)]
    subprocess.run([*program, "1"], env=env, capture_output=True, check=True)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *program, str(n)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{done.stderr}")
    return int(found.group(1))


def main() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("benchmarks.instructions needs valgrind (apt-get install valgrind)")
    names = sys.argv[1:] or list(RUNS)
    counts = {}
    with tempfile.TemporaryDirectory() as cache:
        for name in names:
            n, body = RUNS[name]
            counts[name] = (instructions(body, 2 * n, cache) - instructions(body, n, cache)) / n
            print(f"{name:<26}{counts[name]:>10,.0f} instructions")
    if {"S3", "S3.1", "floor before, 1 hook", "floor before, 3 hooks"} <= counts.keys():
        # S3 runs 24 hook calls with three callbacks a hook, S3.1 eight with one
        more = (counts["S3"] - counts["S3.1"]) / 16
        floor = (counts["floor before, 3 hooks"] - counts["floor before, 1 hook"]) / 2
        ratio = f"{more / floor:.2f}x (target ≤ 1.5x)"
        print(f"one more callback in S3: {more:,.0f} a call, floor {floor:,.0f} a hook: {ratio}")


if __name__ == "__main__":
    main()
