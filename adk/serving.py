"""What every HTTP server adk starts (`adk serve`, `adk web`, `adk mcp serve`, `adk a2a serve`)
checks the same way: the `Host` a request names, request bodies read as strict JSON, who sent a
request (`Identity`, `user_of`), and no server beyond loopback without an identity function.

DNS rebinding: a page on another site can point its own name at 127.0.0.1 and have a browser
send requests to a server on loopback, but the browser still names the page's host in `Host`.
So a server bound to loopback answers only requests whose `Host` is a loopback name
(`localhost`, `127.x.x.x`, `[::1]`) or one of `allowed_hosts`, and refuses others with 421. A
server beyond loopback is guarded by its identity function: it answers any `Host`, unless
`allowed_hosts` are given (then those, and loopback names).
"""

from __future__ import annotations

import inspect
import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from adk.errors import RequestRefused

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "MAX_BODY",
    "MAX_DEPTH",
    "HostCheck",
    "Identity",
    "host_check",
    "is_loopback",
    "refuse_anonymous_public",
    "strict_json",
    "user_of",
]

Identity: TypeAlias = "Callable[[Request], str | Awaitable[str | None] | None]"
"""Who sent a request: a function of the starlette `Request` (its auth header, a cookie...) that
returns the user id, or None to refuse the request (401). Each user sees only their own threads."""

MAX_BODY = 1 << 20
"""The default limit on a request body: 1 MiB."""

MAX_DEPTH = 200
"""How deep arrays and objects of a request body may nest (the limit of pydantic-core's parser)."""


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_check(app: ASGIApp, host: str, allowed_hosts: Iterable[str] = ()) -> ASGIApp:
    """`app` as a server bound to `host` serves it: behind a `HostCheck` on loopback or with
    `allowed_hosts`, as it is otherwise (its identity function guards it)."""
    names = frozenset(h.lower() for h in allowed_hosts)
    if names or is_loopback(host):
        return HostCheck(app, names)
    return app


@dataclass(frozen=True, slots=True)
class HostCheck:
    """ASGI middleware that answers a request only if its `Host` header names a loopback host or
    one of `names` (lowercase, without a port); any other gets 421 and reaches nothing."""

    app: ASGIApp
    names: frozenset[str] = frozenset()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan: no request
            await self.app(scope, receive, send)
            return
        header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        name = _name(header)
        if name is not None and (name in self.names or is_loopback(name)):
            await self.app(scope, receive, send)
            return
        from starlette.responses import JSONResponse

        detail = (
            f"the Host header {header!r} names no host this server answers (it answers loopback"
            " names and the hosts it was given with allowed_hosts)"
            if header is not None
            else "the request has no Host header"
        )
        await JSONResponse({"detail": detail}, status_code=421)(scope, receive, send)


def _name(header: str | None) -> str | None:
    """The host a `Host` header names, without its port and an IPv6 address's brackets."""
    if not header:
        return None
    if header.startswith("["):
        name, bracket, _ = header[1:].partition("]")
        return name.lower() if bracket else None
    return header.rpartition(":")[0].lower() if ":" in header else header.lower()


def strict_json(body: bytes) -> Any:
    """`body` parsed as JSON that every part of adk can store and send back as it came.

    Refused with a ValueError naming where: what is not JSON, nesting deeper than `MAX_DEPTH`
    (Python's own parser would raise RecursionError), a lone surrogate (`"\\ud800"`, which no
    UTF-8 store or stream can write), `NaN` / `Infinity`, and numbers beyond a double (`1e400`).
    """
    import pydantic_core  # here: importing adk loads no pydantic

    data = pydantic_core.from_json(body, allow_inf_nan=False)
    if pydantic_core.to_json(data, inf_nan_mode="null") != pydantic_core.to_json(data):
        raise ValueError("a number beyond the range of a double (such as 1e400)")
    return data


async def user_of(identity: Identity | None, request: Request) -> str:
    """The user `identity` names for `request` (`anonymous` without one); 401 if it names none."""
    if identity is None:
        return "anonymous"
    user: object = identity(request)
    if inspect.isawaitable(user):
        user = await user
    if user is None:
        raise RequestRefused(401, "the request carries no identity this server accepts")
    if isinstance(user, str) and user:
        return user
    raise TypeError(f"the identity function returned {user!r}, not a user id (a non-empty str) or None")


def refuse_anonymous_public(host: str, identity: object, insecure_anonymous: bool) -> None:
    """Refuse a host beyond loopback without an identity function: every client would be `anonymous`."""
    if identity is None and not insecure_anonymous and not is_loopback(host):
        raise ValueError(
            f"refusing to serve on {host} without an identity function: every client would be "
            "'anonymous' and could read any thread it names; pass identity=, or "
            "insecure_anonymous=True to serve anyway"
        )
