"""The a2a-sdk `AgentExecutor` that runs an adk `Runner` for A2A tasks (imported with the SDK).

A task is one adk invocation (the task id is the invocation id), a context is one adk session
of the caller's user (the context id is the session id). Streamed text goes out as chunks of
one artifact, `answer`; a run that pauses for approval leaves the task `input-required`, its
status message naming the waiting calls, and the client's next message on the task answers them.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from a2a.helpers import get_data_parts, get_text_parts, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.tasks import TaskUpdater
from a2a.types import Part, TaskState

from adk.a2a.answers import Asked, asked_calls, parse_answers
from adk.approvals import questions, waiting_calls
from adk.errors import ApprovalError
from adk.events import Event, ObjectType, new_id
from adk.sessions.base import read_from_horizon

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from a2a.server.events import EventQueue

    from adk.runner import Runner

__all__ = ["ANONYMOUS", "ARTIFACT", "AdkExecutor", "user_of_call"]

ANONYMOUS = "anonymous"
"""The user of every request when the server has no identity function."""
ARTIFACT = "answer"
"""The name of the artifact that carries a task's text."""


def user_of_call(context: RequestContext) -> str:
    """The adk user of a request: the one the identity function named, else `anonymous`."""
    return context.call_context.user.user_name or ANONYMOUS


class AdkExecutor(AgentExecutor):
    """Runs `runner` for each A2A message: a new task's text, or the answer to a paused task."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, session_id, message = context.task_id, context.context_id, context.message
        if task_id is None or session_id is None or message is None:  # the SDK gives all three
            raise ValueError("an A2A request without a task id, a context id or a message")
        user = user_of_call(context)
        updater = TaskUpdater(event_queue, task_id, session_id)
        texts = get_text_parts(message.parts)
        if context.current_task is None:
            await event_queue.enqueue_event(
                new_task(task_id, session_id, TaskState.TASK_STATE_SUBMITTED, history=[message])
            )
            text = "\n".join(t for t in texts if t)
            if not text.strip():
                await updater.reject(_message(updater, "the message has no text for the agent"))
                return
            events = self.runner.run(user, session_id, text, stream=True, invocation_id=task_id)
        else:
            try:
                waiting, asks = await self._waiting(user, session_id, task_id)
                answers = parse_answers(texts, get_data_parts(message.parts), waiting, asks)
            except ApprovalError as e:
                await updater.requires_input(_message(updater, str(e)))
                return
            events = self.runner.run(user, session_id, approvals=answers, stream=True)
        await updater.start_work()
        await _relay(events, updater)

    async def _waiting(
        self, user: str, session_id: str, task_id: str
    ) -> tuple[list[str], dict[str, dict[str, Any]]]:
        """The ids of the calls task `task_id` waits for a person's answer to, and the schema of the
        reply each question among them asks for (as its status showed it); refused if it waits for
        none, or also for a result that only the application can give."""
        session = await read_from_horizon(self.runner.session_service, user, session_id)  # its last run
        last = session.events[-1] if session is not None and session.events else None
        waiting = waiting_calls(session) if session is not None and last is not None else {}
        if session is None or last is None or last.invocation_id != task_id or not waiting:
            raise ApprovalError("this task waits for no answer")
        approvals = [i for i, (kind, _) in waiting.items() if kind == ObjectType.APPROVAL_REQUEST]
        if len(approvals) < len(waiting):
            raise ApprovalError("the run waits for a tool's result, which only the application can give")
        return approvals, questions(session, approvals)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """The SDK has cancelled `execute` (which stops the run): say the task is canceled."""
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


class _Answer:
    """The task's `answer` artifact as it is sent: chunks appended, replaced after a discard."""

    def __init__(self, updater: TaskUpdater) -> None:
        self.updater = updater
        self.artifact_id = new_id()
        self.sent = False
        """Whether a chunk went out: the next is appended to it."""
        self.streamed = False
        """Whether the message being answered went out in chunks, so its complete event is not sent."""

    async def add(self, text: str) -> None:
        if text:
            await self.updater.add_artifact(
                [new_text_part(text)], artifact_id=self.artifact_id, name=ARTIFACT, append=self.sent
            )
            self.sent = True

    async def event(self, event: Event) -> None:
        if event.is_partial:
            self.streamed = self.streamed or bool(event.content)
            await self.add(event.content)
            return
        message = event.message
        if message is not None and message.role == "assistant" and event.author != "user":
            if not self.streamed:
                await self.add(message.content)
            self.streamed = False


async def _relay(events: AsyncGenerator[Event, None], updater: TaskUpdater) -> None:
    """The run's events as the task's: text chunks, then completed, failed or input-required."""
    answer = _Answer(updater)
    asked: list[Asked] = []
    async with aclosing(events) as run:
        async for event in run:
            match event.object:
                case ObjectType.ERROR:
                    error = event.error
                    line = f"{error.type}: {error.message}" if error is not None else "the run failed"
                    await updater.failed(_message(updater, line))
                    return
                case ObjectType.APPROVAL_REQUEST:
                    asked.extend(asked_calls(event))
                case ObjectType.RUNNER_PAUSED:
                    await _ask(updater, asked)
                    return
                case ObjectType.ATTEMPT_DISCARDED:
                    answer.sent = answer.streamed = False  # the next chunk replaces what went out
                case _:
                    await answer.event(event)
    await updater.complete()


async def _ask(updater: TaskUpdater, asked: list[Asked]) -> None:
    """Leave the task `input-required`, its status naming the calls that wait, with the question and
    the reply's schema of each call that asks one (or saying that none can be answered over A2A:
    a pending tool's result comes from the application)."""
    if not asked:
        await updater.requires_input(
            _message(updater, "the run waits for a tool's result, which only the application can give")
        )
        return
    lines = "\n".join(f"- {a.line()}" for a in asked)
    approvals = [a.as_data() for a in asked if a.schema is None]
    replies = [a.as_data() for a in asked if a.schema is not None]
    needed = "approval" if not replies else "an answer"
    text = f"{needed} needed for {len(asked)} call(s):\n{lines}"
    data: dict[str, Any] = {"approval_requests": approvals} if approvals else {}
    if replies:
        data["questions"] = replies
    await updater.requires_input(updater.new_agent_message([new_text_part(text), _data_part(data)]))


def _message(updater: TaskUpdater, text: str) -> Any:
    return updater.new_agent_message([new_text_part(text)])


def _data_part(data: dict[str, Any]) -> Part:
    from a2a.helpers import new_data_part

    return new_data_part(data)
