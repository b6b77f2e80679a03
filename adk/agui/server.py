"""The AG-UI server: `create_app` (a Starlette app around the endpoint, with CORS for the origins
given) and `serve` (that app under uvicorn, on loopback unless there is an identity function)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from adk.agui.endpoint import RECONNECT_WAIT, Endpoint
from adk.callbacks.registry import Callbacks
from adk.serving import MAX_BODY, Identity, host_check, refuse_anonymous_public

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from adk.agents.base import BaseAgent
    from adk.agui.hooks import TranslateCallback
    from adk.runner import Runner

__all__ = ["create_app", "serve"]


def create_app(
    runner: Runner,
    *,
    path: str = "/",
    translate_callbacks: Callbacks | Iterable[TranslateCallback] = (),
    identity: Identity | None = None,
    max_body: int = MAX_BODY,
    cors_origins: Sequence[str] = (),
    client_state: bool = True,
    reconnect_wait: float = RECONNECT_WAIT,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    details: bool = False,
    run_callbacks: Callable[[], Iterable[object]] | None = None,
) -> Starlette:
    """A Starlette app whose POST `path` runs `runner` for an AG-UI `RunAgentInput`, streaming SSE.

    The thread id is the session id (of the user `identity` returns; without it every client is
    `anonymous`), the run id the invocation id, and the last user message the message. Bodies
    over `max_body` bytes (413) and other than `application/json` (415) are refused unread;
    browsers on `cors_origins` (none by default) may call it. Bad input gets a 4xx naming the
    problem; a failure once the stream has started is a RUN_ERROR event. With `client_state`,
    the client's `state` changes the session's. With `details`, every complete adk event also
    goes out as a CUSTOM `adk.event`. Translate callbacks are resolved here, once;
    `run_callbacks()` makes callbacks for each run, of its hooks and of its translation, so that
    what they keep lives as long as the run.
    """
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route

    if isinstance(cors_origins, str):
        raise TypeError(f"cors_origins: a list of origins such as [{cors_origins!r}], not a string")
    if max_body < 1:
        raise ValueError(f"max_body: a number of bytes, at least 1, not {max_body}")
    endpoint = Endpoint(
        runner,
        Callbacks.of(translate_callbacks),
        identity,
        max_body,
        client_state,
        reconnect_wait,
        continue_on_error,
        continue_on_response,
        details,
        run_callbacks,
    )
    middleware = []
    if cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["POST"],
                allow_headers=["accept", "authorization", "content-type"],
            )
        )
    return Starlette(routes=[Route(path, endpoint, methods=["POST"]), _about(path)], middleware=middleware)


def _about(path: str) -> Route:
    """A browser's GET of the endpoint: told what to POST there, and where that is documented."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    about = {
        "endpoint": path,
        "protocol": "AG-UI",
        "method": "POST",
        "accepts": "an AG-UI RunAgentInput as JSON (application/json)",
        "answers": "the run's AG-UI events as a text/event-stream",
        "docs": "docs/agui.md",
    }

    async def answer(request: Request) -> Response:
        return JSONResponse(about)

    return Route(path, answer, methods=["GET"])


def serve(
    agent_or_runner: BaseAgent | Runner,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    path: str = "/",
    translate_callbacks: Callbacks | Iterable[TranslateCallback] = (),
    identity: Identity | None = None,
    insecure_anonymous: bool = False,
    max_body: int = MAX_BODY,
    cors_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve an agent (in a `Runner` with in-memory sessions) or a runner over AG-UI with uvicorn.

    A host other than loopback needs an `identity` function: without one every client is
    `anonymous` and reads any thread it names; `insecure_anonymous=True` serves it anyway. On
    loopback only requests naming a loopback host or one of `allowed_hosts` are answered
    (adk.serving: no DNS rebinding).
    """
    refuse_anonymous_public(host, identity, insecure_anonymous)
    import uvicorn

    from adk.runner import Runner

    runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
    app = create_app(
        runner,
        path=path,
        translate_callbacks=translate_callbacks,
        identity=identity,
        max_body=max_body,
        cors_origins=cors_origins,
    )
    uvicorn.run(host_check(app, host, allowed_hosts), host=host, port=port)
