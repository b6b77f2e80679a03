"""`adk web`: a page to chat with an agent and watch it work, served beside its AG-UI endpoint.

One Starlette app (`create_web_app`) serves the page (`GET /`, its files under `/static/`), the
AG-UI endpoint (`POST /agui`, with every adk event also sent whole as a CUSTOM `adk.event`), and
two small JSON endpoints for the store's sessions (`GET /api/sessions`, `GET /api/sessions/{id}`),
all scoped to the user the same `identity` function names. The page is plain JavaScript modules
shipped in this package: no CDN, no build step. It needs the `agui` extra.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adk.agui import MAX_BODY, Identity, create_app
from adk.errors import RequestRefused
from adk.serving import host_check, refuse_anonymous_public, user_of
from adk.web import timing

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from adk.agents.base import BaseAgent
    from adk.agui import TranslateCallback
    from adk.runner import Runner
    from adk.sessions.base import Session, SessionService

__all__ = ["STATIC", "create_folder_app", "create_web_app", "serve_web"]

STATIC = Path(__file__).parent / "static"
"""The page's files, shipped in the package."""
_LISTED = 100
"""How many of a user's sessions the page lists, newest first."""


def create_web_app(
    runner: Runner,
    *,
    identity: Identity | None = None,
    max_body: int = MAX_BODY,
    translate_callbacks: Iterable[TranslateCallback] = (),
    agents: Sequence[Mapping[str, str]] = (),
    prefix: str = "",
) -> Starlette:
    """The `adk web` app: the page, the AG-UI endpoint at `/agui` and the sessions' JSON endpoints.

    Each run gets one more callback (`timing.RunTimes`), so that the page shows each model and
    tool call's time on its timeline; not a run another process executes (`adk web --durable`),
    whose calls the page places between their events' timestamps. Served among others (`adk web
    FOLDER`, adk.web.folder), `agents` lists them all for the page's picker and `prefix` starts
    the ids of this agent's sessions, so that its list shows its own.
    """
    app = create_app(
        runner,
        path="/agui",
        identity=identity,
        max_body=max_body,
        translate_callbacks=translate_callbacks,
        details=True,
        run_callbacks=_timed if runner.runs_here else None,
    )
    about = {**describe(runner.agent), "agents": list(agents), "prefix": prefix}
    app.router.routes.extend([*page_routes(about), *_routes(runner.session_service, identity, prefix)])
    return app


def _timed() -> list[timing.RunTimes]:
    """A run's own callbacks: the times of its calls, for the page's timeline."""
    return [timing.RunTimes()]


def describe(agent: BaseAgent) -> dict[str, str]:
    """An agent as the page names it: its name and what it says it does (its welcome line)."""
    return {"name": agent.name, "description": agent.description}


def page_routes(about: Mapping[str, Any]) -> list[BaseRoute]:
    """The page, its files, and `GET /api/agent`: what the page shows before any run (`about`)."""
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=_NO_CACHE)

    async def agent(request: Request) -> Response:
        return JSONResponse(about)

    return [
        Route("/", page, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/api/agent", agent, methods=["GET"]),
    ]


def _routes(store: SessionService, identity: Identity | None, prefix: str) -> list[BaseRoute]:
    """The JSON endpoints for the sessions of the user `identity` names (those starting with `prefix`)."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def user(request: Request) -> str | Response:
        try:
            return await user_of(identity, request)
        except RequestRefused as e:
            return JSONResponse({"detail": e.detail}, status_code=e.status)

    async def sessions(request: Request) -> Response:
        user_id = await user(request)
        if not isinstance(user_id, str):
            return user_id
        ids = [i for i in await store.list_sessions(user_id) if i.startswith(prefix)]
        found = [await store.get(user_id, i) for i in ids[-_LISTED:]]  # the newest made: a bounded load
        newest = sorted((s for s in found if s is not None), key=lambda s: s.updated_at, reverse=True)
        listed = [{"id": s.id, "updated_at": s.updated_at, "title": _first_message(s)} for s in newest]
        return JSONResponse(listed)

    async def session(request: Request) -> Response:
        user_id = await user(request)
        if not isinstance(user_id, str):
            return user_id
        session_id = request.path_params["session_id"]
        found = await store.get(user_id, session_id)
        if found is None:
            return JSONResponse({"detail": f"no session {session_id!r}"}, status_code=404)
        events = [e.model_dump(mode="json") for e in found.events]
        return JSONResponse({"id": found.id, "state": found.state, "events": events})

    return [
        Route("/api/sessions", sessions, methods=["GET"]),
        Route("/api/sessions/{session_id:str}", session, methods=["GET"]),
    ]


_NO_CACHE = {"cache-control": "no-store"}


def _first_message(session: Session) -> str:
    """What the user first said in `session`: its title in the list."""
    return next((e.content[:80] for e in session.events if e.author == "user" and e.message), "")


def create_folder_app(
    runners: Mapping[str, Runner], *, identity: Identity | None = None, max_body: int = MAX_BODY
) -> Starlette:
    """Several agents' pages (`adk web FOLDER`): each agent's app under `/agents/<name>/`, and at
    `/` a page to pick one. Each lists only its own sessions (their ids start with `<name>-`)."""
    from urllib.parse import quote

    from starlette.applications import Starlette
    from starlette.routing import Mount

    agents = [
        {**describe(r.agent), "name": name, "url": f"agents/{quote(name)}/"} for name, r in runners.items()
    ]
    mounts: list[BaseRoute] = [
        Mount(
            f"/agents/{quote(name)}",
            create_web_app(runner, identity=identity, max_body=max_body, agents=agents, prefix=f"{name}-"),
        )
        for name, runner in runners.items()
    ]
    return Starlette(routes=[*page_routes({"name": "", "description": "", "agents": agents}), *mounts])


def serve_web(
    agent_or_runner: BaseAgent | Runner | Mapping[str, Runner],
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    identity: Identity | None = None,
    insecure_anonymous: bool = False,
    max_body: int = MAX_BODY,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve the `adk web` app with uvicorn, on loopback unless there is an identity (as `serve`).

    On loopback, only requests naming a loopback host or one of `allowed_hosts` are answered, so
    that a web page elsewhere cannot reach the server through DNS rebinding (adk.serving). Given
    several runners by name, it serves them all, with a page to pick one (`create_folder_app`).
    """
    refuse_anonymous_public(host, identity, insecure_anonymous)
    import uvicorn

    from adk.runner import Runner

    if isinstance(agent_or_runner, Mapping):
        app = create_folder_app(agent_or_runner, identity=identity, max_body=max_body)
    else:
        runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
        app = create_web_app(runner, identity=identity, max_body=max_body)
    uvicorn.run(host_check(app, host, allowed_hosts), host=host, port=port)
