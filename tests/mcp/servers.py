"""The official MCP reference servers, started over stdio from their installed packages.

The npm ones come from tests/mcp/js (`npm ci --prefix tests/mcp/js`), `mcp-server-time` from the
dev extra. Without them a test is skipped, unless ADK_AGUI_JS_REQUIRED or ADK_MCP_REFERENCE_REQUIRED
is set (as in CI), where a missing server is a failure. Nothing is fetched at test time.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from adk.mcp import McpToolset

JS = Path(__file__).parent / "js"
PACKAGES = JS / "node_modules" / "@modelcontextprotocol"


def missing(what: str) -> None:
    if os.environ.get("ADK_AGUI_JS_REQUIRED") or os.environ.get("ADK_MCP_REFERENCE_REQUIRED"):
        pytest.fail(f"the MCP reference servers are required but {what} is missing")
    pytest.skip(f"{what} is missing")


def npm_server(package: str, *args: str, env: dict[str, str] | None = None, **options: Any) -> McpToolset:
    """`@modelcontextprotocol/<package>`, run by node, as a toolset named `package` (with the
    toolset's `options`)."""
    node = shutil.which("node")
    entry = PACKAGES / package / "dist" / "index.js"
    if node is None or not entry.is_file():
        missing(f"node or @modelcontextprotocol/{package} (npm ci --prefix tests/mcp/js)")
    assert node is not None
    return McpToolset.stdio(node, str(entry), *args, env=env, name=package, **options)


def time_server() -> McpToolset:
    """`mcp-server-time` (the dev extra), its local time zone UTC."""
    if importlib.util.find_spec("mcp_server_time") is None:
        missing("mcp-server-time (pip install -e '.[dev]')")
    return McpToolset.stdio(
        sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC", env=dict(os.environ), name="time"
    )
