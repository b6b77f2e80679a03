"""Chat-completions answers as adk responses, every text of the server's masked on the way in.

A complete answer is masked field by field. A streamed one is masked across chunk boundaries: a
secret the server sends in pieces too short to recognise alone is recognised as the pieces join,
since each text (the content, each tool call's arguments) goes through a `StreamMask` that holds
back a tail which could still become a secret. The partial chunks therefore join to exactly the
complete response's text.
"""

from __future__ import annotations

from typing import Any

from adk.events import Choice, FunctionCall, LlmResponse, Message, ToolCall, Usage, new_id
from adk.models._redact import Redactor, StreamMask

__all__ = ["StreamedAnswer", "complete_answer"]


def complete_answer(data: Any, model: str, clean: Redactor) -> LlmResponse:
    """The response for a complete answer `data`; `model` if the answer names none."""
    choice = data["choices"][0]
    message = choice["message"]
    return _response(
        _optional(clean, data.get("id")),
        clean(data.get("model") or model),
        clean(message.get("content") or ""),
        [_tool_call(c.get("id"), c.get("function"), clean) for c in message.get("tool_calls") or ()],
        _optional(clean, choice.get("finish_reason")),
        _usage(data.get("usage")),
    )


class StreamedAnswer:
    """A streamed answer put together chunk by chunk: `add` each chunk, then `tails` and `response`."""

    __slots__ = (
        "_calls",
        "_clean",
        "_deltas",
        "_model",
        "_raw_id",
        "_raw_model",
        "_text",
        "chunks",
        "finish_reason",
        "id",
        "usage",
    )

    def __init__(self, model: str, clean: Redactor) -> None:
        self._clean = clean
        self._raw_id, self.id = "", ""
        self._raw_model = self._model = model
        self._deltas: list[str] = []
        self._text = StreamMask(clean)
        self._calls: dict[int, _CallParts] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.chunks = 0
        """How many chunks were read."""

    def add(self, chunk: Any) -> list[LlmResponse]:
        """Take in one chunk; return the partial responses it releases (none, one, or a few)."""
        self.chunks += 1
        clean = self._clean
        if (value := chunk.get("id")) and value != self._raw_id:  # the same in every chunk, mostly
            self._raw_id, self.id = value, clean(value)
        if (value := chunk.get("model")) and value != self._raw_model:
            self._raw_model, self._model = value, clean(value)
        if chunk.get("usage"):
            self.usage = _usage(chunk["usage"])
        if not chunk.get("choices"):
            return []
        choice = chunk["choices"][0]
        delta = choice.get("delta") or {}
        released: list[LlmResponse] = []
        if content := delta.get("content"):
            self._deltas.append(content)
            if text := self._text.add(content):
                released.append(LlmResponse.chunk(text, id=self.id, model=self._model))
        for position, part in enumerate(delta.get("tool_calls") or ()):
            index = part.get("index")
            if index is None:
                index = position
            parts = self._calls.get(index)
            if parts is None:
                parts = self._calls[index] = _CallParts(clean)
            if piece := parts.add(part.get("id"), part.get("function")):
                released.append(self._call_chunk(parts, piece))
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        return released

    def tails(self) -> list[LlmResponse]:
        """The partial responses for what was held back to the end: the text's, then each call's."""
        released: list[LlmResponse] = []
        if text := self._text.flush():
            released.append(LlmResponse.chunk(text, id=self.id, model=self._model))
        for index in sorted(self._calls):
            parts = self._calls[index]
            if piece := parts.mask.flush():
                released.append(self._call_chunk(parts, piece))
        return released

    def response(self) -> LlmResponse:
        """The complete response: the whole text and calls, masked as a whole."""
        clean = self._clean
        tool_calls = [self._calls[i].tool_call() for i in sorted(self._calls)]
        content = clean("".join(self._deltas))
        finish_reason = None if self.finish_reason is None else clean(self.finish_reason)
        return _response(self.id, self._model, content, tool_calls, finish_reason, self.usage)

    def _call_chunk(self, parts: _CallParts, piece: str) -> LlmResponse:
        clean = self._clean
        function = FunctionCall(name=clean(parts.name), arguments=piece)
        call = ToolCall(id=clean(parts.id or ""), function=function)
        return LlmResponse.chunk("", call, id=self.id, model=self._model)


class _CallParts:
    """One streamed tool call, put together from its chunks."""

    __slots__ = ("_clean", "arguments", "id", "mask", "name")

    def __init__(self, clean: Redactor) -> None:
        self._clean = clean
        self.id: str | None = None
        self.name = ""
        self.arguments: list[str] = []
        self.mask = StreamMask(clean)
        """Masks the arguments across the pieces they come in."""

    def add(self, id: str | None, function: dict[str, Any] | None) -> str:
        """Take in one chunk's part of the call; return the masked arguments it releases, if any."""
        if self.id is None:
            self.id = id or ToolCall.of("").id  # minted once, so that every piece and the call agree
        if not function:
            return ""
        name = function.get("name")
        # Some servers (llama.cpp) repeat the whole name in every chunk instead of streaming it once.
        if name and name != self.name:
            self.name += name
        arguments = function.get("arguments")
        if not arguments:
            return ""
        self.arguments.append(arguments)
        return self.mask.add(arguments)

    def tool_call(self) -> ToolCall:
        return _tool_call(self.id, {"name": self.name, "arguments": "".join(self.arguments)}, self._clean)


def _tool_call(id: str | None, function: dict[str, Any] | None, clean: Redactor) -> ToolCall:
    """A tool call as sent (a fresh id if it has none); arguments that are not JSON pass through
    for the runtime to report, and no argument text at all means no arguments."""
    function = function or {}
    name = clean(function.get("name") or "")
    return ToolCall.of(name, clean(function.get("arguments") or "{}"), _optional(clean, id))


def _optional(clean: Redactor, text: str | None) -> str | None:
    return None if text is None else clean(text)


def _response(
    id: str | None,
    model: str,
    content: str,
    tool_calls: list[ToolCall],
    finish_reason: str | None,
    usage: Usage | None,
) -> LlmResponse:
    """A complete response, streamed or not; a fresh id if the server gave none."""
    message = Message.assistant(content, tool_calls)
    choice = Choice(message=message, finish_reason=finish_reason)
    return LlmResponse(id=id or new_id(), model=model, choices=[choice], usage=usage, done=True)


def _usage(usage: dict[str, Any] | None) -> Usage | None:
    if not usage:
        return None
    return Usage(
        prompt_tokens=_count(usage, "prompt_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
        total_tokens=_count(usage, "total_tokens"),
    )


def _count(usage: dict[str, Any], key: str) -> int:
    """A token count of `usage`: 0 if absent; a value that is not a count is refused, unquoted."""
    value = usage.get(key) or 0
    if type(value) is not int:
        raise TypeError(f"usage {key}: expected an integer, got {type(value).__name__}")
    return value
