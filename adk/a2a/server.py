"""An adk agent served over A2A (the a2a extra): its agent card, and JSON-RPC `message/send`,
`message/stream`, `tasks/get`, `tasks/cancel` (and the rest the a2a-sdk's handler answers).

`create_app(runner, url=...)` is the Starlette app; `serve(agent_or_runner)` runs it with uvicorn,
on loopback unless there is an identity function (the same rule as `adk serve`), behind the Host
check of adk.serving. The SDK is imported when an app is made, never by `import adk.a2a`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from adk.errors import RequestRefused
from adk.serving import MAX_BODY, Identity, host_check, refuse_anonymous_public, user_of

if TYPE_CHECKING:
    from a2a.types import AgentCard
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

    from adk.agents.base import BaseAgent
    from adk.runner import Runner

__all__ = ["CARD_PATH", "agent_card", "create_app", "serve"]

CARD_PATH = "/.well-known/agent-card.json"
"""Where the agent card is published (A2A's well-known path)."""


def agent_card(agent: BaseAgent, url: str, *, version: str = "1.0.0") -> AgentCard:
    """The card of `agent` served at `url`: its name and description, one skill per tool it has
    (or one skill, the agent itself), text in and out, streaming, no push notifications."""
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

    tools = getattr(agent, "tools", None)
    skills = [
        AgentSkill(id=name, name=name, description=tool.description or name, tags=["tool"])
        for name, tool in (tools.items() if isinstance(tools, dict) else ())
        if name != "transfer_to_agent"
    ] or [
        AgentSkill(
            id=agent.name, name=agent.name, description=agent.description or agent.name, tags=["agent"]
        )
    ]
    return AgentCard(
        name=agent.name,
        description=agent.description or agent.name,
        version=version,
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )


def create_app(
    runner: Runner,
    *,
    url: str,
    identity: Identity | None = None,
    max_body: int = MAX_BODY,
    version: str = "1.0.0",
) -> Starlette:
    """A Starlette app that serves `runner`'s agent over A2A JSON-RPC at `/`, its card at `CARD_PATH`.

    `url` is where clients reach it (the card says so). Each request's user is the one `identity`
    names (401 if it names none; without it every client is `anonymous`): the tasks it sees and
    the sessions its contexts name are that user's. Bodies over `max_body` bytes get 413.
    """
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    from adk.a2a.executor import AdkExecutor

    if max_body < 1:
        raise ValueError(f"max_body: a number of bytes, at least 1, not {max_body}")
    card = agent_card(runner.agent, url, version=version)
    handler = DefaultRequestHandler(
        agent_executor=AdkExecutor(runner), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card, card_url=CARD_PATH), *create_jsonrpc_routes(handler, "/")]
    middleware = [Middleware(_BodyLimit, limit=max_body)]
    if identity is not None:
        middleware.append(_identity_middleware(identity))
    return Starlette(routes=routes, middleware=middleware)


def _identity_middleware(identity: Identity) -> Any:
    """Starlette's authentication middleware, asking `identity` who sent each request but the card's."""
    from starlette.authentication import (
        AuthCredentials,
        AuthenticationBackend,
        AuthenticationError,
        SimpleUser,
    )
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.requests import HTTPConnection, Request
    from starlette.responses import JSONResponse

    class Backend(AuthenticationBackend):
        async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, SimpleUser] | None:
            if conn.url.path == CARD_PATH:
                return None
            try:
                user = await user_of(identity, Request(conn.scope))
            except RequestRefused as e:
                raise AuthenticationError(e.detail) from e
            return AuthCredentials(["authenticated"]), SimpleUser(user)

    def refused(conn: HTTPConnection, error: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=401)

    return Middleware(AuthenticationMiddleware, backend=Backend(), on_error=refused)


class _BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413 and reaches nothing."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.responses import JSONResponse

        body, more, messages = 0, True, []
        while more:
            message = await receive()
            messages.append(message)
            body += len(message.get("body", b""))
            more = message.get("more_body", False) and message["type"] == "http.request"
            if body > self.limit:
                detail = f"the request body is larger than the limit of {self.limit} bytes"
                await JSONResponse({"detail": detail}, status_code=413)(scope, receive, send)
                return

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


def serve(
    agent_or_runner: BaseAgent | Runner,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    url: str | None = None,
    identity: Identity | None = None,
    insecure_anonymous: bool = False,
    max_body: int = MAX_BODY,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve an agent (in a `Runner` with in-memory sessions) or a runner over A2A with uvicorn.

    The card names `url` (default `http://HOST:PORT/`). A host other than loopback needs an
    `identity` function, or `insecure_anonymous=True`; on loopback only requests naming a
    loopback host or one of `allowed_hosts` are answered (adk.serving: no DNS rebinding).
    """
    refuse_anonymous_public(host, identity, insecure_anonymous)
    import uvicorn

    from adk.runner import Runner

    runner = agent_or_runner if isinstance(agent_or_runner, Runner) else Runner(agent_or_runner)
    where = f"[{host}]" if ":" in host else host
    app = create_app(runner, url=url or f"http://{where}:{port}/", identity=identity, max_body=max_body)
    uvicorn.run(host_check(app, host, allowed_hosts), host=host, port=port)
