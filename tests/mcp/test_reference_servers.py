"""adk.mcp against the official MCP reference servers (tests/mcp/servers.py starts them over stdio).

Each test traces which hooks ran, with what typed result, and what the model was sent.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from adk import Cont, Halt, LlmAgent, Runner, ToolContext
from adk.events import Event, ToolCall
from adk.mcp import McpImage, McpResource, McpResourceLink, McpResult, McpText, McpToolset
from adk.testing import ScriptedModel
from tests._runtime import Recorder, call, calls, summary
from tests.mcp.servers import npm_server, time_server

DOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
"""A 1x1 PNG, 70 bytes."""
HELLO = "data:text/plain;base64," + base64.b64encode(b"hello hello hello").decode()


class Seen(Recorder):
    """Records each tool hook, and the result `after_tool` was given."""

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        self.trace.append(("after_tool", ctx.tool.name, result))
        return result


class InsideRoot(Seen):
    """Authorises a filesystem call only for paths under `root`."""

    root = ""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:  # type: ignore[override]
        self.record("before_tool", ctx)
        inside = str(ctx.args.get("path", "")).startswith(self.root + "/")
        return Cont(ctx) if inside else Halt(f"{ctx.args.get('path')} is outside the workspace")


async def run_one_by_one(
    server: McpToolset, steps: list[Any], hooks: Seen
) -> tuple[ScriptedModel, list[Event]]:
    model = ScriptedModel(steps)
    async with Runner(LlmAgent("a", model=model, tools=[server]), callbacks=[hooks]) as runner:
        events = [e async for e in runner.run("u", "s", "hi")]
    model.assert_done()
    assert [Event.model_validate_json(e.model_dump_json()) for e in events] == events
    return model, events


def gzip_call(id: str, **args: Any) -> ToolCall:
    """`gzip-file-as-resource` of "hello hello hello" as `hi.gz` (its `name` argument is no keyword
    of `call`'s)."""
    return ToolCall.of("gzip-file-as-resource", json.dumps({"name": "hi.gz", "data": HELLO, **args}), id=id)


def sent(model: ScriptedModel) -> list[str]:
    """The tool message the model was sent last, in each request after the first."""
    return [r.messages[-1].content for r in model.requests[1:] if r.messages[-1].role == "tool"]


def hooks_of(trace: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [t[1:] if t[0] == "cb" else t for t in trace if "tool" in t[0] + t[1]]


async def test_images_resources_and_links_reach_after_tool_typed_and_the_model_as_text() -> None:
    trace: list[tuple[Any, ...]] = []
    steps = [
        calls(call("get-tiny-image", "c1")),
        calls(call("get-resource-reference", "c2", resourceType="Text", resourceId=1)),
        calls(gzip_call("c3", outputType="resource")),
        calls(gzip_call("c4")),
        "seen",
    ]
    model, events = await run_one_by_one(npm_server("server-everything", "stdio"), steps, Seen("cb", trace))

    image, text, gzipped, link = (t[2] for t in trace if t[0] == "after_tool")
    assert hooks_of(trace) == [
        ("before_tool", "get-tiny-image"),
        ("after_tool", "get-tiny-image", image),
        ("before_tool", "get-resource-reference"),
        ("after_tool", "get-resource-reference", text),
        ("before_tool", "gzip-file-as-resource"),
        ("after_tool", "gzip-file-as-resource", gzipped),
        ("before_tool", "gzip-file-as-resource"),
        ("after_tool", "gzip-file-as-resource", link),
    ]
    caption, picture, note = image.content
    assert (caption, note) == (
        McpText("Here's the image you requested:"),
        McpText("The image above is the MCP logo."),
    )
    assert type(picture) is McpImage and picture.mime_type == "image/png"
    png = base64.b64decode(picture.data)
    assert png.startswith(b"\x89PNG\r\n") and picture.size == len(png) == 4033
    assert image.structured is None
    resource = text.content[1]
    assert type(resource) is McpResource and resource.text is not None
    assert (resource.uri, resource.mime_type, resource.blob) == (
        "demo://resource/dynamic/text/1",
        "text/plain",
        None,
    )
    [blob] = gzipped.content
    assert type(blob) is McpResource and blob.blob is not None and blob.text is None
    assert (blob.uri, blob.mime_type) == ("demo://resource/session/hi.gz", "application/gzip")
    assert gzip.decompress(base64.b64decode(blob.blob)) == b"hello hello hello"
    assert link == McpResult((McpResourceLink("demo://resource/session/hi.gz", "hi.gz", "application/gzip"),))

    told = sent(model)
    assert told[0] == (
        "Here's the image you requested:\n"
        "[image: image/png, 4033 bytes, not shown]\n"
        "The image above is the MCP logo."
    )
    assert re.fullmatch(
        r"Returning resource reference for Resource 1:\n"
        r"\[resource: demo://resource/dynamic/text/1 \(text/plain\)\]\n"
        r"Resource 1: This is a plaintext resource created at [^\n]+\n"
        r"You can access this resource using the URI: demo://resource/dynamic/text/1",
        told[1],
    )
    assert told[2:] == [
        "[resource: demo://resource/session/hi.gz (application/gzip), "
        f"{len(base64.b64decode(blob.blob))} bytes, not shown]",
        "[resource link: demo://resource/session/hi.gz (application/gzip), 'hi.gz']",
    ]
    assert [summary(e)[4] for e in events if e.object == "tool.response"] == told
    assert "simulate-research-query" not in [d.name for d in model.requests[0].tools]


async def test_a_tool_that_must_run_as_a_task_is_left_out_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = npm_server("server-everything", "stdio")
    async with server:
        names = [t.name for t in await server.get_tools()]
    assert names == [
        "echo",
        "get-annotated-message",
        "get-env",
        "get-resource-links",
        "get-resource-reference",
        "get-structured-content",
        "get-sum",
        "get-tiny-image",
        "gzip-file-as-resource",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
        "trigger-long-running-operation",
    ]
    assert [r.getMessage() for r in caplog.records if r.name == "adk.mcp"] == [
        "MCP server 'server-everything': tool 'simulate-research-query' left out: it must be called "
        'as a task (execution.taskSupport is "required"), which adk does not do'
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A directory (its real path, as the filesystem server names it) holding dot.png."""
    root = tmp_path.resolve()
    (root / "dot.png").write_bytes(base64.b64decode(DOT))
    return root


async def test_filesystem_an_image_file_reaches_the_model_as_a_placeholder_and_a_refused_path_never_runs(
    workspace: Path,
) -> None:
    root = workspace
    hooks = InsideRoot("cb", [])
    hooks.root = str(root)
    steps = [
        calls(call("read_media_file", "c1", path=f"{root}/dot.png")),
        calls(call("write_file", "c2", path=f"{root}/note.txt", content="hi")),
        calls(call("read_text_file", "c3", path="/etc/hostname")),
        "done",
    ]
    model, _ = await run_one_by_one(npm_server("server-filesystem", str(root)), steps, hooks)

    assert hooks_of(hooks.trace) == [
        ("before_tool", "read_media_file"),
        (
            "after_tool",
            "read_media_file",
            McpResult(
                (McpImage(DOT, "image/png"),),
                {"content": [{"type": "image", "data": DOT, "mimeType": "image/png"}]},
            ),
        ),
        ("before_tool", "write_file"),
        (
            "after_tool",
            "write_file",
            McpResult(
                (McpText(f"Successfully wrote to {root}/note.txt"),),
                {"content": f"Successfully wrote to {root}/note.txt"},
            ),
        ),
        ("before_tool", "read_text_file"),
        ("after_tool", "read_text_file", "/etc/hostname is outside the workspace"),
    ]
    assert sent(model) == [
        "[image: image/png, 70 bytes, not shown]",  # not the base64 its structured content repeats
        f'{{"content":"Successfully wrote to {root}/note.txt"}}',
        "/etc/hostname is outside the workspace",
    ]
    assert (root / "note.txt").read_text() == "hi"


async def test_memory_structured_results_reach_the_model_as_json(tmp_path: Path) -> None:
    ada = {"name": "Ada", "entityType": "person", "observations": ["wrote programs"]}
    memory = npm_server("server-memory", env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})
    hooks = Seen("cb", [])
    steps = [calls(call("create_entities", "c1", entities=[ada])), calls(call("read_graph", "c2")), "ok"]
    model, _ = await run_one_by_one(memory, steps, hooks)
    created, graph = (t[2] for t in hooks.trace if t[0] == "after_tool")
    assert hooks_of(hooks.trace) == [
        ("before_tool", "create_entities"),
        ("after_tool", "create_entities", created),
        ("before_tool", "read_graph"),
        ("after_tool", "read_graph", graph),
    ]
    assert type(graph) is McpResult and graph.structured == {"entities": [ada], "relations": []}
    assert sent(model) == [
        '{"entities":[{"name":"Ada","entityType":"person","observations":["wrote programs"]}]}',
        '{"entities":[{"name":"Ada","entityType":"person","observations":["wrote programs"]}],'
        '"relations":[]}',
    ]


async def test_time_a_structured_result_reaches_after_tool_typed_and_the_model_as_json() -> None:
    hooks = Seen("cb", [])
    to_tokyo = call("convert_time", "c1", source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo")
    model, _ = await run_one_by_one(time_server(), [calls(to_tokyo), "ok"], hooks)
    [converted] = [t[2] for t in hooks.trace if t[0] == "after_tool"]
    assert hooks_of(hooks.trace) == [
        ("before_tool", "convert_time"),
        ("after_tool", "convert_time", converted),
    ]
    assert type(converted) is McpResult and converted.structured["time_difference"] == "+9.0h"
    assert converted.structured["target"]["datetime"].endswith("T21:00:00+09:00")
    assert sent(model) == [converted.text_for_model()]
    assert sent(model)[0].startswith('{"source":{"timezone":"UTC","datetime":"')
