"""`adk run` never prints a key a model server streams back in pieces too short to recognise alone."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from adk.cli import main
from adk.testing import set_testing
from tests.agui.support import serving
from tests.models import streaming_server
from tests.models.streaming_server import KEY


def test_adk_run_prints_the_streamed_key_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    with serving(streaming_server.app()) as url:
        Path("keyed.py").write_text(
            textwrap.dedent(
                f"""\
                import httpx
                from adk import LlmAgent, tool
                from adk.models import OpenAIModel


                @tool
                def lookup(q: str) -> str:
                    \"\"\"Look something up.\"\"\"
                    return "found"


                # No connection kept: `adk run` does not close the model's client.
                client = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
                model = OpenAIModel("m", base_url="{url}/v1", api_key={KEY!r}, http_client=client)
                agent = LlmAgent("a", model=model, tools=[lookup])
                """
            )
        )
        with set_testing(True):
            assert main(["run", "keyed.py", "-m", "key?", "--session", "s"]) == 0
    out, err = capsys.readouterr()
    assert out == 'a: The key is *** ok\n  ⚙ lookup(q="***")\n  ↳ found\na: Done: ***.\n'
    assert [KEY[i : i + 8] for i in range(len(KEY) - 7) if KEY[i : i + 8] in out + err] == []
