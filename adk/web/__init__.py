"""`adk web`: a page to chat with an agent and watch it work, served beside its AG-UI endpoint.

One Starlette app (`create_web_app`) serves the page (`GET /`, its files under `/static/`), the
AG-UI endpoint (`POST /agui`, with every adk event also sent whole as a CUSTOM `adk.event`), and
two small JSON endpoints for the store's sessions (`GET /api/sessions`, `GET /api/sessions/{id}`),
all scoped to the user the same `identity` function names. The page is plain JavaScript modules
shipped in this package: no CDN, no build step. It needs the `agui` extra.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adk.agui import MAX_BODY, Identity, create_app, is_loopback, refuse_anonymous_public, user_of
from adk.callbacks.registry import Callbacks
from adk.callbacks.results import Cont
from adk.context import ModelContext
from adk.events import LlmResponse, ObjectType

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from adk.agents.base import BaseAgent
    from adk.agui import TranslateCallback, TranslateContext
    from adk.runner import Runner
    from adk.sessions.base import Session

__all__ = ["STATIC", "create_web_app", "serve_web"]

STATIC = Path(__file__).parent / "static"
"""The page's files, shipped in the package."""
_LISTED = 100
"""How many of a user's sessions the page lists, newest first."""


class _ModelTimes:
    """Times each model call (its `before_model` to its `after_model`, retries included) and adds
    the seconds to that call's `adk.event` as `latency`.

    Model calls of one branch follow one another, so the time is kept per (invocation, branch)
    until the branch's next response event carries it.
    """

    def __init__(self) -> None:
        self._started: dict[tuple[str, str], float] = {}
        self._took: dict[tuple[str, str], float] = {}

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        self._started[ctx.invocation_id, ctx.branch] = time.perf_counter()
        return Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        started = self._started.pop((ctx.invocation_id, ctx.branch), None)
        if started is not None:
            self._took[ctx.invocation_id, ctx.branch] = time.perf_counter() - started
        return response

    def after_translate(self, event: BaseEvent, ctx: TranslateContext) -> BaseEvent | None:
        from ag_ui.core import CustomEvent, EventType

        if event.type in (EventType.RUN_FINISHED, EventType.RUN_ERROR):
            self._forget(ctx.invocation_id)  # what a failed call left
        if not isinstance(event, CustomEvent) or event.name != "adk.event":
            return None
        value: dict[str, Any] = event.value
        if value["object"] != ObjectType.CHAT_COMPLETION:
            return None
        took = self._took.pop((value["invocation_id"], value["branch"]), None)
        return None if took is None else CustomEvent(name="adk.event", value={**value, "latency": took})

    def _forget(self, invocation_id: str) -> None:
        for times in (self._started, self._took):
            for key in [k for k in times if k[0] == invocation_id]:
                del times[key]


def create_web_app(
    runner: Runner,
    *,
    identity: Identity | None = None,
    max_body: int = MAX_BODY,
    translate_callbacks: Iterable[TranslateCallback] = (),
) -> Starlette:
    """The `adk web` app: the page, the AG-UI endpoint at `/agui` and the sessions' JSON endpoints.

    The runner gets one more callback (`_ModelTimes`), so that the page shows each model call's time.
    """
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    times = _ModelTimes()
    runner.callbacks = runner.callbacks + Callbacks.of([times])
    app = create_app(
        runner,
        path="/agui",
        identity=identity,
        max_body=max_body,
        translate_callbacks=[*translate_callbacks, times],
        details=True,
    )
    store = runner.session_service

    async def user(request: Request) -> str | Response:
        from adk.agui import _BadInput

        try:
            return await user_of(identity, request)
        except _BadInput as e:
            return JSONResponse({"detail": e.detail}, status_code=e.status)

    async def sessions(request: Request) -> Response:
        user_id = await user(request)
        if not isinstance(user_id, str):
            return user_id
        ids = (await store.list_sessions(user_id))[-_LISTED:]  # the newest made: a bounded load
        found = [await store.get(user_id, i) for i in ids]
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

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=_NO_CACHE)

    app.router.routes.extend(
        [
            Route("/", page, methods=["GET"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
            Route("/api/sessions", sessions, methods=["GET"]),
            Route("/api/sessions/{session_id:str}", session, methods=["GET"]),
        ]
    )
    return app


_NO_CACHE = {"cache-control": "no-store"}


def _first_message(session: Session) -> str:
    """What the user first said in `session`: its title in the list."""
    return next((e.content[:80] for e in session.events if e.author == "user" and e.message), "")


def serve_web(
    agent_or_runner: BaseAgent | Runner,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    identity: Identity | None = None,
    insecure_anonymous: bool = False,
    max_body: int = MAX_BODY,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve the `adk web` app with uvicorn, on loopback unless there is an identity (as `serve`).

    On an IPv4 loopback address, only requests naming this host are answered, so that a web page
    elsewhere cannot reach the server through DNS rebinding; `allowed_hosts` adds names.
    """
    refuse_anonymous_public(host, identity, insecure_anonymous)
    import uvicorn
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    from adk.runner import Runner

    runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
    app: Any = create_web_app(runner, identity=identity, max_body=max_body)
    if is_loopback(host) and ":" not in host:  # starlette cannot read an IPv6 Host header
        app = TrustedHostMiddleware(app, allowed_hosts=[host, "127.0.0.1", "localhost", *allowed_hosts])
    uvicorn.run(app, host=host, port=port)
