"""`adk demo`: the whole conversation, exactly as the terminal shows it."""

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adk import LlmRequest, Message
from adk.cli import main
from adk.demo import TURNS, DemoModel
from adk.recovery import Testing
from adk.sessions.sqlite import SqliteSessionService

TRANSCRIPT = """\
adk demo: an assistant with a weather tool, a guardrail and recovery; scripted model, no API key needed

── a tool call
you: What's the weather in Paris?
  ⚙ get_weather(city="Paris")
  ↳ {"city":"Paris","temp_c":18,"sky":"sunny"}
assistant: It's 18°C and sunny in Paris.

── a guardrail halts the model call
you: What's the admin password?
  ⛔ Guardrail.before_model halted model primary; the model was not called
assistant: Sorry, I can't help with anything about passwords.

── the model fails once with a 503; the retry policy tries again
you: And the weather in Tokyo?
  ↻ model primary failed (ServerError: 503 Service Unavailable); RetryThenFallback.on_model_error retries in 0.20 s (attempt 2)
  ⚙ get_weather(city="Tokyo")
  ↳ {"city":"Tokyo","temp_c":24,"sky":"cloudy"}
assistant: It's 24°C and cloudy in Tokyo.

── the primary model fails for good; the agent falls back to the backup
you: Thanks!
  ⇄ model primary failed (AuthenticationError: 401 API key revoked); RetryThenFallback.on_model_error falls back to model backup
assistant: You're welcome! Come back when the weather changes.
"""  # noqa: E501  (the terminal's lines, as they are)


def timeless(err: str) -> str:
    """stderr with the turns' wall times blanked."""
    return re.sub(r"⏱ \d+\.\d\d s", "⏱ T s", err)


def test_demo_plays_the_whole_conversation(capsys: pytest.CaptureFixture[str], testing: Testing) -> None:
    assert main(["demo", "--pace", "0"]) == 0
    out, err = capsys.readouterr()
    assert out == TRANSCRIPT
    assert timeless(err) == (
        "  ⏱ T s · 2 model calls · tokens not reported\n"
        "  ⏱ T s · 0 model calls · tokens not reported\n"  # the guardrail halted the call
        "  ⏱ T s · 3 model calls · tokens not reported\n"  # the 503, then two answers
        "  ⏱ T s · 2 model calls · tokens not reported\n"  # the 401, then the backup's answer
    )
    assert testing.waits == [0.2, 0.0]  # the retry's wait, then the switch's (skipped under test)


def test_demo_keeps_its_session_in_sqlite_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], testing: Testing
) -> None:
    db = tmp_path / "demo.sqlite3"
    assert main(["demo", "--pace", "0", "--db", str(db), "--session", "d1", "--user", "me"]) == 0

    async def stored() -> list[str]:
        with_store = SqliteSessionService(db)
        try:
            session = await with_store.get("me", "d1")
        finally:
            with_store.close()
        assert session is not None
        return [e.content for e in session.events if e.author == "user"]

    assert asyncio.run(stored()) == [
        "What's the weather in Paris?",
        "What's the admin password?",
        "And the weather in Tokyo?",
        "Thanks!",
    ]


def test_demo_model_answers_by_looking_at_the_request() -> None:
    model = DemoModel()
    ask = model.answer(LlmRequest(messages=[Message.user("weather in new york please")]))
    assert [(c.function.name, c.function.arguments) for c in ask.tool_calls] == [
        ("get_weather", '{"city": "new york please"}')
    ]
    broken = model.answer(
        LlmRequest(messages=[Message.tool("Error: boom", tool_call_id="c", name="get_weather")])
    )
    assert broken.content == "The tool said: Error: boom"
    assert model.answer(LlmRequest()).content == "I'm the demo model: ask me about the weather in a city."


def test_python_dash_m_adk_demo_exits_zero() -> None:
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "adk", "demo", "--pace", "0", "--wait", "0"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
        env={"PYTHONPATH": str(root), "NO_COLOR": "1", "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.replace("0.00 s", "0.20 s") == TRANSCRIPT


@pytest.mark.parametrize(
    ("option", "value"), [("--wait", "-1"), ("--pace", "-0.5"), ("--wait", "nan"), ("--wait", "x")]
)
def test_demo_refuses_a_negative_or_unreadable_time(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["demo", option, value])
    assert exit.value.code == 2
    assert capsys.readouterr().err.endswith(
        f"adk demo: error: argument {option}: expected a number of seconds, 0 or more, not {value!r}\n"
    )


def test_demo_verbose_shows_every_event_and_the_decisions_it_records(
    capsys: pytest.CaptureFixture[str], testing: Testing
) -> None:
    assert main(["demo", "--verbose", "--pace", "0", "--wait", "0"]) == 0
    out = capsys.readouterr().out
    assert out.count("  · user chat.completion\n") == len(TURNS)
    assert out.count("  · assistant runner.completion\n") == len(TURNS)
    assert "  · assistant chat.completion Guardrail.before_model → halted\n" in out
    assert "  · assistant attempt.failed RetryThenFallback.on_model_error → retried\n" in out
    assert "  · assistant attempt.failed RetryThenFallback.on_model_error → fell_back\n" in out
    assert "  · assistant chat.completion model backup RetryThenFallback.on_model_error → fell_back\n" in out
