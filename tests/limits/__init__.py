"""The limits' tests, and the scripted answer they share."""

from __future__ import annotations

from adk.events import LlmResponse, Usage


def used(prompt: int, completion: int, answer: LlmResponse | str = "ok") -> LlmResponse:
    """A scripted answer (a text, or the response given) that reports its usage, as a real model does."""
    response = LlmResponse.text(answer) if isinstance(answer, str) else answer
    response.usage = Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )
    return response
