"""Starting and stopping DBOS in a process, with one clear line when its database is unreachable."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from adk.errors import DurableError

__all__ = ["DurableError", "shutdown", "start"]


def _shown(url: str) -> str:
    """`url` without its password: it goes into an error line."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)


def start(
    system_database_url: str | None, *, executor_id: str | None, app: str, queues: Sequence[str] | None
) -> Any:
    """Create and launch DBOS with its system database at `system_database_url` (SQLite in the
    working directory when None) as executor `executor_id`, taking runs from `queues` (None: all);
    return the DBOS instance."""
    from dbos import DBOS, DBOSConfig

    config: DBOSConfig = {
        "name": app,
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.05,
    }
    if system_database_url:
        config["system_database_url"] = system_database_url
    if executor_id:
        config["executor_id"] = executor_id
    url = system_database_url or f"sqlite:///{app}.sqlite"
    logger = DBOS.logger
    logger.disabled = True  # a failed launch logs its traceback there: the one line below says it
    try:
        dbos = DBOS(config=config)
        if queues is not None:
            DBOS.listen_queues(queues)
        DBOS.launch()
    except Exception as error:
        DBOS.destroy(destroy_registry=False)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DurableError(f"cannot start DBOS on its system database {_shown(url)}: {first}") from None
    finally:
        logger.disabled = False
    return dbos


def shutdown() -> None:
    """Stop DBOS in this process (its pending runs stay, for the next launch to recover)."""
    from dbos import DBOS

    DBOS.destroy(destroy_registry=False)
