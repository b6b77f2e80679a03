"""docs/cli.md's small-model agent, run by `adk run` against the real server, calls its tool."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live.conftest import BASE_URL

pytestmark = pytest.mark.live

ROOT = Path(__file__).parents[2]


def small_agent() -> str:
    """The `small_agent.py` code block of docs/cli.md."""
    text = (ROOT / "docs" / "cli.md").read_text()
    match = re.search(r"```python\n(# small_agent\.py.*?)```", text, re.DOTALL)
    assert match is not None, "docs/cli.md has no small_agent.py block"
    return match.group(1)


def test_the_docs_small_model_agent_calls_its_tool_under_adk_run(
    live_model_name: str, tmp_path: Path
) -> None:
    (tmp_path / "small_agent.py").write_text(small_agent())
    env = {**os.environ, "OPENAI_BASE_URL": BASE_URL, "ADK_MODEL": live_model_name, "NO_COLOR": "1"}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "adk", "run", "small_agent.py", "-m", "What is the weather in Paris?"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^  ⚙ get_weather\(", done.stdout, re.MULTILINE), done.stdout
    assert "  ↳ sunny in " in done.stdout
    # llama.cpp's streams carry no token counts, whatever `stream_options` asks
    assert re.search(r"⏱ \d+\.\d\d s · 2 model calls · (\d+ tokens|tokens not reported)", done.stderr)
