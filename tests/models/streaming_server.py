"""A chat-completions server for 127.0.0.1 that streams the caller's key back in pieces of 1 to 7
characters, in its text and in a tool call's arguments: each piece too short to be recognised alone.

The first request gets `TEXT` with the key in it and a call of `lookup` whose arguments hold the
key; the request after the tool's result gets `AFTER`, the key again in it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

KEY = "sk-proj-Zq4TfW8xLm2Rb7Np0KcVs9Hd"
TEXT = "The key is {key} ok"
ARGUMENTS = '{{"q": "{key}"}}'
AFTER = "Done: {key}."
SIZES = (7, 1, 3, 5, 2, 6, 4)


def split(text: str) -> list[str]:
    """`text` in pieces of 7, 1, 3, 5, 2, 6, 4, 7, ... characters."""
    pieces: list[str] = []
    while text:
        size = SIZES[len(pieces) % len(SIZES)]
        pieces.append(text[:size])
        text = text[size:]
    return pieces


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return f"data: {json.dumps({'id': 'c1', 'model': 'm', 'choices': [choice]})}\n\n".encode()


def _first(key: str) -> list[bytes]:
    chunks = [_chunk({"role": "assistant", "content": piece}) for piece in split(TEXT.format(key=key))]
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": ""}}
    chunks.append(_chunk({"tool_calls": [call]}))
    for piece in split(ARGUMENTS.format(key=key)):
        chunks.append(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    return [*chunks, _chunk({}, "tool_calls")]


def _second(key: str) -> list[bytes]:
    return [*(_chunk({"content": piece}) for piece in split(AFTER.format(key=key))), _chunk({}, "stop")]


def app(key: str = KEY, path: str = "/agui/v1/chat/completions") -> Starlette:
    """The server, answering at `path` (`serving` of tests.agui.support gives URLs ending in /agui)."""

    async def chat(request: Request) -> StreamingResponse:
        body = await request.json()
        answered = any(m["role"] == "tool" for m in body["messages"])
        chunks = _second(key) if answered else _first(key)

        async def stream() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk
            yield b"data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route(path, chat, methods=["POST"])])
