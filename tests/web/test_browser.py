"""The `adk web` page in a real browser: Debian's headless Chromium, driven by playwright-core.

Install them with `apt-get install chromium` and `npm ci --prefix tests/web/js`. Without
either this test is skipped, unless ADK_AGUI_JS_REQUIRED is set (as in CI), where that is a
failure. With ADK_WEB_SCREENSHOT=docs/web.png it also refreshes the screenshot in the docs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from adk.cli import load_runner
from adk.sessions.sqlite import SqliteSessionService
from adk.web import create_web_app
from tests.agui.support import serving

HERE = Path(__file__).parent
JS = HERE / "js"
CHROMIUM = "/usr/bin/chromium"


def tools() -> str:
    """The node binary, once Chromium, node and playwright-core are all there; else skip or fail."""
    required = os.environ.get("ADK_AGUI_JS_REQUIRED")
    if not Path(CHROMIUM).is_file():
        if required:
            pytest.fail(f"ADK_AGUI_JS_REQUIRED is set but {CHROMIUM} is missing: apt-get install chromium")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium")
    node = shutil.which("node")
    if node is None or not (JS / "node_modules" / "playwright-core").is_dir():
        message = f"node or playwright-core is missing: npm ci --prefix {JS}"
        if required:
            pytest.fail(f"ADK_AGUI_JS_REQUIRED is set but {message}")
        pytest.skip(message)
    return node


def browse(node: str, url: str, profile: Path, **spec: Any) -> dict[str, Any]:
    spec |= {"url": url, "chromium": CHROMIUM, "userDataDir": str(profile)}
    done = subprocess.run(
        [node, str(JS / "browse.mjs"), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"the browser script failed:\n{done.stdout}\n{done.stderr}"
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def timeless(conversation: list[list[str]]) -> list[tuple[str, str]]:
    """The conversation as shown, with each model call's time (which varies) masked."""
    return [(kind, re.sub(r" · \d+ ms", " · N ms", text)) for kind, text in conversation]


TURNS = [
    ("bubble user", "youWhat's the weather in Paris?"),
    ("tool-call", '⚙ get_weather({"city":"Paris"})↳ {"city":"Paris","temp_c":18,"sky":"sunny"}'),
    ("note usage", "model demo · N ms"),
    ("bubble assistant", "assistantIt's 18°C and sunny in Paris."),
    ("note usage", "model demo · N ms"),
    ("bubble user", "youWhat's the admin password?"),
    ("note decision halted", "⊘ Guardrail.before_model halted model primary; the model was not called"),
    ("bubble assistant", "assistantSorry, I can't help with anything about passwords."),
    ("bubble user", "youAnd the weather in Tokyo?"),
    (
        "note decision retried",
        "↻ model primary failed (ServerError: 503 Service Unavailable); "
        "RetryThenFallback.on_model_error retries in 0.00 s (attempt 2)",
    ),
    ("tool-call", '⚙ get_weather({"city":"Tokyo"})↳ {"city":"Tokyo","temp_c":24,"sky":"cloudy"}'),
    ("note usage", "model demo · N ms"),
    ("bubble assistant", "assistantIt's 24°C and cloudy in Tokyo."),
    ("note usage", "model demo · N ms"),
    ("bubble user", "youWhat's the weather in Atlantis?"),
    ("tool-call", '⚙ get_weather({"city":"Atlantis"})↳ {"error":"lookups for Atlantis are not allowed"}'),
    ("note usage", "model demo · N ms"),
    ("note decision halted", "⊘ Authorize.before_tool halted tool get_weather; it did not run"),
    ("bubble assistant", 'assistantThe tool said: {"error":"lookups for Atlantis are not allowed"}'),
    ("note usage", "model demo · N ms"),
    ("bubble user", "youThanks!"),
    (
        "note decision fell_back",
        "⇄ model primary failed (AuthenticationError: 401 API key revoked); "
        "RetryThenFallback.on_model_error falls back to model backup",
    ),
    ("bubble assistant", "assistantYou're welcome! Come back when the weather changes."),
    ("note usage", "model backup · N ms"),
]
EVENTS = [
    *("user chat.completion", "assistant chat.completion", "assistant tool.response"),
    *("assistant chat.completion", "assistant runner.completion"),
    *("user chat.completion", "assistant chat.completion", "assistant runner.completion"),
    *("user chat.completion", "assistant chat.completion", "assistant tool.response"),
    *("assistant chat.completion", "assistant runner.completion"),
    *("user chat.completion", "assistant chat.completion", "assistant tool.response"),
    *("assistant chat.completion", "assistant runner.completion"),
    *("user chat.completion", "assistant chat.completion", "assistant runner.completion"),
]
ATTACK = [
    ("bubble user", 'you<img src=x onerror="window.pwned=true"> hi'),
    ("bubble assistant", "assistantI'm the demo model: ask me about the weather in a city."),
    ("note usage", "model demo · N ms"),
]


def test_the_page_shows_tool_calls_halts_a_retry_a_fallback_and_reopens_the_session(tmp_path: Path) -> None:
    node = tools()
    runner = load_runner(str(HERE / "demo_agent.py"), str(tmp_path / "sessions.sqlite3"))
    screenshot = tmp_path / "web.png"
    try:
        with serving(create_web_app(runner)) as agui:
            report = browse(node, agui.removesuffix("agui"), tmp_path / "profile", screenshot=str(screenshot))
    finally:
        assert isinstance(runner.session_service, SqliteSessionService)
        runner.session_service.close()

    assert report["problems"] == []  # no script error, no request beyond the server
    live, attacked, reloaded, reopened = (report[k] for k in ("live", "attacked", "reloaded", "reopened"))
    [session] = live["sessions"]
    assert live["session"] == f"session {session}"
    assert timeless(live["conversation"]) == TURNS
    assert live["events"] == EVENTS
    assert json.loads(live["state"]) == {"lookups": 3}
    assert live["deltas"] == [f'Δ {{"lookups":{n}}}' for n in (1, 2, 3)]  # each change, on its event

    # An attacker's markup is text: nothing was made from it and its script did not run.
    assert timeless(attacked["conversation"]) == TURNS + ATTACK
    assert (attacked["images"], attacked["pwned"]) == (0, False)

    # A fresh page lists the session; opened, it shows what happened, read from the store (the
    # stored events carry no time of the model calls, so none is shown).
    assert (reloaded["sessions"], reloaded["conversation"], reloaded["session"]) == (
        [session],
        [],
        "new session",
    )
    assert timeless(reopened["conversation"]) == [
        (kind, text.replace(" · N ms", "")) for kind, text in TURNS + ATTACK
    ]
    assert reopened["events"] == [
        *EVENTS,
        "user chat.completion",
        "assistant chat.completion",
        "assistant runner.completion",
    ]
    assert (reopened["images"], reopened["pwned"]) == (0, False)
    assert json.loads(reopened["state"]) == {"lookups": 3}
    assert reopened["deltas"] == live["deltas"]

    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if target := os.environ.get("ADK_WEB_SCREENSHOT"):
        shutil.copyfile(screenshot, target)


def test_a_person_approves_and_rejects_payments_with_the_pages_buttons(tmp_path: Path) -> None:
    node = tools()
    runner = load_runner(str(HERE / "approval_agent.py"), str(tmp_path / "sessions.sqlite3"))
    try:
        with serving(create_web_app(runner)) as agui:
            report = browse(node, agui.removesuffix("agui"), tmp_path / "profile", scenario="approvals")
    finally:
        assert isinstance(runner.session_service, SqliteSessionService)
        runner.session_service.close()

    assert report["problems"] == []
    used = "model teller · N ms · 15 tokens (12 in, 3 out)"  # each call's time and tokens
    bo = [
        ("bubble user", "youpay bo 5000"),
        ("tool-call", '⚙ pay({"to":"bo","amount":5000})running…'),
        ("note usage", used),
        ("note decision deferred", "⏸ tool pay waits for approval: tool 'pay' requires approval"),
        ("approval", '⏸ approve pay({"to":"bo","amount":5000})? tool \'pay\' requires approvalApproveReject'),
    ]
    assert timeless(report["asked"]["conversation"]) == bo
    assert report["asked"]["events"] == [
        "user chat.completion",
        "bank chat.completion",
        "bank tool.approval_request",
        "bank runner.paused",
    ]
    # After the click the payment ran; the page was then reloaded with the second payment
    # waiting: the reopened session showed it answerable, and the rejection went to the model.
    stored = used.replace(" · N ms", "")  # a stored event carries no time of its call
    assert timeless(report["answered"]["conversation"]) == [
        bo[0],
        ("tool-call", '⚙ pay({"to":"bo","amount":5000})↳ sent 5000 to bo'),
        ("note usage", stored),
        bo[3],
        ("note decision approved", "✔ tool pay approved (pay-bo); it runs"),
        ("bubble assistant", "bankThe bank said: sent 5000 to bo"),
        ("note usage", stored),
        ("bubble user", "youpay al 9000"),
        ("tool-call", '⚙ pay({"to":"al","amount":9000})↳ Rejected: too much'),
        ("note usage", stored),
        bo[3],
        ("approval", '⏸ approve pay({"to":"al","amount":9000})? tool \'pay\' requires approvalApproveReject'),
        ("note decision rejected", "⊘ tool pay rejected (pay-al): too much; it does not run"),
        ("bubble assistant", "bankThe bank said: Rejected: too much"),
        ("note usage", used),
    ]
    assert (
        report["answered"]["events"]
        == [
            *(
                "user chat.completion",
                "bank chat.completion",
                "bank tool.approval_request",
                "bank runner.paused",
            ),
            *("bank tool.response", "bank chat.completion", "bank runner.completion"),
        ]
        * 2
    )
