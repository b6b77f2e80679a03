"""An `LlmAgent`'s tool calls: one envelope per call (docs/recovery.md, docs/approvals.md).

`before_tool` guards every execution of a call (retries, repairs, resumed approvals); an
approval covers the call as the person saw it; attempts are recovered by the `on_tool_error`
chain and the `RetryPolicy`; `after_tool` runs once on the result. A call deferred for approval,
or whose tool returns `Pending`, ends in a waiting event instead. The calls of one response run
concurrently; their results go back in call order.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, assert_never

from adk.agents.checkpoints import checkpoints, forked
from adk.approvals import Answer, Approve, Ask, Pending, Reject, Reply, ToolResult
from adk.callbacks.chain import run_chain
from adk.callbacks.decisions import APPROVALS, Approved, Decision, Deferred, Halted, Rejected, Replaced
from adk.callbacks.registry import AFTER_TOOL, BEFORE_TOOL, Callbacks, decided_by
from adk.callbacks.results import Cont, Defer, Fallback, Halt, Retry
from adk.context import AgentContext, ToolContext, current_tool_call_var
from adk.errors import ToolArgumentsError, ToolNotFoundError, ToolRetry, locate, where
from adk.events import ErrorInfo, Event, Message, ObjectType, ToolCall, ToolDeclaration, new_choice, new_event
from adk.limits.timeouts import tool_bounded
from adk.recovery import Attempts, RetryPolicy, recover, sleep
from adk.recovery.attempts import judging
from adk.tools import BaseTool, parse_arguments, result_to_text

if TYPE_CHECKING:
    from adk.agents.llm import LlmAgent

__all__ = ["call_tool", "call_tools", "decided_in_call"]


def decided_in_call(decisions: Iterable[Decision]) -> None:
    """Record `decisions` taken on behalf of the tool call running (a model call its MCP server
    asked for during it: adk/mcp_requests.py) on that call's result event, where a person sees them."""
    running = current_tool_call_var.get()
    if running is not None:
        attempts: Attempts = running[1]
        for decision in decisions:
            attempts.decided(decision)


class _MissingTool(BaseTool):
    """Stands in, in the tool context, for a tool the model named but the agent does not have."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        self._available = sorted(available)

    @property
    def declaration(self) -> Any:
        raise NotImplementedError

    def error(self) -> ToolNotFoundError:
        return ToolNotFoundError(
            f"unknown tool {self.name!r}; available: {', '.join(self._available) or 'none'}"
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        raise self.error()


class _ClientTool(BaseTool):
    """A tool the caller runs (a browser's): its calls wait, like a long-running tool's, for the
    caller's result in `tool_results`."""

    def __init__(self, declaration: ToolDeclaration) -> None:
        self.name = declaration.name
        self.description = declaration.description
        self._declaration = declaration

    @property
    def declaration(self) -> ToolDeclaration:
        return self._declaration

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Pending:
        return Pending()


async def call_tools(
    agent: LlmAgent, ctx: AgentContext, calls: Sequence[ToolCall], hooks: Callbacks, policy: RetryPolicy
) -> list[Event]:
    """The results of a response's calls, in call order; more than one run concurrently."""
    if len(calls) == 1:
        return [await call_tool(agent, ctx, calls[0], hooks, policy)]
    return await _concurrently(agent, ctx, calls, hooks, policy)


async def _concurrently(
    agent: LlmAgent, ctx: AgentContext, calls: Sequence[ToolCall], hooks: Callbacks, policy: RetryPolicy
) -> list[Event]:
    """Several calls as tasks at once, their results in call order. (Apart from `call_tools`, so
    that a single call makes no closure cells, which a live run would keep for the collector.)"""
    tasks = [
        asyncio.create_task(call_tool(agent, ctx, c, hooks, policy), context=forked(str(i)))
        for i, c in enumerate(calls)
    ]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        # A tool that raised CancelledError itself ends the gather at once: its siblings
        # must not run on after the run ended.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def call_tool(
    agent: LlmAgent,
    ctx: AgentContext,
    call: ToolCall,
    hooks: Callbacks,
    policy: RetryPolicy,
    answer: Answer | None = None,
) -> Event:
    """One tool envelope, ending in a `tool.response` event (a result or an error for the model).

    Or in a waiting event, when the call is deferred or its tool returns `Pending`. `answer`
    resumes a call that waited: approved, it runs; rejected or given its result, it does not.
    """
    attempts = policy.attempts()
    token = current_tool_call_var.set((call.id, attempts))
    name = call.function.name
    tool, args, error = _prepare(agent.tools, call, ctx.invocation.client_tools)
    tctx = ToolContext(ctx.invocation, agent, ctx.branch, tool, args, call.id)
    try:
        match answer:
            case None | Approve() | Reply():
                if answer is not None:
                    tctx = _answered(attempts, tctx, answer)
                result, tctx = await _attempt_tool(hooks, attempts, tctx, error)
                if type(result) is Defer or type(result) is Pending or type(result) is Ask:
                    return _waiting(agent.name, ctx, call, result, attempts, tctx)
            case Reject(reason=reason):
                attempts.decided(Rejected(APPROVALS, f"tool:{name}", call.id, reason))
                result = f"Rejected: {reason}" if reason else "Rejected"
            case ToolResult(value=result):
                pass
            case unreachable:
                assert_never(unreachable)
        if after := hooks.impls["after_tool"]:
            replaced: list[object] = []
            result = await run_chain(after, AFTER_TOOL, result, tctx, deciders=replaced)
            for owner in replaced:
                attempts.decided(Replaced(decided_by(owner, "after_tool"), f"tool:{tctx.tool.name}"))
        content, info = result_to_text(result), None
    except Exception as e:
        content = _error_text(ctx, tctx.tool, e)
        info = ErrorInfo.of(e, where(e) or f"tool:{name}")
    finally:
        current_tool_call_var.reset(token)
    event = new_event(ctx.invocation.invocation_id, agent.name, ObjectType.TOOL_RESPONSE, ctx.branch)
    event.choices = [new_choice(Message.tool(content, tool_call_id=call.id, name=name))]
    event.error = info
    decisions = attempts.decisions
    if decisions is not None:
        event.decisions = tuple(decisions)
    return event


def _answered(attempts: Attempts, tctx: ToolContext, answer: Approve | Reply) -> ToolContext:
    """`tctx` approved by the person's answer (and carrying their reply to its question), which
    its decisions record: a reply declining the question as a rejection."""
    target = f"tool:{tctx.tool.name}"
    if type(answer) is Reply and answer.values is None:
        attempts.decided(Rejected(APPROVALS, target, tctx.tool_call_id, answer.reason))
    else:
        attempts.decided(Approved(APPROVALS, target, tctx.tool_call_id))
    return dataclasses.replace(tctx, approved=True, reply=answer if type(answer) is Reply else None)


def _waiting(
    author: str,
    ctx: AgentContext,
    call: ToolCall,
    why: Defer | Pending | Ask,
    attempts: Attempts,
    tctx: ToolContext,
) -> Event:
    """The event of a call left waiting: for approval (its `Deferred` decision says why, or what
    the tool asks the person), or a result, the client's if it called a client's tool."""
    ctx.invocation.waiting.append(call.id)
    if type(why) is Ask:  # the question is what the person is shown, and what a reply must fit
        asked = Deferred(
            why.by, f"tool:{tctx.tool.name}", call.id, _snapshot(tctx.args), why.message, why.schema
        )
        attempts.decided(asked)
    decisions = attempts.decisions
    if type(why) is Defer or type(why) is Ask:
        kind = ObjectType.APPROVAL_REQUEST
    else:
        kind = ObjectType.CLIENT_PENDING if type(tctx.tool) is _ClientTool else ObjectType.TOOL_PENDING
    return Event.new(
        ctx.invocation_id,
        author,
        branch=ctx.branch,
        object=kind,
        long_running_tool_ids=[call.id],
        decisions=() if decisions is None else tuple(decisions),
    )


def _prepare(
    tools: dict[str, BaseTool], call: ToolCall, client: tuple[ToolDeclaration, ...]
) -> tuple[BaseTool, dict[str, Any], Exception | None]:
    """The tool and decoded arguments of `call`, or the error that keeps it from starting."""
    name = call.function.name
    tool = tools.get(name)
    if tool is None and client:
        tool = next((_ClientTool(d) for d in client if d.name == name), None)
    if tool is None:
        missing = _MissingTool(name, tools)
        return missing, {}, missing.error()
    try:
        return tool, parse_arguments(name, call.function.arguments), None
    except ToolArgumentsError as e:
        return tool, {}, e


def _error_text(ctx: AgentContext, tool: BaseTool, error: Exception) -> str:
    """What the model is told of a failed tool call; a `ToolRetry` asks it to correct the call."""
    if isinstance(error, ToolRetry):
        count = ctx.invocation.count_tool_retry(tool.name)
        if count <= tool.max_retries:
            return f"Error: {error}. Correct the call and try again."
        return (
            f"Error: tool {tool.name!r} asked for a corrected call {count} times, more than its "
            f"max_retries={tool.max_retries}; do not call it again. Last message: {error}"
        )
    return f"Error: {type(error).__name__}: {error}"


async def _attempt_tool(
    hooks: Callbacks, attempts: Attempts, tctx: ToolContext, error: Exception | None
) -> tuple[Any, ToolContext]:
    """The attempts of one tool call: its result, or what stands in for it, and the last context.

    `error` when the call could not even start (an unknown tool, arguments that are not JSON).
    `before_tool` guards every execution: no body runs with a tool and arguments its chain
    has not passed. A retry with the same tool and equal arguments is not checked again; one
    that changes either (repaired arguments, another tool, arguments edited in place) is. An
    approved call whose tool or arguments change is approved no more: it asks again.
    """
    before = hooks.impls["before_tool"]
    passed: tuple[BaseTool, dict[str, Any]] | None = None
    # An approval covers the call as the person's request showed it (adk.agents.resume), no other.
    approved = (tctx.tool, _snapshot(tctx.args)) if tctx.approved else None
    while True:
        if error is None:
            if approved is not None:
                tctx = _approval(tctx, approved)
            if before and (passed is None or _changed(tctx, passed)):
                deciders: list[object] = []
                held_back: list[ToolContext] = []  # a Defer's call, as the hooks before it left it
                # where a callback adds its decisions (Budget's tool caps)
                token = judging.set(attempts) if hooks.decide else None
                try:
                    answer: Cont[ToolContext] | Halt[Any] | Defer
                    answer = await run_chain(before, BEFORE_TOOL, tctx, deciders=deciders, threaded=held_back)
                finally:
                    if token is not None:
                        judging.reset(token)
                if not isinstance(answer, Cont):  # halted or deferred (a class pattern costs more)
                    return _before_tool(answer, deciders, attempts, tctx, held_back)
                tctx = answer.ctx
                passed = (tctx.tool, _snapshot(tctx.args))
            held = _held(attempts, tctx, approved)
            if held is not None:
                return held
            try:
                return await _run(tctx, tctx.tool.validate(tctx.args)), tctx
            except Exception as e:
                error = e
        locate(error, f"tool:{tctx.tool.name}")
        match await recover(hooks, "on_tool_error", error, tctx, attempts):
            case Fallback(value=value):
                return value, tctx
            case Retry(ctx=tctx, delay=wait):
                await sleep(wait or 0.0)
                error = None
            case other:
                assert_never(other)


def _run(tctx: ToolContext, args: dict[str, Any]) -> Awaitable[Any]:
    """The tool's body, held to its `timeout`; through the run's `Checkpoints` if it has any (a
    durable run's: then the call is a step)."""
    made = checkpoints.get()
    if made is not None:
        return made.run_tool(tctx.tool, args, tctx)
    return tool_bounded(tctx.tool.run(args, tctx), tctx.tool.name, tctx.tool.timeout)


def _approval(tctx: ToolContext, approved: tuple[BaseTool, dict[str, Any]]) -> ToolContext:
    """`tctx`, approved while it is the call the person approved, and not once a repair changed it."""
    if tctx.approved == _changed(tctx, approved):
        return dataclasses.replace(tctx, approved=not tctx.approved)
    return tctx


def _before_tool(
    checked: Halt[Any] | Defer,
    deciders: list[object],
    attempts: Attempts,
    tctx: ToolContext,
    held_back: list[ToolContext],
) -> tuple[Any, ToolContext]:
    """The before_tool chain's answer `checked` that stopped the call (`deciders`, who decided):
    the call's outcome, a `Halt`'s value or a `Defer`. A `Defer` shows the person the call as it
    would run: as the hooks before the deferring one left it (`held_back`), so that approving it
    approves what runs. The caller awaits the chain itself: a coroutine less a call."""
    match checked:
        case Halt(value=value):
            attempts.decided(Halted(decided_by(deciders[0], "before_tool"), f"tool:{tctx.tool.name}"))
            return value, tctx
        case Defer():
            shown = held_back[0] if held_back else tctx
            return _defer(attempts, shown, decided_by(deciders[0], "before_tool"), checked)
        case unreachable:
            assert_never(unreachable)


def _held(
    attempts: Attempts, tctx: ToolContext, approved: tuple[BaseTool, dict[str, Any]] | None
) -> tuple[Defer, ToolContext] | None:
    """A `Defer` if the call may not run without (another) approval, else None."""
    if tctx.tool.requires_approval and not tctx.approved:
        why = Defer(f"tool {tctx.tool.name!r} requires approval")
        return _defer(attempts, tctx, f"tool:{tctx.tool.name}", why)
    if approved is not None and _changed(tctx, approved):  # by a callback, once approved
        return _defer(attempts, tctx, APPROVALS, _changed_after(approved[0], tctx))
    return None


def _defer(attempts: Attempts, tctx: ToolContext, by: str, why: Defer) -> tuple[Defer, ToolContext]:
    target = f"tool:{tctx.tool.name}"
    attempts.decided(Deferred(by, target, tctx.tool_call_id, _snapshot(tctx.args), why.reason))
    return why, tctx


def _changed(tctx: ToolContext, call: tuple[BaseTool, dict[str, Any]]) -> bool:
    """Whether `tctx` would run another tool, or other arguments, than `call`."""
    return tctx.tool is not call[0] or tctx.args != call[1]


def _changed_after(tool: BaseTool, tctx: ToolContext) -> Defer:
    """Why an approved call asks again: a callback changed it after the approval."""
    if tctx.tool is tool:
        return Defer(f"tool {tool.name!r}: its arguments changed after the approval")
    return Defer(f"tool {tctx.tool.name!r} took the place of the approved {tool.name!r}")


def _snapshot(value: Any) -> Any:
    """A copy of JSON-like arguments deep enough that an edit made in place later shows as a change."""
    if type(value) is dict:
        copied = dict(value)
        for key, item in value.items():
            if type(item) is dict or type(item) is list:
                copied[key] = _snapshot(item)
        return copied
    if type(value) is list:
        return [_snapshot(item) for item in value]
    return value
