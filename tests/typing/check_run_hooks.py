"""The run-level hooks and on_agent_error against their protocols, and the chain helper's type."""

from typing import Any, assert_never, assert_type

from adk import AgentContext, Callback, Cont, Event, Fallback, Halt, Message, Raise, Retry, RunContext, Runner
from adk.callbacks import Callbacks, run_on_error
from adk.types import (
    AfterRun,
    BeforeRun,
    BeforeRunResult,
    Content,
    OnAgentError,
    OnAgentErrorResult,
    OnEvent,
    OnUserMessage,
    OnUserMessageResult,
)

# --- accepted ---------------------------------------------------------------------------------


class Everything:
    """Every run-level hook and on_agent_error, sync and async."""

    def on_user_message(self, message: Message, ctx: RunContext) -> Message | Halt[str]:
        return Halt("no") if ctx.user_id == "banned" else message

    async def before_run(self, ctx: RunContext) -> BeforeRunResult:
        return Cont(ctx)

    def on_event(self, event: Event, ctx: RunContext) -> Event:
        return event.clone()

    async def after_run(self, ctx: RunContext) -> None:
        print(ctx.session_id, ctx.invocation_id, ctx.error, dict(ctx.state), ctx.message.content)

    def on_agent_error(self, error: Exception, ctx: AgentContext) -> Fallback[str] | Raise:
        return Fallback("sorry") if ctx.agent.name == "lookup" else Raise(error)


everything = Everything()
user_message: OnUserMessage = everything
before_run: BeforeRun = everything
on_event: OnEvent = everything
after_run: AfterRun = everything
on_agent_error: OnAgentError = everything


class Subclass(Callback):
    def on_user_message(self, message: Message, ctx: RunContext, /) -> OnUserMessageResult:
        return message

    def on_agent_error(self, error: Exception, ctx: AgentContext, /) -> OnAgentErrorResult:
        return Raise(error)


async def recover(callbacks: Callbacks, error: Exception, ctx: AgentContext) -> Content:
    answer = await run_on_error(callbacks, "on_agent_error", error, ctx)
    assert_type(answer, Fallback[Content] | Raise)
    match answer:
        case Fallback(value=content):
            return content
        case Raise(error=passed):
            raise passed
        case unreachable:
            assert_never(unreachable)


def register(runner: Runner) -> Any:
    return runner.run("u", "s", "hi", callbacks=[everything, Subclass])


# --- rejected: a result type the hook may not return ---------------------------------------------


class BeforeRunRetries:
    def before_run(self, ctx: RunContext) -> Retry[RunContext]:
        return Retry(ctx)


class OnEventReturnsNone:
    def on_event(self, event: Event, ctx: RunContext) -> None:
        return None


class UserMessageAsText:
    def on_user_message(self, message: Message, ctx: RunContext) -> str:
        return message.content


class AfterRunAnswers:
    def after_run(self, ctx: RunContext) -> Halt[str]:
        return Halt("late")


class AgentErrorRetries:
    def on_agent_error(self, error: Exception, ctx: AgentContext) -> Retry[AgentContext]:
        return Retry(ctx)


retries: BeforeRun = BeforeRunRetries()  # type: ignore[assignment]
drops: OnEvent = OnEventReturnsNone()  # type: ignore[assignment]
as_text: OnUserMessage = UserMessageAsText()  # type: ignore[assignment]
answers: AfterRun = AfterRunAnswers()  # type: ignore[assignment]
agent_retries: OnAgentError = AgentErrorRetries()  # type: ignore[assignment]


class WrongOverrides(Callback):
    def before_run(self, ctx: RunContext, /) -> Halt[int]:  # type: ignore[override]
        return Halt(1)

    def on_event(self, event: Event, ctx: AgentContext, /) -> Event:  # type: ignore[override]
        return event

    def on_agent_error(self, error: Exception, ctx: AgentContext, /) -> Retry[AgentContext]:  # type: ignore[override]
        return Retry(ctx)
