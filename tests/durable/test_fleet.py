"""A fleet under load: 4 `adk worker` processes take 1000 queued runs (4 per session) with a
global concurrency of 8. Measured from the product's record, the session store: the runs'
events give each run's span (its first event's timestamp to its last's, the same clock on one
machine); at no instant are more than 8 runs inside their spans across the workers (and 8 are,
so the bound is the one that holds them back), and a session's runs never overlap."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOSClient

from adk.durable.runner import workflow_id
from adk.events import Event
from adk.sessions.postgres import PostgresSessionService
from tests.durable._fleet import WAIT, Worker, database, enqueue
from tests.durable.test_crash import _plain, _shape

WORKERS = 4
SESSIONS = 250
RUNS = 4
"""Runs per session: SESSIONS x RUNS = 1000 runs."""
CONCURRENCY = 8


def _run(session: int, run: int) -> tuple[str, str, str]:
    """Run `run` of session `session`: its session, invocation and note (what its user says)."""
    return f"s{session}", f"inv{session}.{run}", f"n{session}.{run}"


async def _ended(url: str) -> tuple[list[Any], dict[str, list[Event]]]:
    """Wait for every run's result (DBOS's own wait, bounded); their statuses and the sessions."""
    client = DBOSClient(system_database_url=url)
    store = PostgresSessionService(url)
    ids = [workflow_id("u", *_run(s, r)[:2]) for r in range(RUNS) for s in range(SESSIONS)]
    try:
        async with asyncio.timeout(WAIT * 3):
            for wfid in ids:
                await (await client.retrieve_workflow_async(wfid)).get_result(polling_interval_sec=0.1)
        statuses = await client.list_workflows_async(workflow_ids=ids, load_input=False)
        sessions = {}
        for s in range(SESSIONS):
            found = await store.get("u", f"s{s}")
            assert found is not None
            sessions[found.id] = found.events
        return statuses, sessions
    finally:
        client.destroy()
        await store.close()


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most spans open at one instant (one that ends as another starts is not open with it)."""
    marks = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running, most = 0, 0
    for _, step in marks:  # at a tie, -1 sorts first: the ending span closes before the next opens
        running += step
        most = max(most, running)
    return most


def _spans(events: list[Event]) -> dict[str, tuple[float, float]]:
    """Each run's span in a session: its first event's timestamp to its last's, by invocation."""
    spans: dict[str, tuple[float, float]] = {}
    for event in events:
        start = spans.get(event.invocation_id, (event.timestamp, event.timestamp))[0]
        spans[event.invocation_id] = (start, event.timestamp)
    return spans


def test_four_workers_run_a_thousand_queued_runs_never_more_than_eight_at_once(tmp_path: Path) -> None:
    counter = tmp_path / "effects"
    env = {"ADK_TEST_COUNTER": str(counter)}
    with database() as url:
        workers: list[Worker] = []
        try:
            for n in range(WORKERS):
                workers.append(Worker(url, f"w{n}", env, "--concurrency", str(CONCURRENCY)))
            for n, worker in enumerate(workers):
                worker.until(f"adk worker w{n}: taking runs")
            enqueue(url, [_run(s, r) for r in range(RUNS) for s in range(SESSIONS)])  # round by round
            statuses, sessions = asyncio.run(_ended(url))
        finally:
            for worker in workers:
                worker.stop()
    assert Counter(w.output for w in statuses) == {"runner.completion": SESSIONS * RUNS}
    taken = Counter(w.executor_id for w in statuses)
    assert set(taken) == {f"w{n}" for n in range(WORKERS)}  # every worker took runs
    assert sorted(counter.read_text().splitlines()) == sorted(
        _run(s, r)[2] for s in range(SESSIONS) for r in range(RUNS)
    )  # each tool call's effect once
    spans: list[tuple[float, float]] = []
    for sid, events in sessions.items():
        ran = [e.invocation_id for e in events]
        blocks = [inv for i, inv in enumerate(ran) if i == 0 or ran[i - 1] != inv]
        assert sorted(blocks) == sorted(set(ran)), sid  # a run's events are one block: none interleave
        assert len(blocks) == RUNS, sid
        of_session = sorted(_spans(events).values())
        assert _most_at_once(of_session) == 1, sid  # a session's runs never overlap, across workers
        spans += of_session
        for inv in blocks:
            note = _run(int(sid[1:]), int(inv.split(".")[1]))[2]
            assert _shape([e for e in events if e.invocation_id == inv]) == _plain(note)
    assert _most_at_once(spans) == CONCURRENCY  # reached, never exceeded, across the fleet
