"""Input schemas checked against the dialect they declare; results written for the model."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import pytest

from adk import LlmAgent, Runner
from adk.mcp import McpAudio, McpImage, McpResource, McpResourceLink, McpResult, McpText, McpToolset
from adk.testing import ScriptedModel
from tests._runtime import call, calls, summary

ROOT = Path(__file__).parents[2]


async def test_a_schema_is_checked_against_the_dialect_it_declares(caplog: pytest.LogCaptureFixture) -> None:
    server = McpToolset.stdio(
        sys.executable, "-m", "tests.mcp.schema_server", env={**os.environ, "PYTHONPATH": str(ROOT)}, name="s"
    )
    model = ScriptedModel([calls(call("pair", "c1", pair=["a", 1])), "ok"])
    async with Runner(LlmAgent("a", model=model, tools=[server])) as runner:
        events = [summary(e) async for e in runner.run("u", "s", "hi")]
    declared = {d.name: d.parameters for d in model.requests[0].tools}
    assert sorted(declared) == ["pair", "unknown_dialect"]
    assert declared["pair"]["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert events[2] == ("tool", "a", "pair", "c1", '{"result":"a=1"}')
    assert caplog.messages == [
        "MCP server 's': tool 'pair_undeclared' left out: its input schema is not valid JSON Schema: "
        "[{'type': 'string'}, {'type': 'number'}] is not of type 'object', 'boolean'",
    ]


def test_what_the_model_reads_of_each_block() -> None:
    text = base64.b64encode("é ok".encode()).decode()
    result = McpResult(
        (
            McpText("caption"),
            McpImage("AAAA", "image/webp"),
            McpAudio("AAA=", "audio/wav"),
            McpResource("file:///a.txt", "text/plain", text="inline"),
            McpResource("file:///b.txt", "text/plain", blob=text),
            McpResource("file:///c.txt", "text/plain", blob="not base64!"),
            McpResource("file:///d.bin", None, blob="AA=="),
            McpResourceLink("file:///e", "e", "text/csv", "the e table", 12),
            McpResourceLink("file:///f", "f"),
        ),
        structured={"ignored": "beside other blocks"},
    )
    assert result.text_for_model().splitlines() == [
        "caption",
        "[image: image/webp, 3 bytes, not shown]",
        "[audio: audio/wav, 2 bytes, not shown]",
        "[resource: file:///a.txt (text/plain)]",
        "inline",
        "[resource: file:///b.txt (text/plain)]",
        "é ok",
        "[resource: file:///c.txt (text/plain), 8 bytes, not shown]",
        "[resource: file:///d.bin, 1 bytes, not shown]",
        "[resource link: file:///e (text/csv), 'e', 12 bytes: the e table]",
        "[resource link: file:///f, 'f']",
    ]
    assert McpResult((McpText("3"),), {"result": 3}).text_for_model() == '{"result":3}'
    assert McpResult((), None).text_for_model() == ""
