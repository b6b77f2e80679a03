"""What an MCP tool answers, typed: an `McpResult` of content blocks, and the text a model reads.

The blocks are adk's own small frozen values rather than the SDK's pydantic models: a hook
matches on them without importing `mcp`, and they write to JSON as plain dataclasses. Binary
data (an image, audio, a blob resource) stays base64, as the server sent it.

A model reads `McpResult.text_for_model()`: adk's messages, and so the events a session stores,
hold text, as the OpenAI chat API's `tool` message does; an image or audio block reaches the
model as a placeholder naming its type and size, a resource as its URI and text.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, assert_never

from adk.tools import result_to_text

if TYPE_CHECKING:
    from mcp.types import CallToolResult, ContentBlock

__all__ = ["McpAudio", "McpBlock", "McpImage", "McpResource", "McpResourceLink", "McpResult", "McpText"]


def _size(data: str) -> int:
    """The number of bytes that well-formed base64 `data` stands for (without decoding it)."""
    return len(data) * 3 // 4 - data[-2:].count("=")


@dataclass(frozen=True, slots=True)
class McpText:
    """A text block."""

    text: str


@dataclass(frozen=True, slots=True)
class McpImage:
    """An image block: `data` is base64."""

    data: str
    mime_type: str

    @property
    def size(self) -> int:
        """The image's size in bytes."""
        return _size(self.data)


@dataclass(frozen=True, slots=True)
class McpAudio:
    """An audio block: `data` is base64."""

    data: str
    mime_type: str

    @property
    def size(self) -> int:
        """The audio's size in bytes."""
        return _size(self.data)


@dataclass(frozen=True, slots=True)
class McpResource:
    """An embedded resource: its `text`, or its binary content as base64 `blob` (one of them)."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None


@dataclass(frozen=True, slots=True)
class McpResourceLink:
    """A link to a resource the server holds (read with `resources/read`), not its content."""

    uri: str
    name: str
    mime_type: str | None = None
    description: str | None = None
    size: int | None = None


McpBlock = McpText | McpImage | McpAudio | McpResource | McpResourceLink


@dataclass(frozen=True, slots=True)
class McpResult:
    """A tool's answer: its content blocks, in order, and its structured content, if any."""

    content: tuple[McpBlock, ...]
    structured: Any = None

    def text_for_model(self) -> str:
        """What the model reads: the structured content as JSON when there is one and every
        block is text (which only repeats it); else each block, on lines of its own.

        Not the structured content beside other blocks: it may carry their data again (the
        filesystem server's `read_media_file` puts the image's base64 in it).
        """
        content = self.content
        if self.structured is not None and all(type(b) is McpText for b in content):
            return result_to_text(self.structured)
        return "\n".join(_block_text(b) for b in content)


def _block_text(block: McpBlock) -> str:
    """One block as the model reads it: a placeholder for what it cannot read as text."""
    match block:
        case McpText(text=text):
            return text
        case McpImage() | McpAudio():
            kind = "image" if type(block) is McpImage else "audio"
            return f"[{kind}: {block.mime_type}, {block.size} bytes, not shown]"
        case McpResource(uri=uri, mime_type=mime, text=text, blob=blob):
            text = text if text is not None else _as_text(blob or "", mime)
            if text is not None:
                return f"[resource: {uri}{_mime(mime)}]\n{text}"
            return f"[resource: {uri}{_mime(mime)}, {_size(blob or '')} bytes, not shown]"
        case McpResourceLink(uri=uri, name=name, mime_type=mime, description=about, size=size):
            sized = f", {size} bytes" if size is not None else ""
            return f"[resource link: {uri}{_mime(mime)}, {name!r}{sized}{': ' + about if about else ''}]"
        case unreachable:
            assert_never(unreachable)


def _as_text(blob: str, mime_type: str | None) -> str | None:
    """A blob's content as text, when its type says text and it is base64 of UTF-8; else None."""
    if not (mime_type or "").startswith("text/"):
        return None
    try:
        return base64.b64decode(blob, validate=True).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError both are
        return None


def _mime(mime_type: str | None) -> str:
    return f" ({mime_type})" if mime_type else ""


def from_sdk(result: CallToolResult) -> McpResult:
    """The SDK's tool result as adk's."""
    return McpResult(tuple(_block(b) for b in result.content), result.structured_content)


def _block(block: ContentBlock) -> McpBlock:
    from mcp.types import (
        AudioContent,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    match block:
        case TextContent(text=text):
            return McpText(text)
        case ImageContent(data=data, mime_type=mime):
            return McpImage(data, mime)
        case AudioContent(data=data, mime_type=mime):
            return McpAudio(data, mime)
        case EmbeddedResource(resource=r):
            if isinstance(r, TextResourceContents):
                return McpResource(r.uri, r.mime_type, text=r.text)
            return McpResource(r.uri, r.mime_type, blob=r.blob)
        case ResourceLink():
            return McpResourceLink(block.uri, block.name, block.mime_type, block.description, block.size)
        case unreachable:
            assert_never(unreachable)
