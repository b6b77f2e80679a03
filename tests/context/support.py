"""Helpers of the context tests: a conversation of scripted turns, and what a model received."""

from __future__ import annotations

from adk.events import Event, LlmResponse, Usage
from adk.models.base import LlmRequest
from adk.runner import Runner


def said(request: LlmRequest) -> list[str]:
    """A request's messages, one `role: content` line each (tool calls by name)."""
    lines = []
    for m in request.messages:
        calls = "".join(f" -> {c.function.name}" for c in m.tool_calls)
        lines.append(f"{m.role}: {m.content}{calls}")
    return lines


def answer(text: str, prompt: int = 0, completion: int = 0) -> LlmResponse:
    """A text answer, with the usage a server would report (none when both are 0)."""
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
    return LlmResponse.text(text, usage=usage if prompt or completion else None)


async def turn(runner: Runner, text: str, session: str = "s") -> list[Event]:
    return [e async for e in runner.run("u", session, text)]


WORDS = "word " * 40
"""200 characters: 50 tokens by the character rule."""
