"""`adk mcp serve` checked by the official MCP Inspector's CLI (`npm ci --prefix tests/mcp/js`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.mcp.servers import JS, missing
from tests.test_mcp_serve import ASK_SCHEMA, CLERK, ROOT, WRONG

INSPECTOR = JS / "node_modules" / "@modelcontextprotocol" / "inspector" / "package.json"


def inspector(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mcp-inspector --cli` against `adk mcp serve clerk.py` over stdio; its catalog in tmp_path."""
    node = shutil.which("node")
    if node is None or not INSPECTOR.is_file():
        missing("node or @modelcontextprotocol/inspector (npm ci --prefix tests/mcp/js)")
    assert node is not None
    clerk = tmp_path / "clerk.py"
    clerk.write_text(CLERK)
    entry = JS / "node_modules" / ".bin" / "mcp-inspector"
    server = [sys.executable, "-m", "adk", "mcp", "serve", str(clerk), "--db", str(tmp_path / "s.db")]
    env = {**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "catalog.json"), "HOME": str(tmp_path)}
    served = ["-e", f"PYTHONPATH={ROOT}", "-e", f"ADK_TRACE={tmp_path / 'trace'}"]
    return subprocess.run(
        [node, str(entry), "--cli", *served, *server, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_inspector_lists_the_one_tool_with_a_clean_schema(tmp_path: Path) -> None:
    done = inspector(tmp_path, "--method", "tools/list")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "tools": [{"name": "clerk", "description": "Prices and deletes items.", "inputSchema": ASK_SCHEMA}]
    }


def test_inspector_calls_the_tool_and_a_wrong_argument_gets_one_line(tmp_path: Path) -> None:
    call = ["--method", "tools/call", "--tool-name", "clerk", "--tool-arg"]
    done = inspector(tmp_path, *call, "message=widget")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "content": [{"type": "text", "text": "widget costs 4.20; refused by Guard"}],
        "isError": False,
    }
    wrong = inspector(tmp_path, *call, "text=widget")
    assert json.loads(wrong.stdout) == {"content": [{"type": "text", "text": WRONG}], "isError": True}
    assert (tmp_path / "trace").read_text().splitlines() == [
        "before_model clerk",
        "before_tool lookup {'item': 'widget'}",
        "before_tool delete {'item': 'widget'}",
        "before_model clerk",
    ]
