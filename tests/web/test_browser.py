"""The `adk web` page in a real browser: Debian's headless Chromium, driven by playwright-core.

Install them with `apt-get install chromium` and `npm ci --prefix tests/web/js`. Without
either this test is skipped, unless ADK_AGUI_JS_REQUIRED is set (as in CI), where that is a
failure. It takes a screenshot of each state (SHOTS); with ADK_WEB_SCREENSHOTS=1 they replace
docs/web-*.png.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk.cli import load_runner
from adk.cli.folder import close_folder, load_folder
from adk.sessions.sqlite import SqliteSessionService
from adk.web import create_folder_app, create_web_app
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
    """The conversation as shown, with each model call's time (which varies) masked, and each
    run's timeline as one item (its rows are checked on their own: `rows`)."""
    return [
        (kind, "" if kind == "timeline" else re.sub(r" · \d+ ms", " · N ms", text))
        for kind, text in conversation
    ]


def rows(timeline: dict[str, Any]) -> list[tuple[str, str, str]]:
    """A timeline's rows, after checking that they are in time order, each bar where its times
    say on the shared axis and as wide as its duration (2 px at least); as (kind, name, decision)."""
    spans = timeline["rows"]
    total = spans[0]["end"]  # the run's own row, first: its first event to its last
    assert spans[0]["kind"] == "agent" and spans[0]["start"] == 0
    assert [r["start"] for r in spans] == sorted(r["start"] for r in spans)
    for r in spans:
        assert 0 <= r["start"] <= r["end"] <= total, r
        share = (r["end"] - r["start"]) / total
        assert abs(r["width"] - max(share * r["track"], 2)) <= 1, r
        assert abs(r["left"] - r["start"] / total * r["track"]) <= 1, r
    return [(r["kind"], r["name"], r["decision"]) for r in spans]


RETRY = (
    "model primary failed (ServerError: 503 Service Unavailable); "
    "RetryThenFallback.on_model_error retries in 0.00 s (attempt 2)"
)
FALLBACK = (
    "model primary failed (AuthenticationError: 401 API key revoked); "
    "RetryThenFallback.on_model_error falls back to model backup"
)
GUARDRAIL = "Guardrail.before_model halted model primary; the model was not called"
AUTHORIZE = "Authorize.before_tool halted tool get_weather; it did not run"
RUN = ("agent", "agent assistant", "")
DEMO = ("model", "model demo", "")
TOOL = ("tool", "get_weather", "")
TIMELINES = [
    [RUN, DEMO, TOOL, DEMO],
    [RUN, ("hook", "Guardrail.before_model", "halted")],
    [
        RUN,
        ("model", "model primary", "failed"),  # the failed attempt, then the hook that retried it
        ("hook", "RetryThenFallback.on_model_error", "retried"),
        *(DEMO, TOOL, DEMO),
    ],
    [RUN, DEMO, ("hook", "Authorize.before_tool", "halted"), DEMO],
    [RUN, ("model", "model backup", "fell_back")],
]
"""What each run's timeline shows live; a stored run's retried call is one row (its attempts'
times are not stored), with the retry on it."""
STORED = [*TIMELINES[:2], [RUN, ("model", "model demo", "retried"), TOOL, DEMO], *TIMELINES[3:], [RUN, DEMO]]

TURNS = [
    ("bubble user", "youWhat's the weather in Paris?"),
    ("tool-call", 'get_weather({"city":"Paris"}){"city":"Paris","temp_c":18,"sky":"sunny"}'),
    ("note usage", "model demo · N ms"),
    ("bubble assistant", "assistantIt's 18°C and sunny in Paris."),
    ("note usage", "model demo · N ms"),
    ("timeline", ""),
    ("bubble user", "youWhat's the admin password?"),
    ("note decision halted", GUARDRAIL),
    ("bubble assistant", "assistantSorry, I can't help with anything about passwords."),
    ("timeline", ""),
    ("bubble user", "youAnd the weather in Tokyo?"),
    ("note decision retried", RETRY),
    ("tool-call", 'get_weather({"city":"Tokyo"}){"city":"Tokyo","temp_c":24,"sky":"cloudy"}'),
    ("note usage", "model demo · N ms"),
    ("bubble assistant", "assistantIt's 24°C and cloudy in Tokyo."),
    ("note usage", "model demo · N ms"),
    ("timeline", ""),
    ("bubble user", "youWhat's the weather in Atlantis?"),
    ("note decision halted", AUTHORIZE),  # before the card of the call it stopped
    ("tool-call", 'get_weather({"city":"Atlantis"}){"error":"lookups for Atlantis are not allowed"}'),
    ("note usage", "model demo · N ms"),
    ("bubble assistant", 'assistantThe tool said: {"error":"lookups for Atlantis are not allowed"}'),
    ("note usage", "model demo · N ms"),
    ("timeline", ""),
    ("bubble user", "youThanks!"),
    ("note decision fell_back", FALLBACK),
    ("bubble assistant", "assistantYou're welcome! Come back when the weather changes."),
    ("note usage", "model backup · N ms"),
    ("timeline", ""),
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
    ("timeline", ""),
]
SHOTS = ("empty", "timeline", "narrow", "approval", "picker", "question")
"""The screenshots the browser test takes (web-NAME.png); ADK_WEB_SCREENSHOTS=1 puts them in docs/."""


def keep(shots: Path, names: tuple[str, ...]) -> None:
    """Check the screenshots `names` were taken; with ADK_WEB_SCREENSHOTS set, copy them to docs/."""
    for name in names:
        assert (shots / f"web-{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if os.environ.get("ADK_WEB_SCREENSHOTS"):
            shutil.copyfile(shots / f"web-{name}.png", HERE.parent.parent / "docs" / f"web-{name}.png")


def test_the_page_shows_tool_calls_halts_a_retry_a_fallback_and_reopens_the_session(tmp_path: Path) -> None:
    node = tools()
    runner = load_runner(str(HERE / "demo_agent.py"), str(tmp_path / "sessions.sqlite3"))
    try:
        with serving(create_web_app(runner)) as agui:
            report = browse(node, agui.removesuffix("agui"), tmp_path / "profile", screenshots=str(tmp_path))
    finally:
        assert isinstance(runner.session_service, SqliteSessionService)
        runner.session_service.close()

    assert report["problems"] == []  # no script error, no request beyond the server
    live, attacked, reloaded, reopened = (report[k] for k in ("live", "attacked", "reloaded", "reopened"))
    # An empty page names the agent and says what it does.
    assert (
        report["empty"]["welcome"] == "assistant | A weather assistant: ask it about the weather in a city."
    )
    assert (report["empty"]["agent"], report["empty"]["conversation"]) == ("assistant", [])
    assert live["welcome"] is None
    [session] = live["sessions"]
    assert live["session"] == f"session {session}"
    assert timeless(live["conversation"]) == TURNS
    assert live["events"] == EVENTS
    assert json.loads(live["state"]) == {"lookups": 3}
    assert live["deltas"] == [f'Δ {{"lookups":{n}}}' for n in (1, 2, 3)]  # each change, on its event
    # Each decision's icon is the page's own drawing, not a font's glyph.
    assert live["icons"] == ["halted", "retried", "halted", "fell_back"]
    # Each run's timeline: its calls and deciding hooks, in time order, as long as they took.
    assert [rows(t) for t in live["timelines"]] == TIMELINES
    assert [t["rows"][-1]["verdicts"] for t in live["timelines"]] == [[], [GUARDRAIL], [], [], [FALLBACK]]
    assert live["timelines"][2]["rows"][1]["verdicts"] == ["failed: ServerError: 503 Service Unavailable"]
    assert live["timelines"][2]["rows"][2]["verdicts"] == [RETRY]
    assert live["timelines"][3]["rows"][2]["verdicts"] == [AUTHORIZE]
    # 420 px wide: one column, nothing wider than the window.
    assert report["narrow"]["overflow"] == 0
    assert [rows(t) for t in report["narrow"]["timelines"]] == TIMELINES

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
    assert [rows(t) for t in reopened["timelines"]] == STORED
    keep(tmp_path, ("empty", "timeline", "narrow"))


def test_a_person_approves_and_rejects_payments_with_the_pages_buttons(tmp_path: Path) -> None:
    node = tools()
    runner = load_runner(str(HERE / "approval_agent.py"), str(tmp_path / "sessions.sqlite3"))
    try:
        with serving(create_web_app(runner)) as agui:
            report = browse(
                node,
                agui.removesuffix("agui"),
                tmp_path / "profile",
                scenario="approvals",
                screenshots=str(tmp_path),
            )
    finally:
        assert isinstance(runner.session_service, SqliteSessionService)
        runner.session_service.close()

    assert report["problems"] == []
    used = "model teller · N ms · 15 tokens (12 in, 3 out)"  # each call's time and tokens
    bo = [
        ("bubble user", "youpay bo 5000"),
        ("tool-call", 'pay({"to":"bo","amount":5000})running…'),
        ("note usage", used),
        ("note decision deferred", "tool pay waits for approval: tool 'pay' requires approval"),
        ("approval", 'approve pay({"to":"bo","amount":5000})? tool \'pay\' requires approvalApproveReject'),
        ("timeline", ""),
    ]
    assert timeless(report["asked"]["conversation"]) == bo
    waits = ("tool", "pay", "deferred")
    assert [rows(t) for t in report["asked"]["timelines"]] == [
        [("agent", "agent bank", ""), ("model", "model teller", ""), waits]
    ]
    assert report["asked"]["icons"] == ["deferred"]
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
        ("tool-call", 'pay({"to":"bo","amount":5000})sent 5000 to bo'),
        ("note usage", stored),
        bo[3],
        ("timeline", ""),
        ("note decision approved", "tool pay approved (pay-bo); it runs"),
        ("bubble assistant", "bankThe bank said: sent 5000 to bo"),
        ("note usage", stored),
        ("timeline", ""),
        ("bubble user", "youpay al 9000"),
        ("tool-call", 'pay({"to":"al","amount":9000})Rejected: too much'),
        ("note usage", stored),
        bo[3],
        ("approval", 'approve pay({"to":"al","amount":9000})? tool \'pay\' requires approvalApproveReject'),
        ("timeline", ""),
        ("note decision rejected", "tool pay rejected (pay-al): too much; it does not run"),
        ("bubble assistant", "bankThe bank said: Rejected: too much"),
        ("note usage", used),
        ("timeline", ""),
    ]
    paid = [("agent", "agent bank", ""), ("tool", "pay", "approved"), ("model", "model teller", "")]
    refused = [("agent", "agent bank", ""), ("tool", "pay", "rejected"), ("model", "model teller", "")]
    assert [rows(t) for t in report["answered"]["timelines"]] == [
        [("agent", "agent bank", ""), ("model", "model teller", ""), waits],
        paid,
        [("agent", "agent bank", ""), ("model", "model teller", ""), waits],
        refused,
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
    keep(tmp_path, ("approval",))


def test_a_folders_agents_each_have_a_page_picked_from_the_root_with_their_own_sessions(
    tmp_path: Path,
) -> None:
    """`adk web tests/web`: the folder's two agent files (its test files define no agent)."""
    node = tools()
    runners = load_folder(str(HERE), str(tmp_path / "sessions.sqlite3"))
    assert list(runners) == ["approval_agent", "demo_agent"]
    try:
        with serving(create_folder_app(runners)) as agui:
            root = agui.removesuffix("agui")
            report = browse(node, root, tmp_path / "profile", scenario="picker", screenshots=str(tmp_path))
    finally:
        close_folder(runners)

    assert report["problems"] == []
    assert report["root"]["cards"] == [
        "approval_agentan adk agent",
        "demo_agentA weather assistant: ask it about the weather in a city.",
    ]
    assert report["root"]["welcome"] == "Pick an agent | Each opens in its own page, with its own sessions."
    first, second = report["first"], report["second"]
    assert (first["url"].removesuffix("#"), first["agent"], first["picker"]) == (
        f"{root}agents/approval_agent/",
        "bank",
        ["approval_agent*", "demo_agent"],
    )
    assert first["welcome"] == "bank | Say hello to bank."
    [paid] = first["sessions"]
    assert paid.startswith("approval_agent-")
    assert (second["url"].removesuffix("#"), second["agent"], second["picker"], second["sessions"]) == (
        f"{root}agents/demo_agent/",
        "assistant",
        ["approval_agent", "demo_agent*"],
        [],  # the other agent's session is not listed here
    )
    keep(tmp_path, ("picker",))


def test_mcp_progress_shows_on_the_call_and_a_servers_question_is_answered_in_the_card(
    tmp_path: Path,
) -> None:
    node = tools()
    # in tests/mcp: `adk web tests/web` (the folder test) serves only the folder's own agents
    runner = load_runner(str(HERE.parent / "mcp" / "page_agent.py"), str(tmp_path / "sessions.sqlite3"))
    app = create_web_app(runner)

    async def close(request: Request) -> Response:
        await runner.close()  # in the server's own loop, where the MCP server's connection is
        return Response()

    app.router.routes.append(Route("/close", close, methods=["POST"]))
    try:
        with serving(app) as agui:
            try:
                report = browse(
                    node,
                    agui.removesuffix("agui"),
                    tmp_path / "profile",
                    scenario="mcp",
                    screenshots=str(tmp_path),
                )
            finally:
                httpx.post(agui.removesuffix("agui") + "close", timeout=30)
    finally:
        assert isinstance(runner.session_service, SqliteSessionService)
        runner.session_service.close()
    # the refused reply's response, which the page shows as a note
    assert report["problems"] == [
        "console: Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"
    ]
    assert report["counted"]["progress"] == ["3/3"]  # the last progress the card showed while it ran
    question = "Please provide inputs for the following fields:"
    asked = [
        ("bubble user", "youask"),
        ("tool-call", "trigger-elicitation-request({})running…"),
        (
            "note decision deferred",
            f"mcp:server-everything asks the person, during tool trigger-elicitation-request: {question}",
        ),
        ("approval", f"trigger-elicitation-request({{}}) asks: {question}ReplyReject"),
        ("timeline", ""),
    ]
    assert timeless(report["asked"]["conversation"])[4:] == asked
    assert timeless(report["refused"]["conversation"])[-1] == (
        "note error",
        "422: resume.0.payload: interrupt 'ask-1' does not fit the question's schema:"
        " name: 5 is not of type 'string'",
    )
    answered = timeless(report["answered"]["conversation"])[4:]
    assert answered[1][1].startswith(
        "trigger-elicitation-request({})✅ User provided the requested information!"
        "\nUser inputs:\n- Name: Ada\n"
    )
    assert [answered[0], *answered[2:]] == [
        *asked[:1],
        *asked[2:],
        ("note decision approved", "tool trigger-elicitation-request approved (ask-1); it runs"),
        ("bubble assistant", "clerkThe server said: ✅ User provided the requested information!"),
        ("timeline", ""),
    ]
    resumed = [
        ("agent", "agent clerk", ""),
        ("tool", "trigger-elicitation-request", "approved"),
        ("model", "model ?", ""),
    ]
    assert [rows(t) for t in report["answered"]["timelines"]][-1] == resumed
    keep(tmp_path, ("question",))
