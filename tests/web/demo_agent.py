"""The demo's agent for the browser test: a tool, a guardrail, a 503 on Tokyo that is retried, a
revoked key on "thanks" that falls back to the backup model, a tool call refused for Atlantis,
and a count of lookups in session state."""

from typing import Any

from adk.callbacks.results import Cont, Halt
from adk.context import ModelContext, ToolContext
from adk.demo import build_agent
from adk.errors import AuthenticationError, ServerError
from adk.runner import Runner

agent, primary = build_agent(wait=0.0)
agent.description = "A weather assistant: ask it about the weather in a city."


class Faults:
    """The first model call of a turn about Tokyo fails with a 503 (the retry policy tries again);
    one that thanks fails with a 401 (the agent falls back to its backup model)."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        last = ctx.request.messages[-1]
        if last.role == "user" and "tokyo" in last.content.lower():
            primary.fail_next(ServerError("503 Service Unavailable", status_code=503))
        if last.role == "user" and "thank" in last.content.lower():
            primary.fail_next(AuthenticationError("401 API key revoked", status_code=401))
        return Cont(ctx)


class Authorize:
    """Refuses weather lookups for Atlantis."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:
        if str(ctx.args.get("city", "")).lower() == "atlantis":
            return Halt({"error": "lookups for Atlantis are not allowed"})
        return Cont(ctx)


class CountLookups:
    """Counts the tool calls of the session in its state."""

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        ctx.state["lookups"] = ctx.state.get("lookups", 0) + 1
        return result


runner = Runner(agent, callbacks=[Faults(), Authorize(), CountLookups()])
