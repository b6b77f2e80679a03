"""`LlmAgent`: calls a model, runs the tools it asks for, and loops until it answers.

Each model call and each tool call is one envelope (docs/recovery.md): `before_*` once, attempts
inside (retried as the `on_*_error` chain and the `RetryPolicy` decide), `after_*` once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeAlias, assert_never

from adk.agents.base import BaseAgent, Steps
from adk.agents.output import CorrectOutput, Output
from adk.agents.resume import RESUMING, finish_calls, handed_over_to, pending_calls
from adk.agents.tool import AgentTool, Relay
from adk.agents.transfer import TRANSFER_TOOL, TransferTool, hand_over, transfer_targets, transferred
from adk.approvals import Answer, Approve, Pending, Reject, ToolResult
from adk.callbacks.chain import run_after, run_before
from adk.callbacks.decisions import APPROVALS, Approved, Deferred, Halted, Rejected, Replaced
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks, decided_by
from adk.callbacks.results import Cont, Defer, Fallback, Halt, Retry
from adk.context import AgentContext, ModelContext, ToolContext, _current_tool_call_id
from adk.errors import (
    MaxIterationsExceeded,
    StreamInterruptedError,
    ToolArgumentsError,
    ToolNotFoundError,
    ToolRetry,
    locate,
    where,
)
from adk.events import (
    ErrorInfo,
    Event,
    LlmResponse,
    Message,
    ObjectType,
    ToolCall,
    ToolDeclaration,
    _choice,
    _event,
)
from adk.models.base import LlmRequest, Model, _request
from adk.recovery import Attempts, RetryPolicy, policy_callbacks, recover, sleep
from adk.tools import BaseTool, FunctionTool, Toolset, parse_arguments, result_to_text

__all__ = ["LlmAgent", "MaxIterationsExceeded"]

log = logging.getLogger(__name__)


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


async def _close(stream: AsyncIterator[LlmResponse]) -> None:
    """Close a model's stream (its HTTP response) at once, rather than when it is collected."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


class LlmAgent(BaseAgent):
    """An agent that calls `model` with `instruction` and the conversation, and runs `tools`.

    Tools are `BaseTool`s, plain typed functions (wrapped in a `FunctionTool`) or agents
    (wrapped in an `AgentTool`). With `sub_agents`, or under an `LlmAgent` parent, the model is
    offered `transfer_to_agent` (docs/agents.md). With `output_type`, the final answer is JSON
    of that type, validated, and corrected up to `output_retries` times; `output_key` stores it
    (or, without a type, the answer's text) in session state.

    The tool calls of one response run concurrently; their results go back in call order, and
    one failing does not cancel the others. `max_iterations` bounds the model↔tool round trips.
    """

    def __init__(
        self,
        name: str,
        *,
        model: Model,
        instruction: str = "",
        tools: Sequence[BaseTool | Toolset | BaseAgent | Callable[..., Any]] = (),
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        max_iterations: int = 10,
        retry_policy: RetryPolicy | None = None,
        description: str = "",
        sub_agents: Sequence[BaseAgent] = (),
        disallow_transfer_to_parent: bool = False,
        disallow_transfer_to_peers: bool = False,
        output_type: type[Any] | None = None,
        output_key: str | None = None,
        output_retries: int = 2,
    ) -> None:
        self.disallow_transfer_to_parent = disallow_transfer_to_parent
        self.disallow_transfer_to_peers = disallow_transfer_to_peers
        super().__init__(name, description=description, callbacks=callbacks, sub_agents=sub_agents)
        if max_iterations < 1:
            raise ValueError(f"agent {name!r}: max_iterations must be at least 1, got {max_iterations}")
        if output_retries < 0:
            raise ValueError(f"agent {name!r}: output_retries must be 0 or more, got {output_retries}")
        self.model = model
        self.instruction = instruction
        self.toolsets = [t for t in tools if isinstance(t, Toolset)]
        """Sources of tools listed before each model call (`adk.mcp.McpToolset`)."""
        made = [
            t if isinstance(t, BaseTool) else AgentTool(t) if isinstance(t, BaseAgent) else FunctionTool(t)
            for t in tools
            if not isinstance(t, Toolset)
        ]
        self._own_tools = self.tools = {t.name: t for t in made}
        if len(self.tools) != len(made):
            raise ValueError(f"agent {name!r} has two tools with the same name")
        if TRANSFER_TOOL in self.tools:
            raise ValueError(f"agent {name!r}: the tool name {TRANSFER_TOOL!r} is kept for transfers")
        self.max_iterations = max_iterations
        self.retry_policy = retry_policy
        self._output = Output(name, output_type, output_key) if output_type or output_key else None
        self._correct = Callbacks.of([CorrectOutput(name, output_retries)]) if output_type else Callbacks.of()
        self._relays = any(isinstance(t, AgentTool) for t in made)
        """Whether some tool is an agent, whose events stream out while the tool calls run."""
        self._transfer: TransferTool | None = None
        self._set_transfer()
        self._stepped = type(self)._run_body is LlmAgent._run_body
        """Whether its body may be run as steps (`_steps`): its class does not change it."""
        self._recovery: tuple[Callbacks, RetryPolicy, Callbacks, bool] | None = None
        """The last (hooks, policy, hooks + policy, no model hooks): the same for every run without
        run callbacks."""

    def _adopted(self) -> None:
        self._set_transfer()

    def _set_transfer(self) -> None:
        """Offer `transfer_to_agent` if this agent can reach another (again when it gets a parent)."""
        own = self._own_tools
        own.pop(TRANSFER_TOOL, None)
        targets = transfer_targets(self)
        self._transfer = TransferTool(self, targets) if targets else None
        if self._transfer is not None:
            own[TRANSFER_TOOL] = self._transfer
        self.tools = own
        self._declarations = [t.declaration for t in own.values()]

    async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
        steps = _Steps(self, ctx, ctx.invocation.hooks_for(self))
        while not steps.over:
            step = await steps.next()
            if isinstance(step, list):
                for event in step:
                    yield event
            else:
                try:
                    async for event in step:
                        yield event
                finally:
                    await step.aclose()  # now, when the caller stops mid-stream, not at gc

    def _steps(self, ctx: AgentContext, hooks: Callbacks) -> Steps | None:
        return _Steps(self, ctx, hooks) if self._stepped else None

    async def _list_tools(self) -> None:
        """The agent's own tools and its toolsets' now; a toolset that fails is left out, with a warning."""
        tools = dict(self._own_tools)
        for toolset in self.toolsets:
            try:
                listed = await toolset.get_tools()
            except Exception as e:
                log.warning("agent %r goes on without the tools of %r: %s", self.name, toolset.name, e)
                continue
            for t in listed:
                tools.setdefault(t.name, t)
        self.tools = tools
        self._declarations = [t.declaration for t in tools.values()]

    async def _call_model(
        self,
        steps: _Steps,
        mctx: ModelContext,
        attempts: Attempts,
        failed: Exception | None = None,
        opened: tuple[AsyncIterator[LlmResponse], LlmResponse] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """The rest of a model call whose first attempt (`_Steps._model`'s) failed or streams:
        `failed` is its error, to recover; `opened` its open stream and first partial chunk, to go
        on with. Yields partial events, then the final response's event, which `steps` takes
        (`_Steps.answered`) before it goes.
        """
        ctx = steps.ctx
        hooks = steps.recovery
        while True:
            streamed = False
            response: LlmResponse | None = None
            try:
                if failed is not None:  # handled below as if this attempt had failed
                    error, failed = failed, None
                    raise error
                stream = opened[0] if opened is not None else mctx.model.generate(mctx.request)
                try:
                    if opened is not None:
                        first, opened = opened[1], None
                        streamed = True
                        yield self._partial(ctx, first)
                    async for chunk in stream:
                        if chunk.is_partial:
                            streamed = True
                            yield self._partial(ctx, chunk)
                        else:
                            response = chunk
                finally:
                    await _close(stream)
                final = self._checked(mctx.model, response)
                break
            except Exception as error:
                locate(error, f"model:{mctx.model.name}")
                decision = await recover(hooks, "on_model_error", error, mctx, attempts)
                yield self._attempt_failed(ctx, mctx, error, attempts)
                if streamed:
                    yield self._discarded(ctx, mctx)
                match decision:
                    case Fallback(value=final):
                        break
                    case Retry(ctx=mctx, delay=wait):
                        await sleep(wait or 0.0)
                    case other:
                        assert_never(other)
        if hooks.get("after_model"):
            final = await self._after_model(hooks, mctx, final, attempts)
        yield steps.answered(self._response(ctx, final, attempts))

    async def _after_model(
        self, hooks: Callbacks, mctx: ModelContext, response: LlmResponse, attempts: Attempts
    ) -> LlmResponse:
        """The after_model chain on a call's final response; each callback that replaced it decided so."""
        replaced: list[object] = []
        response = await run_after(hooks, "after_model", response, mctx, deciders=replaced)
        for owner in replaced:
            attempts.decided(Replaced(decided_by(owner, "after_model"), f"model:{mctx.model.name}"))
        return response

    def _checked(self, model: Model, response: LlmResponse | None) -> LlmResponse:
        """The complete response a model's stream ended with, if there was one and it is valid."""
        if response is None:
            raise StreamInterruptedError(f"model {model.name!r} ended without a response")
        if self._output is not None and self._output.type is not None and not response.tool_calls:
            self._output.check(response)  # an OutputValidationError goes to on_model_error
        return response

    def _partial(self, ctx: AgentContext, chunk: LlmResponse) -> Event:
        """The event of a streamed chunk."""
        partial = Event.from_response(ctx.invocation_id, self.name, chunk)
        partial.branch = ctx.branch
        return partial

    def _response(self, ctx: AgentContext, response: LlmResponse, attempts: Attempts | None) -> Event:
        """The event of a model call's final response, with the decisions that shaped it (none
        without `attempts`: a call without model hooks whose first attempt succeeded)."""
        event = Event.from_response(ctx.invocation.invocation_id, self.name, response)
        event.branch = ctx.branch
        event.is_partial = False
        if attempts is not None and attempts.decisions is not None:  # set only when there are some
            event.decisions = tuple(attempts.decisions)
        return event

    def _attempt_failed(
        self, ctx: AgentContext, mctx: ModelContext, error: Exception, attempts: Attempts
    ) -> Event:
        """Tells consumers at once how a failed attempt was recovered (the response repeats it)."""
        decisions = attempts.decisions
        return Event.new(
            ctx.invocation_id,
            self.name,
            branch=ctx.branch,
            object=ObjectType.ATTEMPT_FAILED,
            is_partial=True,
            error=ErrorInfo.of(error, where(error)),
            decisions=() if decisions is None else (decisions[-1],),
        )

    def _discarded(self, ctx: AgentContext, mctx: ModelContext) -> Event:
        """Tells consumers to roll back the partial output of a failed streamed attempt."""
        return Event.new(
            ctx.invocation_id,
            self.name,
            branch=ctx.branch,
            object=ObjectType.ATTEMPT_DISCARDED,
            is_partial=True,
            error=ErrorInfo(
                type="AttemptDiscarded",
                message=f"attempt {mctx.attempt} on model {mctx.model.name!r} failed after partial output",
                where=f"model:{mctx.model.name}",
            ),
        )

    async def _call_tools(
        self, ctx: AgentContext, calls: Sequence[ToolCall], hooks: Callbacks, policy: RetryPolicy
    ) -> list[Event]:
        if len(calls) == 1:
            return [await self._call_tool(ctx, calls[0], hooks, policy)]
        tasks = [asyncio.create_task(self._call_tool(ctx, c, hooks, policy)) for c in calls]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            # A tool that raised CancelledError itself ends the gather at once: its siblings
            # must not run on after the run ended.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _call_tool(
        self,
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
        token = _current_tool_call_id.set(call.id)
        name = call.function.name
        tool, args, error = self._prepare(call, ctx.invocation.client_tools)
        tctx = ToolContext(ctx.invocation, self, ctx.branch, tool, args, call.id)
        attempts = policy.attempts()
        try:
            match answer:
                case None | Approve():
                    if answer is not None:
                        attempts.decided(Approved(APPROVALS, f"tool:{name}", call.id))
                        tctx = dataclasses.replace(tctx, approved=True)
                    result, tctx = await self._attempt_tool(hooks, attempts, tctx, error)
                    if type(result) is Defer or type(result) is Pending:
                        return self._waiting(ctx, call, result, attempts, type(tctx.tool) is _ClientTool)
                case Reject(reason=reason):
                    attempts.decided(Rejected(APPROVALS, f"tool:{name}", call.id, reason))
                    result = f"Rejected: {reason}" if reason else "Rejected"
                case ToolResult(value=result):
                    pass
                case unreachable:
                    assert_never(unreachable)
            if hooks.get("after_tool"):
                replaced: list[object] = []
                result = await run_after(hooks, "after_tool", result, tctx, deciders=replaced)
                for owner in replaced:
                    attempts.decided(Replaced(decided_by(owner, "after_tool"), f"tool:{tctx.tool.name}"))
            content, info = result_to_text(result), None
        except Exception as e:
            content = self._error_text(ctx, tctx.tool, e)
            info = ErrorInfo.of(e, where(e) or f"tool:{name}")
        finally:
            _current_tool_call_id.reset(token)
        event = _event(ctx.invocation_id, self.name, ObjectType.TOOL_RESPONSE, ctx.branch)
        event.choices = [_choice(Message.tool(content, tool_call_id=call.id, name=name))]
        event.error = info
        decisions = attempts.decisions
        if decisions is not None:
            event.decisions = tuple(decisions)
        return event

    def _waiting(
        self, ctx: AgentContext, call: ToolCall, why: Defer | Pending, attempts: Attempts, client: bool
    ) -> Event:
        """The event of a call left waiting: for approval (its `Deferred` decision says why), or a
        result, the client's if it called a client's tool."""
        ctx.invocation.waiting.append(call.id)
        decisions = attempts.decisions
        if type(why) is Defer:
            kind = ObjectType.APPROVAL_REQUEST
        else:
            kind = ObjectType.CLIENT_PENDING if client else ObjectType.TOOL_PENDING
        return Event.new(
            ctx.invocation_id,
            self.name,
            branch=ctx.branch,
            object=kind,
            long_running_tool_ids=[call.id],
            decisions=() if decisions is None else tuple(decisions),
        )

    def _prepare(
        self, call: ToolCall, client: tuple[ToolDeclaration, ...]
    ) -> tuple[BaseTool, dict[str, Any], Exception | None]:
        """The tool and decoded arguments of `call`, or the error that keeps it from starting."""
        name = call.function.name
        tool = self.tools.get(name)
        if tool is None and client:
            tool = next((_ClientTool(d) for d in client if d.name == name), None)
        if tool is None:
            missing = _MissingTool(name, self.tools)
            return missing, {}, missing.error()
        try:
            return tool, parse_arguments(name, call.function.arguments), None
        except ToolArgumentsError as e:
            return tool, {}, e

    def _error_text(self, ctx: AgentContext, tool: BaseTool, error: Exception) -> str:
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
        self, hooks: Callbacks, attempts: Attempts, tctx: ToolContext, error: Exception | None
    ) -> tuple[Any, ToolContext]:
        """The attempts of one tool call: its result, or what stands in for it, and the last context.

        `error` when the call could not even start (an unknown tool, arguments that are not JSON).
        `before_tool` guards every execution: no body runs with a tool and arguments its chain
        has not passed. A retry with the same tool and equal arguments is not checked again; one
        that changes either (repaired arguments, another tool, arguments edited in place) is.
        """
        guarded = bool(hooks.get("before_tool"))
        passed: tuple[BaseTool, dict[str, Any]] | None = None
        while True:
            if error is None:
                if guarded and (passed is None or tctx.tool is not passed[0] or tctx.args != passed[1]):
                    deciders: list[object] = []
                    checked = await run_before(hooks, "before_tool", tctx, deciders=deciders)
                    match checked:
                        case Halt(value=value):
                            by = decided_by(deciders[0], "before_tool")
                            attempts.decided(Halted(by, f"tool:{tctx.tool.name}"))
                            return value, tctx
                        case Defer():
                            return _defer(attempts, tctx, decided_by(deciders[0], "before_tool"), checked)
                        case Cont(ctx=tctx):
                            passed = (tctx.tool, _snapshot(tctx.args))
                        case unreachable:
                            assert_never(unreachable)
                if tctx.tool.requires_approval and not tctx.approved:
                    why = Defer(f"tool {tctx.tool.name!r} requires approval")
                    return _defer(attempts, tctx, f"tool:{tctx.tool.name}", why)
                try:
                    args = tctx.tool.validate(tctx.args)
                    return await tctx.tool.run(args, tctx), tctx
                except Exception as e:
                    error = e
            locate(error, f"tool:{tctx.tool.name}")
            decision = await recover(hooks, "on_tool_error", error, tctx, attempts)
            match decision:
                case Fallback(value=value):
                    return value, tctx
                case Retry(ctx=tctx, delay=wait):
                    await sleep(wait or 0.0)
                    error = None
                case other:
                    assert_never(other)


Step: TypeAlias = "list[Event] | AsyncGenerator[Event, None]"
"""What a step of `_Steps` gives: its events, or the generator of a step that streams them."""


class _Steps:
    """One run of an `LlmAgent`, as steps that a driver awaits in turn until `over`.

    A step is a model call, a batch of tool calls, or a hand-over to another agent. One whose
    events are all known when it returns (a model call that neither streams nor fails, tool
    calls without agent tools) returns them as a list; one that streams returns the generator of
    its events, which the driver exhausts before the next step. The runner and `BaseAgent.run`
    drive the steps themselves, and so does `_run_body` (for a subclass that builds on it): a
    call answered at once then makes no generator of its own (docs/decisions.md).
    """

    __slots__ = (
        "agent",
        "bare",
        "calls",
        "coming",
        "ctx",
        "error",
        "history",
        "known",
        "left",
        "over",
        "policy",
        "recovery",
        "relay",
        "target",
        "turn",
    )
    calls: Sequence[ToolCall]

    def __init__(self, agent: LlmAgent, ctx: AgentContext, hooks: Callbacks) -> None:
        self.agent = agent
        self.ctx = ctx
        self.over = False
        self.left = agent.max_iterations
        self.turn: list[Message] = []
        """What the run added to the conversation, after the history's first `known` messages."""
        self.coming: Callable[[_Steps], Awaitable[Step]]
        """The coming step: a function, not a bound method, which would make a cycle."""
        invocation = ctx.invocation
        try:
            policy = self.policy = agent.retry_policy or invocation.retry_policy
            cached = agent._recovery
            if cached is not None and cached[0] is hooks and cached[1] is policy:
                self.recovery, self.bare = cached[2], cached[3]
            else:  # concatenating on every run would cost more than the callbacks themselves
                recovery = self.recovery = hooks + agent._correct + policy_callbacks(policy)
                # Without model hooks a call makes its context and Attempts only if it fails or
                # streams.
                self.bare = not recovery.get("before_model") and not recovery.get("after_model")
                agent._recovery = (hooks, policy, recovery, self.bare)
            # The session's history is shared and only ever extended: its first `known` messages
            # are this run's past.
            history = self.history = invocation.session.history(ctx.branch)
            self.known = len(history)
            client = invocation.client_tools
            if client and (clash := sorted({t.name for t in client}.intersection(agent.tools))):
                raise ValueError(
                    f"agent {agent.name!r} has its own tool {clash[0]!r}: a client tool cannot replace it"
                )
        except Exception as error:  # raised by the first step, where it is the run's error
            self.error = error
            self.coming = _Steps._failed
            return
        if RESUMING and ctx.invocation_id in RESUMING:  # finishing the invocation of a dead worker
            self.coming = _Steps._resume
        else:
            self.coming = _Steps._model

    def next(self) -> Awaitable[Step]:
        """The coming step."""
        return self.coming(self)

    async def _failed(self) -> Step:
        raise self.error

    async def _resume(self) -> Step:
        """The calls the dead worker left unfinished, or the turn it had handed over."""
        agent, ctx = self.agent, self.ctx
        transfer = agent._transfer
        handed_to = transfer.targets.get(handed_over_to(ctx) or "") if transfer is not None else None
        if handed_to is not None:  # the turn it had handed over goes on there
            self.over = True
            return handed_to.run(ctx.invocation, ctx.branch)
        pending = pending_calls(ctx)
        if pending is None:
            self.over = True
            return []
        self.calls = pending
        self.coming = _Steps._model
        finished = await finish_calls(ctx, pending, agent.tools, self._answer)
        return self._results(finished)

    def _answer(self, call: ToolCall, answer: Answer | None) -> Awaitable[Event]:
        return self.agent._call_tool(self.ctx, call, self.recovery, self.policy, answer)

    async def _model(self) -> Step:
        """A model call: its response's event, or the envelope that goes on with a call that
        fails or streams."""
        agent, ctx = self.agent, self.ctx
        if not self.left:
            raise MaxIterationsExceeded(
                f"agent {agent.name!r}: the model still asked for tools after"
                f" max_iterations={agent.max_iterations}"
            )
        self.left -= 1
        invocation = ctx.invocation
        if invocation.ended:
            self.over = True
            return []
        if agent.toolsets:
            await agent._list_tools()
        client = invocation.client_tools
        turn = self.turn
        request = _request(
            agent.instruction,
            self.history[: self.known] + turn if turn else self.history[: self.known],
            [*agent._declarations, *client] if client else agent._declarations,
            invocation.stream,
            agent._output.response_format if agent._output is not None else None,
        )
        hooks = self.recovery
        mctx: ModelContext | None = None
        attempts: Attempts | None = None
        model = agent.model
        started = time.monotonic()
        if not self.bare:  # else the context and Attempts are made only if the call fails or streams
            attempts = Attempts(self.policy, started)
            mctx = ModelContext(invocation, agent, ctx.branch, request, model)
            if hooks.get("before_model"):
                deciders: list[object] = []
                match await run_before(hooks, "before_model", mctx, deciders=deciders):
                    case Halt(value=halted):
                        by = decided_by(deciders[0], "before_model")
                        attempts.decided(Halted(by, f"model:{mctx.model.name}"))
                        return [self.answered(agent._response(ctx, halted, attempts))]
                    case Cont(ctx=mctx):
                        model, request = mctx.model, mctx.request
                    case unreachable:
                        assert_never(unreachable)
        # The first attempt: one that neither streams nor fails makes no generator.
        try:
            complete: LlmResponse | None = None
            handed = None
            stream = model.generate(request)
            try:
                async for chunk in stream:
                    if chunk.is_partial:  # it streams: the envelope goes on with it, open
                        handed = self._envelope(request, mctx, attempts, started, None, (stream, chunk))
                        return handed
                    complete = chunk
            finally:  # _close(stream) inlined: a coroutine less per call
                aclose = getattr(stream, "aclose", None) if handed is None else None
                if aclose is not None:
                    await aclose()
            if complete is None or agent._output is not None:
                complete = agent._checked(model, complete)
        except Exception as error:
            return self._envelope(request, mctx, attempts, started, error)
        if mctx is not None and attempts is not None and hooks.get("after_model"):
            complete = await agent._after_model(hooks, mctx, complete, attempts)
        return [self.answered(agent._response(ctx, complete, attempts))]

    def _envelope(
        self,
        request: LlmRequest,
        mctx: ModelContext | None,
        attempts: Attempts | None,
        started: float,
        failed: Exception | None,
        opened: tuple[AsyncIterator[LlmResponse], LlmResponse] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """The generator that goes on with a model call whose first attempt failed or streams."""
        agent, ctx = self.agent, self.ctx
        if mctx is None or attempts is None:  # a call without model hooks: made now
            mctx = ModelContext(ctx.invocation, agent, ctx.branch, request, agent.model)
            attempts = Attempts(self.policy, started)
        self.coming = _Steps._unanswered  # until the envelope's response is `answered`
        return agent._call_model(self, mctx, attempts, failed, opened)

    async def _unanswered(self) -> Step:
        raise RuntimeError(f"agent {self.agent.name!r}: a model call ended without a response")

    def answered(self, event: Event) -> Event:
        """Take a model call's final response: its message joins the turn, its tool calls are the
        next step; without calls it is the final answer (its output is settled before it goes:
        the event carries the `output_key`)."""
        choices = event.choices  # event.message, without a property call
        message = choices[0].message if choices else None
        calls = message.tool_calls if message is not None else ()
        if message is not None:
            self.turn.append(message)
        if calls:
            self.calls = calls
            self.coming = _Steps._tools
        else:
            self.over = True
            output = self.agent._output
            if output is not None:
                output.settle(self.ctx, event)
        return event

    async def _tools(self) -> Step:
        """The calls of the last response: their results in call order; with agent tools, their
        agents' events first, as the calls run."""
        agent = self.agent
        work = agent._call_tools(self.ctx, self.calls, self.recovery, self.policy)
        if agent._relays:
            relay = self.relay = Relay(work)
            self.coming = _Steps._relayed
            return relay.events()
        self.coming = _Steps._model
        return self._results(await work)

    async def _relayed(self) -> Step:
        self.coming = _Steps._model
        return self._results(self.relay.result)

    def _results(self, results: list[Event]) -> list[Event]:
        """A batch of tool results; what follows it is decided here, and happens in the next step."""
        turn = self.turn
        for result in results:
            turn.extend(c.message for c in result.choices if c.message is not None)
        if _waits(results):  # a call waits for a person or a result: the run pauses after them
            self.coming = _Steps._pause
            return results
        if self.agent._transfer is not None:
            target = transferred(self.ctx.invocation, self.calls)
            if target is not None:
                self.target = target
                self.coming = _Steps._hand_over
        return results

    async def _pause(self) -> Step:
        self.ctx.invocation.end_invocation()
        self.over = True
        return []

    async def _hand_over(self) -> Step:
        self.over = True
        return hand_over(self.ctx, self.target)


def _defer(attempts: Attempts, tctx: ToolContext, by: str, why: Defer) -> tuple[Defer, ToolContext]:
    target = f"tool:{tctx.tool.name}"
    attempts.decided(Deferred(by, target, tctx.tool_call_id, _snapshot(tctx.args), why.reason))
    return why, tctx


def _waits(results: Iterable[Event]) -> bool:
    """Whether any of a batch's results is a call left waiting."""
    return any(r.long_running_tool_ids for r in results)


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
