"""An `LlmAgent`'s model call: one envelope (docs/recovery.md).

`before_model` once; attempts, each recovered by the `on_model_error` chain and the
`RetryPolicy` (`Retry` calls again, `Fallback` stands in for the response); the partial events of
an attempt that streams, then, if it fails, an `attempt.discarded` event; `after_model` once on
the final response. A call whose first attempt neither streams nor fails gives its event at once,
without a generator (`call_model`); else the envelope's generator goes on with it (`_envelope`).
An attempt is written once (`attempt`), whichever runs it; it is where the run's meter
(adk.agents.metering: a `Budget`) reserve and settle each attempt, whatever its model, and where
a durable run makes each attempt a step (adk.agents.checkpoints).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Sequence
from types import AsyncGeneratorType
from typing import TYPE_CHECKING, assert_never

from adk.agents.checkpoints import checkpoints
from adk.agents.metering import MeteredAttempt, ModelMeter
from adk.agents.model_events import after_failure, attempt_failed, partial_event, response_event
from adk.callbacks.chain import run_chain
from adk.callbacks.decisions import Decision, Halted, Refused, Replaced, carry
from adk.callbacks.registry import AFTER_MODEL, BEFORE_MODEL, Callbacks, decided_by
from adk.callbacks.results import Cont, Fallback, Halt, Retry
from adk.compaction import take_compactions
from adk.context import AgentContext, Invocation, ModelContext
from adk.errors import CallbackError, ResponseRejected, StreamInterruptedError, locate
from adk.events import Event, LlmResponse
from adk.limits.timeouts import model_bounded
from adk.models.base import LlmRequest, Model, with_max_tokens
from adk.recovery import Attempts, recover, sleep
from adk.recovery.attempts import judging

if TYPE_CHECKING:
    from adk.agents.llm_steps import LlmSteps
    from adk.agents.output import Output
    from adk.agents.steps import Step

__all__ = [
    "Opened",
    "after_model",
    "attempt",
    "call_aside",
    "call_model",
    "checked",
    "chunks_within",
    "close_stream",
]


Chunk = LlmResponse


class Opened:
    """An attempt that streams: the model's stream, still open, its first partial chunk, the
    complete response it gave before that chunk, if any, and the attempt's reservations."""

    __slots__ = ("chunk", "held", "response", "stream")

    def __init__(
        self,
        stream: AsyncIterator[LlmResponse],
        chunk: LlmResponse,
        response: LlmResponse | None,
        held: MeteredAttempt | None,
    ):
        self.stream = stream
        self.chunk = chunk
        self.response = response
        self.held = held
        """What the meter reserved for the attempt: settled when its stream ends."""


async def attempt(
    model: Model,
    request: LlmRequest,
    attempts: Attempts | None,
    meter: ModelMeter | None,
    invocation: Invocation,
    output: Output | None,
    limit: float | None = None,
) -> LlmResponse | Opened:
    """One attempt: the model's complete response (checked against `output`), or its stream once
    it streams (the caller goes on with it, and closes it); cancelled after `limit` seconds, if
    given. The run's `meter` reserves it first, and it is settled (or released, if it fails before
    any output), its decisions recorded in `attempts`. The model's stream is opened through the
    run's `Checkpoints`, if it has any (a durable run's: then the attempt is a step, which holds
    it to `limit` itself)."""
    made = checkpoints.get()
    if limit is not None and made is None:
        bounded = attempt(model, request, attempts, meter, invocation, output)
        return await model_bounded(bounded, model.name, limit)
    held: MeteredAttempt | None = None
    if meter is not None:  # a refusal fails the attempt: on_model_error sees it
        cap = getattr(model, "max_tokens", None) if request.max_tokens is None else None
        if type(cap) is int and cap > 0:  # the model's own, a count (no bool): bounded, never raised
            request = with_max_tokens(request, cap)
        held = await meter.reserve_attempt(invocation, request.model or model.name, request)
        request = held.request
    complete: LlmResponse | None = None
    stream: AsyncIterator[LlmResponse] | None = None
    try:  # a `generate` that raises before it returns a stream fails the attempt as any error does
        stream = model.generate(request) if made is None else made.generate(model, request, limit)
        async for chunk in stream:
            if chunk.is_partial:
                opened, stream = stream, None  # the caller goes on with it, and closes it
                return Opened(opened, chunk, complete, held)
            complete = chunk
        if type(stream) is AsyncGeneratorType:  # it ran to its end: closing it would do nothing
            stream = None
    except Exception:
        if held is not None and complete is None:  # failed before any output: nothing was charged
            await held.release()
        raise
    finally:  # close_stream(stream) inlined: a coroutine less per call
        aclose = None if stream is None else getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    if held is not None and (decisions := await held.settle(complete)):
        _decided(attempts, decisions)
    if complete is None or output is not None:
        complete = checked(model, complete, output)
    return complete


def checked(model: Model, response: LlmResponse | None, output: Output | None) -> LlmResponse:
    """The complete response a model's stream ended with, if there was one and it is valid."""
    if response is None:
        raise StreamInterruptedError(f"model {model.name!r} ended without a response")
    if output is not None and output.type is not None and not response.tool_calls:
        output.check(response)  # an OutputValidationError goes to on_model_error
    return response


async def call_model(steps: LlmSteps) -> Step:
    """The model call of `steps`' next step: its response's event, or the envelope that goes on
    with a call that fails or streams. The response is `steps.answered` before it goes."""
    if not steps.turn_left():
        return []
    agent, ctx, hooks = steps.agent, steps.ctx, steps.recovery
    if agent.toolsets:
        await agent.list_tools()
    request = steps.request()
    mctx: ModelContext | None = None
    model = agent.model
    started = time.monotonic()
    stored: list[Event] | None = None
    attempts: Attempts | None
    if steps.bare:  # the context and Attempts are made only if the call fails or streams; Attempts
        # now if the run has a meter, whose decisions (warnings) go on the response
        attempts = Attempts(steps.policy, started) if steps.meter is not None else None
    else:
        attempts = Attempts(steps.policy, started)
        mctx = ModelContext(ctx.invocation, agent, ctx.branch, request, model)
        if before := hooks.impls["before_model"]:
            deciders: list[object] = []
            token = judging.set(attempts) if hooks.decide else None  # where a callback adds its decisions
            try:  # the chain awaited here, not in a coroutine of its own: one less a call
                answer: Cont[ModelContext] | Halt[LlmResponse]
                answer = await run_chain(before, BEFORE_MODEL, mctx, deciders=deciders)
            except Exception as error:
                _failed_before(error, ctx, attempts)
                raise
            finally:
                if token is not None:
                    judging.reset(token)
            stored = take_compactions(ctx.invocation, ctx.branch)  # a Compact's, stored first
            if not isinstance(answer, Cont):  # halted, the call is not made (a class pattern costs more)
                return _halted(steps, answer, deciders, attempts, stored)
            mctx = answer.ctx
            model, request = mctx.model, mctx.request
    try:  # the first attempt: one that neither streams nor fails makes no generator
        outcome = await attempt(
            model, request, attempts, steps.meter, ctx.invocation, agent._output, steps.policy.attempt_timeout
        )
    except Exception as error:
        return _after(stored, _rest(steps, request, mctx, attempts, started, error))
    if isinstance(outcome, Opened):  # it streams: the envelope goes on with it, open
        return _after(stored, _rest(steps, request, mctx, attempts, started, outcome))
    if mctx is not None and attempts is not None and hooks.impls["after_model"]:
        try:
            outcome = await after_model(hooks, mctx, outcome, attempts)
        except ResponseRejected as rejected:  # judged like a failed attempt
            return _after(stored, _rest(steps, request, mctx, attempts, started, rejected))
    return _after(stored, [steps.answered(response_event(agent.name, ctx, outcome, attempts))])


def _halted(
    steps: LlmSteps,
    answer: Halt[LlmResponse],
    deciders: list[object],
    attempts: Attempts,
    stored: list[Event] | None,
) -> Step:
    """The before_model chain's `answer` halted the call: the step its response stands for
    (after the compaction events `stored`)."""
    agent = steps.agent
    attempts.decided(Halted(decided_by(deciders[0], "before_model"), f"model:{agent.model.name}"))
    return _after(stored, [steps.answered(response_event(agent.name, steps.ctx, answer.value, attempts))])


def _failed_before(error: Exception, ctx: AgentContext, attempts: Attempts) -> None:
    """A before_model chain failed with `error`: it carries to its error event what was decided
    before it, a `Compact`'s folding (whose event is dropped: the call is not made), then the
    chain's (adk.limits.RateLimit adds its own to the call's `attempts`)."""
    folded = take_compactions(ctx.invocation, ctx.branch) or ()
    carry(error, [*(d for event in folded for d in event.decisions), *(attempts.decisions or ())])


def _after(stored: list[Event] | None, step: Step) -> Step:
    """`step`, after the compaction events `stored` (adk.compaction), if any."""
    if stored is None:
        return step
    if isinstance(step, list):
        return [*stored, *step]
    return _chained(stored, step)


async def _chained(first: list[Event], then: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
    for event in first:
        yield event
    try:
        async for event in then:
            yield event
    finally:
        await then.aclose()


def _rest(
    steps: LlmSteps,
    request: LlmRequest,
    mctx: ModelContext | None,
    attempts: Attempts | None,
    started: float,
    first: Exception | Opened,
) -> AsyncGenerator[Event, None]:
    """The generator that goes on with a model call whose first attempt failed or streams."""
    agent, ctx = steps.agent, steps.ctx
    if mctx is None:  # a call without model hooks: made now
        mctx = ModelContext(ctx.invocation, agent, ctx.branch, request, agent.model)
    if attempts is None:
        attempts = Attempts(steps.policy, started)
    steps.answer_pending()  # until the envelope's response is `answered`
    return _envelope(steps, mctx, attempts, first)


async def _envelope(
    steps: LlmSteps, mctx: ModelContext, attempts: Attempts, first: Exception | Opened
) -> AsyncGenerator[Event, None]:
    """The rest of a model call: `first` is its first attempt's error, to recover, or its open
    stream, to go on with. Yields partial events, then the final response's event, which
    `steps` takes (`LlmSteps.answered`) before it goes."""
    agent, ctx, hooks = steps.agent, steps.ctx, steps.recovery
    outcome: LlmResponse | Opened | Exception | None = first
    while True:
        streamed = False
        try:
            if outcome is None:
                outcome = await attempt(
                    mctx.model,
                    mctx.request,
                    attempts,
                    steps.meter,
                    ctx.invocation,
                    agent._output,
                    steps.policy.attempt_timeout,
                )
            elif isinstance(outcome, Exception):  # handled below as if this attempt had failed
                error, outcome = outcome, None
                raise error
            if isinstance(outcome, Opened):
                streamed = True
                stream, response, held = outcome.stream, outcome.response, outcome.held
                try:
                    yield partial_event(agent.name, ctx, outcome.chunk)
                    async for chunk in chunks_within(stream, mctx.model.name, steps.policy.attempt_timeout):
                        if chunk.is_partial:
                            yield partial_event(agent.name, ctx, chunk)
                        else:
                            response = chunk
                finally:
                    await close_stream(stream)
                outcome = await _settled(mctx.model, response, agent._output, held, attempts)
            final = outcome
            if hooks.impls["after_model"]:  # a ResponseRejected fails the attempt
                final = await after_model(hooks, mctx, final, attempts)
            break
        except Exception as error:
            outcome = None
            decision = await _recovered(hooks, error, mctx, attempts)
            yield attempt_failed(agent.name, ctx, error, attempts)
            for event in after_failure(agent.name, ctx, mctx, streamed):
                yield event
            match decision:
                case Fallback(value=final):
                    final = await _after_fallback(hooks, mctx, final, attempts)
                    break
                case Retry(ctx=mctx, delay=wait):
                    await sleep(wait or 0.0)
                case other:
                    assert_never(other)
    yield steps.answered(response_event(agent.name, ctx, final, attempts))


def _recovered(
    hooks: Callbacks, error: Exception, mctx: ModelContext, attempts: Attempts
) -> Awaitable[Retry[ModelContext] | Fallback[LlmResponse]]:
    """The `on_model_error` chain's answer to a failed attempt's `error` (it raises the final
    error). A failing after_model is no failed attempt: its `CallbackError` ends the run, as it
    does in a call answered at once, and no fallback hides it."""
    if type(error) is CallbackError:
        raise error
    locate(error, f"model:{mctx.model.name}")
    return recover(hooks, "on_model_error", error, mctx, attempts)


async def _settled(
    model: Model,
    response: LlmResponse | None,
    output: Output | None,
    held: MeteredAttempt | None,
    attempts: Attempts,
) -> LlmResponse:
    """The complete response of a stream that ended, its reservations settled first (a stream
    cut after partial output never gets here: it keeps them)."""
    if held is not None and (decisions := await held.settle(response)):
        _decided(attempts, decisions)
    return checked(model, response, output)


def _decided(attempts: Attempts | None, decisions: Sequence[Decision]) -> None:
    """A settled attempt's decisions (warnings) go on the call's (`attempts`, which a call with
    a meter always has)."""
    if attempts is not None:
        for decision in decisions:
            attempts.decided(decision)


async def after_model(
    hooks: Callbacks, mctx: ModelContext, response: LlmResponse, attempts: Attempts
) -> LlmResponse:
    """The after_model chain of `hooks` on a call's response; each callback that replaced it
    decided so.

    A hook that raised `ResponseRejected` refused it: the rejection, named after the hook and
    marked where it arose, is raised for `on_model_error` to judge, and `Refused` records it.
    """
    replaced: list[object] = []
    token = judging.set(attempts) if hooks.decide else None  # where a callback adds its decisions
    try:
        response = await run_chain(hooks.impls["after_model"], AFTER_MODEL, response, mctx, deciders=replaced)
    except CallbackError as error:
        rejected = error.__cause__
        if not isinstance(rejected, ResponseRejected):
            raise
        rejected.callback = f"{error.callback}.{error.hook}"
        by = f"callback:{rejected.callback}"
        attempts.decided(Refused(by, f"model:{mctx.model.name}", rejected.reason))
        raise locate(rejected, by) from None
    finally:
        if token is not None:
            judging.reset(token)
    for owner in replaced:
        attempts.decided(Replaced(decided_by(owner, "after_model"), f"model:{mctx.model.name}"))
    return response


def chunks_within(stream: AsyncIterator[Chunk], model: str, limit: float | None) -> AsyncIterator[Chunk]:
    """The rest of a stream; with `limit`, each chunk must come within it (a stalled stream fails)."""
    return stream if limit is None else _bounded_chunks(stream, model, limit)


async def _bounded_chunks(stream: AsyncIterator[Chunk], model: str, limit: float) -> AsyncIterator[Chunk]:
    while True:
        try:
            chunk = await model_bounded(anext(stream), model, limit)
        except StopAsyncIteration:
            return
        yield chunk


async def _after_fallback(
    hooks: Callbacks, mctx: ModelContext, response: LlmResponse, attempts: Attempts
) -> LlmResponse:
    """The after_model chain on a fallback's response; refusing it ends the call with the
    rejection (another round of recovery could loop)."""
    if not hooks.impls["after_model"]:
        return response
    try:
        return await after_model(hooks, mctx, response, attempts)
    except ResponseRejected as rejected:
        raise carry(rejected, attempts.decisions) from None


async def close_stream(stream: AsyncIterator[LlmResponse]) -> None:
    """Close a model's stream (its HTTP response) at once, rather than when it is collected."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


async def call_aside(
    hooks: Callbacks, mctx: ModelContext, attempts: Attempts, meter: ModelMeter | None
) -> LlmResponse:
    """A model call made aside of a turn (a `Compact`'s summary, an MCP server's sampling request),
    as an agent's call goes but whole, not streamed: before_model once, attempts metered by
    `meter`, judged by `on_model_error` and held to the policy's bound, after_model on the
    response. What was decided is recorded in `attempts`; a final error is raised."""
    deciders: list[object] = []
    token = judging.set(attempts) if hooks.decide else None  # where a callback adds its decisions
    try:
        checked: Cont[ModelContext] | Halt[LlmResponse]
        checked = await run_chain(hooks.impls["before_model"], BEFORE_MODEL, mctx, deciders=deciders)
    finally:
        if token is not None:
            judging.reset(token)
    match checked:
        case Halt(value=halted):
            attempts.decided(Halted(decided_by(deciders[0], "before_model"), f"model:{mctx.model.name}"))
            return halted
        case Cont(ctx=mctx):
            pass
        case unreachable:
            assert_never(unreachable)
    while True:
        try:
            limit = attempts.policy.attempt_timeout
            answer = await attempt(mctx.model, mctx.request, attempts, meter, mctx.invocation, None, limit)
            whole = await _whole(mctx.model, answer, attempts, limit)
            return await after_model(hooks, mctx, whole, attempts)
        except Exception as error:
            match await _recovered(hooks, error, mctx, attempts):  # raises the final error
                case Fallback(value=fallback):
                    return await after_model(hooks, mctx, fallback, attempts)
                case Retry(ctx=mctx, delay=wait):
                    await sleep(wait or 0.0)
                case other:
                    assert_never(other)


async def _whole(
    model: Model, answer: LlmResponse | Opened, attempts: Attempts, limit: float | None
) -> LlmResponse:
    """The complete response of an attempt, read to its end if it streams (each chunk within
    `limit`, as an agent's call reads them; then settled), its stream closed."""
    if not isinstance(answer, Opened):
        return answer
    response = answer.response
    try:
        async for chunk in chunks_within(answer.stream, model.name, limit):
            if not chunk.is_partial:
                response = chunk
    finally:
        await close_stream(answer.stream)
    return await _settled(model, response, None, answer.held, attempts)
