"""What only the PostgreSQL store promises: clear connection errors, surviving a server restart."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from adk.agents import LlmAgent
from adk.context import ToolContext
from adk.events import Event
from adk.runner import Runner
from adk.sessions import Session
from adk.sessions.postgres import PostgresSessionService
from adk.sessions.postgres_sql import SCHEMA_VERSION, schema_statements, scoped_state_statements
from adk.testing import ScriptedModel
from tests import postgres
from tests._runtime import Tool, call, calls, summary
from tests.sessions.helpers import delta_event

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
async def schema() -> Any:
    postgres.require()
    async with postgres.fresh_schema() as name:
        yield name


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "mysql://root@127.0.0.1/test",
            "is not a PostgreSQL URL: expected postgresql://user[:password]@host",
        ),
        ("postgresql://", "is not a PostgreSQL URL"),
    ],
)
def test_a_malformed_url_is_one_clear_line(url: str, message: str) -> None:
    with pytest.raises(ValueError, match="session store URL") as caught:
        PostgresSessionService(url)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "schema"),
    [
        (postgres.URL, "adk; DROP TABLE users"),
        (postgres.URL + "?schema=adk.sessions--", None),
        (postgres.URL, "Robert'); --"),
    ],
)
def test_a_schema_name_that_is_not_a_plain_identifier_is_refused(url: str, schema: str | None) -> None:
    # The schema name is written into SQL: only lower-case letters, digits and underscores pass.
    with pytest.raises(ValueError, match=r"schema name .*: use lower-case letters, digits and underscores"):
        PostgresSessionService(url, schema=schema)


@pytest.mark.parametrize(
    ("user", "database", "message"),
    [
        ("postgres", "nosuchdb_adk", 'database "nosuchdb_adk" does not exist'),
        ("nosuchrole_adk", "test", 'role "nosuchrole_adk" does not exist'),
    ],
)
async def test_a_server_that_refuses_is_one_clear_line_without_the_password(
    schema: str, user: str, database: str, message: str
) -> None:
    server = urllib.parse.urlsplit(postgres.URL)
    store = PostgresSessionService(
        f"postgresql://{user}:s3cret@{server.hostname}:{server.port}/{database}", schema=schema
    )
    with pytest.raises(ConnectionError) as caught:
        await store.get("u", "s")
    text = str(caught.value)
    assert text.startswith(f"cannot open session store postgresql://{user}:***@") and message in text
    assert "s3cret" not in text and "\n" not in text
    assert "s3cret" not in repr(store)


async def test_a_wrong_password_is_one_clear_line_without_the_password(cluster: postgres.Cluster) -> None:
    await postgres.fetch("CREATE ROLE adk_password LOGIN PASSWORD 'the-right-one'", url=cluster.url)
    cluster.require_password("adk_password", "the-right-one")
    server = urllib.parse.urlsplit(cluster.url)
    store = PostgresSessionService(
        f"postgresql://adk_password:guessed-wrong@{server.hostname}:{server.port}/postgres"
    )
    with pytest.raises(ConnectionError) as caught:
        await store.get("u", "s")
    text = str(caught.value)
    assert text.startswith("cannot open session store postgresql://adk_password:***@")
    assert 'password authentication failed for user "adk_password"' in text
    assert "guessed-wrong" not in text and "\n" not in text


async def test_a_port_with_no_server_is_one_clear_line() -> None:
    store = PostgresSessionService("postgresql://postgres:pw@127.0.0.1:1/test")
    with pytest.raises(
        ConnectionError, match=r"cannot open session store postgresql://postgres:\*\*\*@127.0.0.1:1/test: "
    ) as caught:
        await store.get("u", "s")
    assert "\n" not in str(caught.value)


async def test_events_written_by_the_first_adk_load(schema: str) -> None:
    written = json.loads((FIXTURES / "v1_events.json").read_text())
    async with PostgresSessionService(postgres.URL, schema=schema) as store:
        session = await store.acquire("u", "s", "me")
        for row in written:
            await store.append_event(session, Event.model_validate(row))
        stored = await store.get("u", "s")
    assert stored is not None
    assert stored.events == [Event.model_validate(row) for row in written]  # fields added since load empty


async def test_a_version_1_schema_is_migrated_and_its_sessions_kept(schema: str) -> None:
    # Version 1 (before state scopes and horizons): the tables of today but scoped_state and the
    # sessions' horizon column, and its rows.
    v1 = [
        statement.replace("horizon bigint NOT NULL DEFAULT 0,", "")
        for statement in schema_statements(schema)
        if statement not in scoped_state_statements(schema)
    ]
    assert sum("horizon" in statement for statement in v1) == 0
    v1[-1] = f"INSERT INTO {schema}.schema_version VALUES (1)"
    written = (FIXTURES / "v1_events.json").read_text()
    rows = [
        f"""INSERT INTO {schema}.events VALUES (1, {seq}, '{json.dumps(row).replace("'", "''")}')"""
        for seq, row in enumerate(json.loads(written), 1)
    ]
    await postgres.execute(
        f"CREATE SCHEMA {schema}",
        *v1,
        f"""INSERT INTO {schema}.sessions (user_id, id, state, updated_at, last_seq)
            VALUES ('u', 's', '{{"k": 1}}', 0, {len(rows)})""",
        *rows,
    )
    async with PostgresSessionService(postgres.URL, schema=schema) as store:
        runner = Runner(LlmAgent("root", model=ScriptedModel(["hello"])), session_service=store)
        new = [e async for e in runner.run("u", "s", "hi", state_delta={"user:lang": "fr"})]
        stored = await store.get("u", "s")
        user_state = await store.user_state("u")
    versions = await postgres.fetch(f"SELECT version FROM {schema}.schema_version ORDER BY version")
    assert [row[0] for row in versions] == [1, 2, 3]
    assert stored is not None
    assert stored.events == [Event.model_validate(row) for row in json.loads(written)] + new
    assert stored.state == {"k": 1, "user:lang": "fr"} and user_state == {"user:lang": "fr"}


async def test_a_schema_of_an_unknown_version_is_refused_and_left_alone(schema: str) -> None:
    await postgres.execute(
        f"CREATE SCHEMA {schema}",
        *schema_statements(schema)[:-1],
        f"INSERT INTO {schema}.schema_version VALUES (99)",
    )
    store = PostgresSessionService(postgres.URL, schema=schema)
    with pytest.raises(ConnectionError) as caught:
        await store.get("u", "s")
    reads = f"its schema version is 99, and this adk reads version {SCHEMA_VERSION}"
    assert str(caught.value).endswith(reads)
    versions = await postgres.fetch(f"SELECT version FROM {schema}.schema_version")
    assert [row[0] for row in versions] == [99]


async def test_a_schema_holding_tables_adk_did_not_make_is_refused_and_left_alone(schema: str) -> None:
    await postgres.execute(f"CREATE SCHEMA {schema}", f"CREATE TABLE {schema}.events (theirs text)")
    store = PostgresSessionService(postgres.URL, schema=schema)
    with pytest.raises(ConnectionError, match=f"schema {schema} has tables not made by adk: events$"):
        await store.get("u", "s")
    tables = await postgres.fetch(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", schema
    )
    assert [row[0] for row in tables] == ["events"]


async def test_text_with_nul_characters_is_stored_and_read_back(schema: str) -> None:
    runner_text = "before\x00after \u2603"
    async with PostgresSessionService(postgres.URL, schema=schema) as store:
        runner = Runner(LlmAgent("root", model=ScriptedModel([runner_text])), session_service=store)
        events = [e async for e in runner.run("u", "s", "a\x00b")]
        stored = await store.get("u", "s")
    assert stored is not None
    assert [e.content for e in stored.events] == ["a\x00b", runner_text, ""]
    assert stored.events == events


async def test_a_server_restarted_mid_run_ends_the_run_with_an_error_and_the_pool_recovers(
    cluster: postgres.Cluster,
) -> None:
    # The tests' own server (tests/postgres.py): the machine's is never stopped or restarted.
    async def restart(args: dict[str, Any], ctx: ToolContext) -> str:
        action = {"restart": lambda: (cluster.stop(), cluster.start()), "stop": cluster.stop}[args["action"]]
        await asyncio.to_thread(action)
        return "done"

    model = ScriptedModel(
        [
            calls(call("server", "c1", action="restart")),  # between two statements: nothing is lost
            "still here",
            calls(call("server", "c2", action="stop")),  # down when the result is stored
            "back",
        ]
    )
    store = PostgresSessionService(cluster.url, min_size=2, max_size=2)
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("server", restart)]), session_service=store)
    try:
        events = [e async for e in runner.run("u", "s", "hi")]
        assert summary(events[-1]) == ("done", "root")

        events = [e async for e in runner.run("u", "s", "stop it")]
        assert [summary(e)[0] for e in events] == ["model", "model", "error"]
        assert events[-1].error is not None and events[-1].error.where == "store"

        await asyncio.to_thread(cluster.start)
        events = [e async for e in runner.run("u", "s", "again")]
        assert [summary(e) for e in events] == [
            ("model", "user", "again"),
            ("model", "root", "back"),
            ("done", "root"),
        ]
        stored = await store.get("u", "s")
        assert stored is not None
        # the tool result of the stopped run was not stored; the run that ended then left no gap
        assert [e.content for e in stored.events][-5:] == ["stop it", "", "again", "back", ""]
    finally:
        await store.close()


async def test_the_tests_own_server_is_not_the_machines(cluster: postgres.Cluster) -> None:
    postgres.require()
    query = "SELECT pg_postmaster_start_time(), inet_server_port()"
    [(machines, port)] = await postgres.fetch(query)
    [(started, private_port)] = await postgres.fetch(query, url=cluster.url)
    assert private_port == cluster.port != port and started != machines


async def test_appends_sent_together_are_refused_or_stored_each_on_its_own(schema: str) -> None:
    async with PostgresSessionService(postgres.URL, schema=schema, max_size=1) as store:
        sessions = [await store.acquire("u", f"s{i}", "me") for i in range(6)]
        stale = Session(id="s1", user_id="u", lease="me")
        await store.append_event(sessions[1], delta_event(0))
        events = [delta_event(i + 1, k=i) for i in range(6)]
        events[3] = delta_event(4, bad="nul \x00 in state")  # JSONB cannot hold it: fails its batch
        results = await asyncio.gather(
            *(store.append_event(s, e) for s, e in zip(sessions, events, strict=True)),
            store.append_event(stale, delta_event(99)),
            return_exceptions=True,
        )
        assert [type(r).__name__ for r in results] == ["NoneType"] * 3 + ["UntranslatableCharacterError"] + [
            "NoneType"
        ] * 2 + ["StaleSessionError"]
        for i, session in enumerate(sessions):
            stored = await store.get("u", f"s{i}")
            assert stored is not None
            assert stored.events == session.events
            assert len(stored.events) == (0 if i == 3 else 2 if i == 1 else 1)


async def test_a_store_used_from_another_event_loop_says_so(schema: str) -> None:
    store = PostgresSessionService(postgres.URL, schema=schema)
    runner = Runner(LlmAgent("root", model=ScriptedModel(["one"])), session_service=store)
    await store.get("u", "s")  # the pool now serves this loop

    events = await asyncio.to_thread(runner.run_sync, "u", "s", "from another loop")

    assert [summary(e) for e in events] == [("error", "root", "RuntimeError", "store")]
    assert events[0].error is not None
    assert events[0].error.message.startswith(
        f"PostgresSessionService('{postgres.URL}', schema='{schema}') serves the event loop that opened"
    )
    await store.close()
