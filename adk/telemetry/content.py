"""Message content in the conventions' JSON shapes (`gen_ai.input.messages` and the rest), for the
spans of a `Tracing` whose user opted in: content may hold personal data, so it is never recorded
by default.

What is recorded is what the run already holds: requests as the model was sent them and answers
as the model adapter returned them, so an adapter's masking (the API key, docs/openai.md) holds here too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from adk.events import Message
from adk.telemetry.names import CAPTURE_CONTENT

__all__ = ["capture_setting", "input_messages", "output_messages", "system_instructions", "to_json"]

_ON = {"true", "span_only", "span_and_event"}


def capture_setting(capture_content: bool | None) -> bool:
    """`capture_content` if given, else the environment's opt-in (`true`, any case)."""
    if capture_content is not None:
        return capture_content
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() in _ON


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _arguments(text: str) -> Any:
    """A tool call's arguments as an object, as the conventions expect; the model's text if it is no JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _parts(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_call_response", "id": message.tool_call_id, "response": message.content}]
    parts: list[dict[str, Any]] = [{"type": "text", "content": message.content}] if message.content else []
    parts += [
        {
            "type": "tool_call",
            "id": call.id,
            "name": call.function.name,
            "arguments": _arguments(call.function.arguments),
        }
        for call in message.tool_calls
    ]
    return parts


def input_messages(messages: Sequence[Message]) -> str:
    return to_json([{"role": m.role, "parts": _parts(m)} for m in messages])


def output_messages(message: Message, finish_reason: str | None) -> str:
    return to_json([{"role": message.role, "parts": _parts(message), "finish_reason": finish_reason or ""}])


def system_instructions(instruction: str) -> str:
    return to_json([{"type": "text", "content": instruction}])
