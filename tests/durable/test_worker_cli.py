"""`adk worker`'s bad input: one line, no traceback, no password."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOSClient

from adk.durable import DurableRunner, workflow_id
from adk.durable.runner import QUEUE
from adk.sessions.memory import InMemorySessionService
from tests.durable import crash_agent
from tests.durable._fleet import AGENT, ROOT, WAIT, Worker, database, enqueue, free_port


@pytest.mark.parametrize("surface", [["worker"], ["serve", "--durable"], ["web", "--durable"]])
def test_a_system_database_that_cannot_be_reached_is_one_line(surface: list[str], tmp_path: Path) -> None:
    if surface[0] != "worker":
        pytest.importorskip("ag_ui")
    url = "postgresql://postgres:secret@127.0.0.1:1/nowhere"
    command = [sys.executable, "-m", "adk", surface[0], str(AGENT), *surface[1:]]
    command += ["--sessions", str(tmp_path / "s.db")]
    if surface[0] != "worker":
        command += ["--port", str(free_port())]
    done = subprocess.run(
        [*command, "--system-database", url], cwd=ROOT, capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "adk: cannot start DBOS on its system database postgresql://postgres:***@127.0.0.1:1/nowhere: "
    )
    assert "Connection refused" in lines[0]


def test_a_concurrency_that_is_not_a_count_is_refused_by_name(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "adk", "worker", str(AGENT), "--concurrency", "0"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "adk worker: error: argument --concurrency: expected a whole number, 1 or more, not '0'"
    )


def test_adk_web_durable_refuses_a_folder_by_name(tmp_path: Path) -> None:
    pytest.importorskip("ag_ui")
    command = [sys.executable, "-m", "adk", "web", str(AGENT.parent), "--durable", "--port", str(free_port())]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)
    assert (done.returncode, done.stderr) == (
        1,
        "adk: adk web --durable serves one agent file, not a folder\n",
    )


@pytest.mark.parametrize("given", ["100", "0/60", "100/0", "100/-5", "x/60", "100/inf", "100/nan", "2.5/60"])
def test_a_rate_limit_that_is_not_runs_per_seconds_is_refused_by_name(given: str, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "adk", "worker", str(AGENT), "--rate-limit", given]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        "adk worker: error: argument --rate-limit: expected RUNS/SECONDS (e.g. 100/60: at most 100 runs "
        f"started per 60 seconds), RUNS a whole number 1 or more and SECONDS more than 0, not {given!r}"
    ]


@pytest.mark.parametrize("given", [(0, 60), (100, 0), (100, float("inf")), (2.5, 60), (100,)])
def test_a_durable_runner_refuses_a_rate_limit_that_is_not_runs_per_seconds(given: Any) -> None:
    with pytest.raises(ValueError, match=r"^DurableRunner: rate_limit") as refused:
        DurableRunner(crash_agent.make("crash"), session_service=InMemorySessionService(), rate_limit=given)
    assert str(refused.value) == (
        "DurableRunner: rate_limit must be (runs, seconds), runs a whole number 1 or more and seconds "
        f"more than 0 (at most that many runs started per that many seconds), not {given!r}"
    )


def test_a_rate_limit_holds_the_runs_past_it_on_the_queue(tmp_path: Path) -> None:
    """`--rate-limit 2/3600`: the queue's limiter says so, and of 4 runs enqueued at once (no
    other limit) the worker starts 2; the other 2 wait on the queue for the hour to pass."""
    env = {"ADK_TEST_COUNTER": str(tmp_path / "effects")}
    with database() as url:
        worker = Worker(url, "w1", env, "--rate-limit", "2/3600")
        client = DBOSClient(system_database_url=url)
        try:
            worker.until("adk worker w1: taking runs")
            queue = client.retrieve_queue(QUEUE)
            assert queue is not None
            limiter = queue.limiter  # as the worker registered it in the system database
            enqueue(url, [(f"s{i}", f"inv{i}", f"n{i}") for i in range(4)])
            ids = [workflow_id("u", f"s{i}", f"inv{i}") for i in range(4)]
            ended = asyncio.run(_first_two(client, ids))
            statuses = {w.workflow_id: w.status for w in client.list_workflows(workflow_ids=ids)}
        finally:
            client.destroy()
            worker.stop()
    assert limiter == {"limit": 2, "period": 3600.0}
    assert sorted(statuses.values()) == ["ENQUEUED", "ENQUEUED", "SUCCESS", "SUCCESS"]
    assert {i for i, s in statuses.items() if s == "SUCCESS"} == set(ended)
    assert len((tmp_path / "effects").read_text().splitlines()) == 2


async def _first_two(client: DBOSClient, ids: list[str]) -> list[str]:
    """The ids of the first two runs to end (DBOS's wait, bounded)."""
    handles = [await client.retrieve_workflow_async(i) for i in ids]
    ended: list[str] = []
    async with asyncio.timeout(WAIT):
        for _ in range(2):
            done = await client.wait_first_async([h for h in handles if h.workflow_id not in ended])
            ended.append(done.workflow_id)
    return ended
