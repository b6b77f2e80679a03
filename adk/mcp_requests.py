"""What an MCP server asks adk's client: sampling, roots and elicitation (docs/mcp.md).

Each is off unless its `McpToolset` option gives it, and only then is its capability declared
(the server offers tools that use it only to a client that declares it):

- `sampling=True` (or a check `(request, ctx) -> bool`): a `sampling/createMessage` is answered
  by the model of the agent whose tool call is running, through that agent's `before_model` and
  `after_model` hooks (guardrails, budgets, the runner's callbacks), its attempts recovered by
  `on_model_error` (`Retry`, `Fallback`) to its retry policy's bound; a check that says False
  refuses it, and so does a failure no recovery answers (in one line).
- `roots=[...]`: paths (or `file://` URIs) answered to `roots/list`.
- `elicitation=fn`: a server's question (`elicitation/create`) is answered in-process by
  `fn(McpQuestion, ctx)`: a dict of the answers accepts, None declines. `elicitation=True`: the
  person answers: the call is held open (adk/mcp_held.py) and its run pauses with the question
  (`adk.approvals.Ask`) until `Reply(values)` or `Reject` answers it.

A server asks inside one of adk's calls to it; the request carries no reference to that call, so
it is answered only while exactly one call runs on the connection (a toolset shared by two runs
never answers one run's server request with the other's agent, model or person), in the context
of that call: `current_invocation()` and `current_tool_call_id()` name it for the hooks.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from adk.agents.llm import LlmAgent
from adk.agents.tool import tool_events
from adk.agents.tool_call import decided_in_call
from adk.approvals import Ask, Reply
from adk.context import ModelContext, ToolContext
from adk.events import LlmResponse, Message
from adk.models.base import LlmRequest, Model
from adk.recovery import Attempts
from adk.recovery.policy import DEFAULT_POLICY

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext
    from mcp.types import (
        CreateMessageRequestParams,
        CreateMessageResult,
        ElicitRequestParams,
        ElicitResult,
        ErrorData,
        ListRootsResult,
    )

__all__ = ["Answer", "InCall", "McpQuestion", "Requests", "SamplingCheck"]

T = TypeVar("T")

SamplingCheck = Callable[[LlmRequest, ToolContext], bool]
"""Decides whether a server's sampling request (as the request the model would be sent) runs."""


@dataclass(frozen=True, slots=True)
class McpQuestion:
    """A server's question to the person: its `message` and the JSON schema of the answer."""

    server: str
    message: str
    schema: dict[str, Any] = field(default_factory=dict)


Answer = Callable[[McpQuestion, ToolContext], "dict[str, Any] | Awaitable[dict[str, Any] | None] | None"]
"""Answers a server's question: the answers (accept), or None (decline)."""


class InCall:
    """One tool call running on the connection (held open while its run waits for a person's reply):
    the context its server's requests are answered in, where its events go, and its question."""

    def __init__(self, ctx: ToolContext) -> None:
        self.reply: asyncio.Future[ElicitResult] | None = None
        """What the server's question waits on: the person's reply, once the run resumes."""
        self.moved(ctx)

    def moved(self, ctx: ToolContext) -> None:
        """The call goes on in `ctx` (a resumed run's): its requests, hooks and events are that run's."""
        self.ctx = ctx
        self.context = contextvars.copy_context()
        self.emit = tool_events()
        self.asked: asyncio.Future[Ask] = asyncio.get_running_loop().create_future()
        """Set when the server asks the person: the call's run pauses with the question."""

    def answer(self, reply: Reply) -> None:
        """Give the server the person's reply: accept with its values, or decline."""
        from mcp.types import ElicitResult

        waiting, self.reply = self.reply, None
        if waiting is not None and not waiting.done():
            values = reply.values
            result = (
                ElicitResult(action="decline")
                if values is None
                else ElicitResult(action="accept", content=values)
            )
            waiting.set_result(result)


class Requests:
    """The answers of one toolset to its server's requests, and the calls they may run in."""

    def __init__(
        self,
        server: str,
        sampling: bool | SamplingCheck,
        roots: Sequence[str],
        elicitation: Answer | bool | None,
    ) -> None:
        self.server = server
        self.sampling = sampling
        self.roots = [_uri(r) for r in roots]
        self.elicitation = elicitation
        self._calls: list[InCall] = []

    def client_options(self) -> dict[str, Any]:
        """The SDK `Client`'s callbacks for what is on: each declares its capability."""
        options: dict[str, Any] = {}
        if self.sampling:
            options["sampling_callback"] = self._sample
        if self.roots:
            options["list_roots_callback"] = self._list_roots
        if self.elicitation is not None and self.elicitation is not False:
            options["elicitation_callback"] = self._elicit
        return options

    def enter(self, ctx: ToolContext) -> InCall:
        """A call starts: until it `leave`s, a server request may be answered in its context."""
        call = InCall(ctx)
        self._calls.append(call)
        return call

    def leave(self, call: InCall) -> None:
        if call in self._calls:
            self._calls.remove(call)

    async def _in_call(self, what: str, work: Callable[[InCall], Coroutine[Any, Any, T]]) -> T | ErrorData:
        """`work` in the context of the one call running, or the error that refuses the request."""
        from mcp.types import INVALID_REQUEST, ErrorData

        if len(self._calls) != 1:
            running = f"{len(self._calls)} are running" if self._calls else "none is running"
            return ErrorData(
                code=INVALID_REQUEST,
                message=f"adk answers {what} only during one tool call of its own; {running}",
            )
        call = self._calls[0]
        task: asyncio.Task[T] = asyncio.get_running_loop().create_task(
            work(call), context=call.context.copy()
        )
        try:
            return await task
        except _Refused as e:
            return ErrorData(code=INVALID_REQUEST, message=str(e))
        except Exception as e:
            line = " ".join(str(e).split())
            return ErrorData(code=INVALID_REQUEST, message=f"{what} failed: {type(e).__name__}: {line}")

    async def _sample(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        return await self._in_call("sampling", lambda call: self._sample_in(call.ctx, params))

    async def _sample_in(self, ctx: ToolContext, params: CreateMessageRequestParams) -> CreateMessageResult:
        from mcp.types import CreateMessageResult, TextContent

        model = getattr(ctx.agent, "model", None)
        if not isinstance(model, Model):
            raise _Refused(f"agent {ctx.agent.name!r} has no model to answer with")
        request = LlmRequest(
            instruction=params.system_prompt or "",
            messages=[_message(m.role, m.content) for m in params.messages],
            max_tokens=params.max_tokens,
            temperature=params.temperature,
        )
        check = self.sampling
        if callable(check) and not check(request, ctx):
            raise _Refused(f"a check refused MCP server {self.server!r}'s sampling request")
        response = await _through_hooks(ModelContext(ctx.invocation, ctx.agent, ctx.branch, request, model))
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=response.content),
            model=response.model or model.name,
            stop_reason="endTurn",
        )

    async def _list_roots(self, context: ClientRequestContext) -> ListRootsResult:
        from mcp.types import ListRootsResult, Root
        from pydantic import FileUrl

        return ListRootsResult(roots=[Root(uri=FileUrl(uri), name=name) for uri, name in self.roots])

    async def _elicit(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        return await self._in_call("elicitation", lambda call: self._elicit_in(call, params))

    async def _elicit_in(self, call: InCall, params: ElicitRequestParams) -> ElicitResult:
        from mcp.types import ElicitRequestFormParams, ElicitResult

        answer = self.elicitation
        if answer is None or answer is False:  # the callback is given to the SDK only with one
            raise _Refused("adk answers no elicitation here")
        if not isinstance(params, ElicitRequestFormParams):
            raise _Refused("adk answers form elicitations only, not URL ones")
        schema = dict(params.requested_schema)
        if answer is True:  # the person answers: the call's run pauses with the question
            reply: asyncio.Future[ElicitResult] = asyncio.get_running_loop().create_future()
            call.reply = reply
            if not call.asked.done():
                call.asked.set_result(Ask(params.message, schema, f"mcp:{self.server}"))
            return await reply
        given = answer(McpQuestion(self.server, params.message, schema), call.ctx)
        if inspect.isawaitable(given):
            given = await given
        if given is None:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=dict(given))


class _Refused(Exception):
    """A server request adk refuses: its message is the one line the server gets."""


async def _through_hooks(mctx: ModelContext) -> LlmResponse:
    """The model's answer to `mctx.request` as the agent's model calls go: its `before_model` and
    `after_model` hooks, and attempts recovered by `on_model_error` (`Retry`, `Fallback`) to its
    retry policy's bound; a final error refuses the request. What the hooks decided goes on the
    result event of the tool call it happened during (a person sees a retry or fallback there)."""
    invocation, agent = mctx.invocation, mctx.agent
    policy = getattr(agent, "retry_policy", None) or invocation.retry_policy or DEFAULT_POLICY
    hooks = invocation.hooks_for(agent)
    if isinstance(agent, LlmAgent):
        hooks, _, _ = agent.recovery(hooks, policy)  # its recovery: the default policy's judgement too
    attempts = Attempts(policy)
    try:  # metered as the agent's own calls are (a Budget counts what a server asks for)
        return await agent.call_aside(hooks, mctx, attempts)
    finally:
        decided_in_call(attempts.decisions or ())


def _message(role: str, content: Any) -> Message:
    """A sampling message as adk's: text only."""
    from mcp.types import TextContent

    blocks = content if isinstance(content, list) else [content]
    if not all(isinstance(b, TextContent) for b in blocks):
        raise _Refused("adk samples text messages only")
    return Message(
        role="assistant" if role == "assistant" else "user", content="\n".join(b.text for b in blocks)
    )


def _uri(root: str) -> tuple[str, str]:
    """A root's `file://` URI and its name (the directory's)."""
    if root.startswith("file://"):
        return root, root.rstrip("/").rsplit("/", 1)[-1]
    path = Path(root).resolve()
    return path.as_uri(), path.name
