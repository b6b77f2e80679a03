"""The rule that estimates a prompt's tokens before the call (docs/limits.md)."""

from __future__ import annotations

from adk.models.base import LlmRequest

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens"]

CHARS_PER_TOKEN = 4
"""The estimate's rule: a prompt of n characters counts as ceil(n / 4) tokens."""


def estimate_tokens(request: LlmRequest) -> int:
    """The prompt's tokens, estimated: ceil(characters / 4) over the instruction, the messages
    (their text and tool calls) and the tool declarations (name, description, schema)."""
    chars = len(request.instruction)
    for message in request.messages:
        chars += len(message.content)
        for call in message.tool_calls:
            chars += len(call.function.name) + len(call.function.arguments)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(str(tool.parameters))
    return -(-chars // CHARS_PER_TOKEN)
