"""The PostgreSQL store's schema, its migration, and its statements, for one PostgreSQL schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "SCHEMA_VERSION",
    "Statements",
    "horizon_statements",
    "prepare",
    "schema_statements",
    "scoped_state_statements",
]

SCHEMA_VERSION = 3


def schema_statements(s: str) -> list[str]:
    """The statements that create the tables of version `SCHEMA_VERSION` in schema `s`."""
    return [
        f"CREATE TABLE {s}.schema_version (version integer NOT NULL)",
        # state: JSONB, merged by the server (`||`, `-`); lease_expires on the server's clock;
        # horizon: how many of its first events a run skips (adk.sessions.horizon).
        f"""CREATE TABLE {s}.sessions (
            pk bigserial PRIMARY KEY,
            user_id text NOT NULL,
            id text NOT NULL,
            state jsonb NOT NULL DEFAULT '{{}}',
            updated_at double precision NOT NULL,
            last_seq bigint NOT NULL DEFAULT 0,
            lease_owner text,
            lease_expires timestamptz NOT NULL DEFAULT '-infinity',
            horizon bigint NOT NULL DEFAULT 0,
            UNIQUE (user_id, id)
        )""",
        f"CREATE INDEX sessions_by_user ON {s}.sessions (user_id, pk)",
        # event: json, not jsonb: the text comes back as written, and JSONB cannot hold U+0000.
        f"""CREATE TABLE {s}.events (
            session bigint NOT NULL REFERENCES {s}.sessions (pk) ON DELETE CASCADE,
            seq bigint NOT NULL,
            event json NOT NULL,
            PRIMARY KEY (session, seq)
        )""",
        *scoped_state_statements(s),
        f"INSERT INTO {s}.schema_version VALUES ({SCHEMA_VERSION})",
    ]


def scoped_state_statements(s: str) -> list[str]:
    """The table of the `user:` state of each user (scope 'user', owner: the user id) and of the
    `app:` state (scope 'app', owner ''); version 2 added it."""
    return [
        f"""CREATE TABLE {s}.scoped_state (
            scope text NOT NULL,
            owner text NOT NULL,
            state jsonb NOT NULL,
            PRIMARY KEY (scope, owner)
        )""",
    ]


def horizon_statements(s: str) -> list[str]:
    """The sessions' horizon (adk.sessions.horizon); version 3 added it."""
    return [f"ALTER TABLE {s}.sessions ADD COLUMN horizon bigint NOT NULL DEFAULT 0"]


async def prepare(conn: asyncpg.Connection, schema: str, where: str) -> None:
    """Create or migrate the tables in `schema`, in one transaction; ConnectionError if they are
    not adk's, or of a version this adk does not read. `where` begins each error's line."""
    async with conn.transaction():
        # One process creates the schema; the others wait here, then find it made.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"adk:{schema}")
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        tables = await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", schema
        )
        names = {row[0] for row in tables}
        if "schema_version" not in names:
            if names & {"sessions", "events"}:
                taken = ", ".join(sorted(names & {"sessions", "events"}))
                raise ConnectionError(f"{where}: schema {schema} has tables not made by adk: {taken}")
            for statement in schema_statements(schema):
                await conn.execute(statement)
        version = await conn.fetchval(f"SELECT max(version) FROM {schema}.schema_version")
        if version == 1:
            for statement in scoped_state_statements(schema):
                await conn.execute(statement)
            await conn.execute(f"INSERT INTO {schema}.schema_version VALUES (2)")
            version = 2
        if version == 2:
            for statement in horizon_statements(schema):
                await conn.execute(statement)
            await conn.execute(f"INSERT INTO {schema}.schema_version VALUES (3)")
            version = 3
        if version != SCHEMA_VERSION:
            raise ConnectionError(
                f"{where}: its schema version is {version}, and this adk reads version {SCHEMA_VERSION}"
            )


def _with_scopes(s: str, state: str, user: str) -> str:
    """SQL for a session's `state` with the current `app:` and `user:` state of `user` merged in."""
    return (
        f"({state} || coalesce((SELECT state FROM {s}.scoped_state WHERE scope = 'app' AND owner = ''),"
        f" '{{}}') || coalesce((SELECT state FROM {s}.scoped_state WHERE scope = 'user' AND owner = {user}),"
        " '{}'))::text"
    )


@dataclass(frozen=True, slots=True)
class Statements:
    """The statements of the store on schema `s`."""

    session: str
    """A session's state, updated_at and events; the caller adds `WHERE user_id = $1 AND id = $2`."""
    from_horizon: str
    """The same with only the events after its horizon, and the horizon."""
    acquire: str
    """Take the lease ($1 user, $2 id, $3 time, $4 owner, $5 ttl, $6 takeover) and read the session:
    only the events after number $8 if the session is row $7 and its event $8 has id $9, else those
    after its horizon. Gives state, updated_at, the events read, $8 if they follow it (else 0),
    the row, and the horizon."""
    append: str
    """Appends sent together: each stored with its delta (and the session's new horizon, if not
    null), or refused, as if alone (group commit)."""
    check: str
    """A session's last number, whether another owner ($3 is this one) holds a live lease, and
    the id of its event number $4."""
    wait: str
    """Wait for a statement in flight that changes the session (it holds the row): reading it next
    then tells what that statement did."""
    renew: str
    """Extend owner $3's lease of session ($1, $2) by $4 seconds; `UPDATE 1` if it still held it."""

    @classmethod
    def of(cls, s: str) -> Statements:
        events = f"(SELECT coalesce(json_agg(event ORDER BY seq), '[]') FROM {s}.events"
        lease = "lease_owner, lease_expires"
        return cls(
            session=f"SELECT {_with_scopes(s, 'state', 'user_id')}, updated_at,"
            f" {events} WHERE session = pk)::text FROM {s}.sessions",
            from_horizon=f"SELECT {_with_scopes(s, 'state', 'user_id')}, updated_at,"
            f" {events} WHERE session = pk AND seq > horizon)::text, horizon FROM {s}.sessions",
            acquire=f"WITH t AS (INSERT INTO {s}.sessions (user_id, id, updated_at, {lease})"
            f" VALUES ($1, $2, $3, $4, clock_timestamp() + $5 * interval '1 second')"
            f" ON CONFLICT (user_id, id) DO UPDATE SET lease_owner = excluded.lease_owner,"
            f" lease_expires = excluded.lease_expires WHERE sessions.lease_owner IS NULL"
            f" OR sessions.lease_owner IN ($4, $6) OR sessions.lease_expires <= clock_timestamp()"
            f" RETURNING pk, state, updated_at, last_seq, horizon),"
            f" k AS (SELECT CASE WHEN t.pk = $7 AND $8 <= t.last_seq AND (SELECT event->>'id' FROM {s}.events"
            f" WHERE session = t.pk AND seq = $8) = $9 THEN $8::bigint ELSE 0 END AS seen FROM t)"
            f" SELECT {_with_scopes(s, 'state', '$1')}, updated_at,"
            f" {events} WHERE session = t.pk"
            f" AND seq > CASE WHEN k.seen > 0 THEN k.seen ELSE t.horizon END)::text,"
            f" k.seen, t.pk, t.horizon FROM t, k",
            append=f"WITH i AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::float8[],"
            f" $5::jsonb[], $6::jsonb[], $7::text[], $8::json[], $9::bigint[], $10::int[])"
            f" AS i (user_id, id, seq, updated_at, changes, deleted, lease, event, horizon, n)),"
            f" t AS (UPDATE {s}.sessions s SET last_seq = s.last_seq + 1, updated_at = i.updated_at,"
            f" state = CASE WHEN i.changes IS NULL THEN s.state"
            f" ELSE (s.state || i.changes) - ARRAY(SELECT jsonb_array_elements_text(i.deleted)) END,"
            f" horizon = coalesce(i.horizon, s.horizon)"
            f" FROM i WHERE s.user_id = i.user_id AND s.id = i.id AND s.last_seq = i.seq"
            f" AND (s.lease_owner IS NULL OR s.lease_owner = i.lease OR s.lease_expires <= clock_timestamp())"
            f" RETURNING s.pk, s.last_seq, i.event, i.n),"
            f" e AS (INSERT INTO {s}.events (session, seq, event) SELECT pk, last_seq, event FROM t)"
            f" SELECT n FROM t",
            check=f"SELECT last_seq, lease_owner IS NOT NULL AND lease_owner IS DISTINCT FROM $3"
            f" AND lease_expires > clock_timestamp(),"
            f" (SELECT event->>'id' FROM {s}.events WHERE session = pk AND seq = $4)"
            f" FROM {s}.sessions WHERE user_id = $1 AND id = $2",
            wait=f"SELECT 1 FROM {s}.sessions WHERE user_id = $1 AND id = $2 FOR SHARE",
            renew=f"UPDATE {s}.sessions SET lease_expires = clock_timestamp() + $4 * interval '1 second'"
            " WHERE user_id = $1 AND id = $2 AND lease_owner = $3",
        )
