"""AG-UI: adk events translated to the AG-UI protocol, with translate callbacks, served over SSE.

An optional extra (`adk-callbacks[agui]`): `ag-ui-protocol` gives the event types and the SSE encoder,
starlette and uvicorn the ASGI stack. They are imported only when a translator, an app or a
server is made, so importing this package (and `adk`) stays cheap without them.

- `AguiTranslator` turns one run's adk events into AG-UI events (see its docstring for the map).
- `before_translate(event, ctx)` / `after_translate(agui_event, ctx)` hooks return a replacement
  or None (keep); the first replacement wins (the last, with `continue_on_response`); a hook that
  raises or returns something else stops the run with a `CallbackError` naming it (unless
  `continue_on_error`).
- `create_app(runner)` is a Starlette app whose POST endpoint takes a `RunAgentInput` and
  streams the run as SSE: threads scoped to the user an `identity` function names, bodies
  limited, JSON only, CORS for the origins given, frontend tools and shared state;
  `serve(agent_or_runner)` runs it with uvicorn, on loopback unless there is an identity.

Where each part lives: `hooks` (the translate hooks and their context), `translate` (the
translator), `request` (a request read and checked, who sent it, what it answers), `checks` (ids
and the client's state), `endpoint` (the ASGI endpoint and its streaming), `resume` (SSE ids,
and continuing a run for a client that reconnects with `Last-Event-ID`), `server` (`create_app`,
`serve`).
"""

from __future__ import annotations

from adk.agui.endpoint import RECONNECT_WAIT
from adk.agui.hooks import AfterTranslate, BeforeTranslate, TranslateCallback, TranslateContext
from adk.agui.server import create_app, serve
from adk.agui.translate import APPROVAL_SCHEMA, AguiTranslator, reply_schema
from adk.serving import MAX_BODY, Identity, is_loopback

__all__ = [
    "APPROVAL_SCHEMA",
    "reply_schema",
    "MAX_BODY",
    "RECONNECT_WAIT",
    "AfterTranslate",
    "AguiTranslator",
    "BeforeTranslate",
    "Identity",
    "TranslateCallback",
    "TranslateContext",
    "create_app",
    "is_loopback",
    "serve",
]
