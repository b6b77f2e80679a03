"""Every example runs, prints what its docstring promises, and leaves the traces it should."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from adk.recovery import Testing
from examples import (
    budget,
    caching,
    callbacks_module,
    decisions,
    extractor,
    guardrail,
    mcp_agent,
    payments,
    redaction,
    retry_fallback,
    timing,
    tool_auth,
    triage,
    workflow,
)
from tests.cli.shell import adk

EXAMPLES = Path(__file__).parents[1] / "examples"


def test_guardrail(capsys: pytest.CaptureFixture[str]) -> None:
    guardrail.main()
    assert capsys.readouterr().out == (
        "user: What's the capital of France?\n"
        "assistant: Paris is the capital of France.\n"
        "user: What's the admin password?\n"
        "assistant: Sorry, I can't help with passwords.\n"
    )


def test_caching(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(caching, "runs", [])
    cache = caching.main()
    assert capsys.readouterr().out == (
        "monday: A widget costs 4.20 €. (model calls: 2, tool runs: 1)\n"
        "tuesday: A widget costs 4.20 €. (model calls: 2, tool runs: 1)\n"
        "cache hits: 3\n"
    )
    assert cache.hits == 3
    assert caching.runs == ["widget"]


def test_redaction(capsys: pytest.CaptureFixture[str]) -> None:
    assert redaction.main() == "Call Ada on [phone] or write to [email]."
    assert redaction.redact("mail a.b+c@mail.example.org, or +1 (555) 010-9999") == "mail [email], or [phone]"


def test_tool_auth(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool_auth.main() == [
        'Tool said: {"error":"delete_user needs the admin role; you are viewer"}',
        "Tool said: deleted carol",
    ]


def test_payments_large_transfers_wait_for_approval(capsys: pytest.CaptureFixture[str]) -> None:
    assert asyncio.run(payments.main()) == [
        "assistant: Bank said: sent 50 € to ana",
        "waits: call-bo {'to': 'bo', 'amount': 5000} (transfers over 1000 € need approval)",
        "assistant: Bank said: sent 5000 € to bo",
        "waits: call-cy {'to': 'cy', 'amount': 9000} (transfers over 1000 € need approval)",
        "assistant: Bank said: Rejected: not on a Sunday",
    ]


MCP_AGENT = [
    "assistant: Travel server said: Paris: 18°C and sunny",
    "waits: call-book {'city': 'Paris'} (bookings need a person's approval)",
    "assistant: Travel server said: booked a trip to Paris",
]


def test_mcp_agent_uses_an_mcp_server_whose_bookings_wait_for_approval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert asyncio.run(mcp_agent.main()) == MCP_AGENT
    assert capsys.readouterr().out.splitlines() == MCP_AGENT


def test_timing_keeps_concurrent_calls_apart(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timing, "PAUSE", {"paris": 0, "tokyo": 0})
    recorded = asyncio.run(timing.main())
    # Both calls started before either ended: one shared slot would have been overwritten.
    assert recorded.log == ["start call_paris", "start call_tokyo", "end call_paris", "end call_tokyo"]
    out = capsys.readouterr().out.splitlines()
    assert [line.split(" took ")[0] for line in out] == [
        "weather(paris) [call_paris]",
        "weather(tokyo) [call_tokyo]",
        "forecaster: Sunny everywhere.",
    ]


def test_retry_fallback(capsys: pytest.CaptureFixture[str], testing: Testing) -> None:
    assert retry_fallback.main() == "Hello from the backup model."
    assert capsys.readouterr().out == (
        "attempt 1 on primary failed: 429 Too Many Requests\n"
        "attempt 2 on primary failed: 429 Too Many Requests\n"
        "assistant (via backup): Hello from the backup model.\n"
    )
    assert testing.waits == [0.1, 0.0]  # the retry's wait, then at once to the backup


def test_workflow(capsys: pytest.CaptureFixture[str]) -> None:
    lines = workflow.main()
    assert sorted(lines[:2]) == ["prices: Widgets cost 4.20 €.", "reviews: Buyers rate widgets 4.5/5."]
    assert lines[2:] == [
        "writer: Widgets are good.",
        "critic: Too vague: use the research.",
        "writer: Widgets cost 4.20 € and rate 4.5/5.",
        "critic: calls approve",
        "critic: Approved.",
    ]


def test_triage(capsys: pytest.CaptureFixture[str]) -> None:
    assert triage.main() == [
        "user: I was charged twice.",
        "  (triage -> billing)",
        "billing: I refunded the duplicate charge of 12 €.",
        "user: Thanks! Also, I can't log in.",
        "  (billing -> tech_support)",
        "tech_support: Reset your password from the login page.",
        "user: Can I talk to a person?",
        "  (refused: The human desk is closed until Monday 9:00: help the user yourself.)",
        "tech_support: The human desk opens Monday at 9:00; until then, I can help you here.",
    ]


def test_extractor(capsys: pytest.CaptureFixture[str], testing: Testing) -> None:
    invoice = extractor.main()
    assert (invoice.number, str(invoice.issued), invoice.total) == ("INV-2024-17", "2024-05-02", 1250.0)
    assert capsys.readouterr().out.splitlines() == [
        "answer 1 rejected: total: Field required",
        "extracted: Invoice(number='INV-2024-17', issued=datetime.date(2024, 5, 2), total=1250.0,"
        " currency='EUR')",
        "replier was told: Confirm receipt of invoice INV-2024-17 (1250.0 EUR).",
        "replier: Thank you: we received invoice INV-2024-17 for 1250.0 EUR.",
    ]
    assert testing.waits == [0.0]  # the correction was asked for at once


def test_budget_lowers_max_tokens_to_what_is_left(capsys: pytest.CaptureFixture[str]) -> None:
    # $0.01 less the first call's $0.0091 and the second prompt's 61 tokens at $2.5/1M leaves 74
    assert budget.main() == [988, 74]
    assert capsys.readouterr().out == (
        "chat.completion: usd 0.009100 of 0.01 spent\nmax_tokens sent: [988, 74]; answer: Sunny.\n"
    )


def test_callbacks_module(capsys: pytest.CaptureFixture[str]) -> None:
    [request] = callbacks_module.main()
    assert request.instruction == "You sell widgets. Answer in one sentence."
    assert callbacks_module.after_tool(4.2049, None) == 4.2  # type: ignore[arg-type]


def test_a_module_is_type_checked_as_a_callback() -> None:
    """Statically, a module passes where a callback is expected (mypy checks its hooks)."""
    from adk import LlmAgent
    from adk.testing import ScriptedModel

    agent = LlmAgent("a", model=ScriptedModel([]), callbacks=[callbacks_module])
    assert agent.callbacks.objects == (callbacks_module,)


def test_decisions_shows_every_kind_of_decision(capsys: pytest.CaptureFixture[str], testing: Testing) -> None:
    kinds = asyncio.run(decisions.main())
    assert kinds == [
        "halted",
        "replaced",
        "retried",
        "fell_back",
        "deferred",
        "approved",
        "deferred",
        "rejected",
    ]
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("clerk: ")] == [
        "clerk: Sorry, I can't help with passwords.",
        "clerk: Call Ada on [phone].",
        "clerk: backup here: try 'pay bo 5000', 'reach Ada', 'unstable'.",
        "clerk: The bank said: sent 5000 € to bo",
        "clerk: The bank said: Rejected: not on a Sunday",
    ]
    assert testing.waits == [0.1, 0.0]  # the 503's retry, then at once to the backup


# Every example, the message `adk run` and `adk web` send it, and the last line it answers with.
EVERY = {
    "agui_server": (
        "What's the weather in Paris?",
        'weather: Here is the weather: {"city":"Paris","sky":"sunny"}',
    ),
    "budget": ("Weather in Paris?", "assistant: Sunny."),
    "caching": ("How much is a widget?", "shop: A widget costs 4.20 €."),
    "callbacks_module": ("Tell me about widgets.", "assistant: Widgets are great."),
    "decisions": ("How do I reach Ada?", "clerk: Call Ada on [phone]."),
    "durable": ("Book me a room", "concierge: The blue room is yours."),
    "extractor": (
        "Invoice INV-2024-17 of May 2, 2024: 1,250.00 EUR.",
        "replier: Thank you: we received invoice INV-2024-17 for 1250.0 EUR.",
    ),
    "guardrail": ("What's the capital of France?", "assistant: Paris is the capital of France."),
    "long_chat": ("Tell me about topic 1.", "assistant: Answer 1."),
    "mcp_agent": (
        "What's the weather in Paris tomorrow?",
        "planner: Travel server said: Paris: 18°C and sunny",
    ),
    "payments": ("pay bo 5000", '  ⚙ transfer(to="bo", amount=5000)'),  # and it waits for a person
    "redaction": ("How do I reach Ada?", "assistant: Call Ada on [phone] or write to [email]."),
    "retry_fallback": ("Hi!", "assistant: Hello from the backup model."),
    "test_my_agent": ("Where is order A1?", "support: Order A1 has shipped."),
    "timing": ("Weather in Paris and Tokyo?", "forecaster: Sunny everywhere."),
    "tool_auth": (
        "Please delete carol.",
        'admin_bot: Tool said: {"error":"delete_user needs the admin role; you are guest"}',
    ),
    "triage": ("I was charged twice.", "billing: I refunded the duplicate charge of 12 €."),
    "workflow": ("Write a blurb about widgets.", "critic: Approved."),
}
NOT_AN_AGENT = {"travel_mcp_server": "the MCP server examples/mcp_agent.py starts"}
SERVES_FOREVER = {"agui_server"}
"""`python examples/agui_server.py` serves until stopped: `adk web` serves the same agent below."""


def test_every_example_is_tried_each_way() -> None:
    found = {p.stem for p in EXAMPLES.glob("*.py")} - {"__init__"}
    assert found == set(EVERY) | set(NOT_AN_AGENT)


@pytest.mark.parametrize("name", sorted(set(EVERY) - SERVES_FOREVER))
def test_runs_as_a_script(name: str) -> None:
    root = EXAMPLES.parent
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(root), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout


@pytest.mark.parametrize("name", sorted(EVERY))
def test_opens_in_adk_run(name: str, tmp_path: Path) -> None:
    message, answer = EVERY[name]
    done = adk("run", str(EXAMPLES / f"{name}.py"), "-m", message, "--sessions", "s.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == answer


@pytest.mark.parametrize("name", sorted(EVERY))
async def test_opens_in_adk_web_and_answers_a_run(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, testing: Testing
) -> None:
    from adk.cli.loading import close_sessions, load_runner
    from adk.web import create_web_app

    monkeypatch.setattr(sys, "path", list(sys.path))  # the loader puts the file's folder first
    message, answer = EVERY[name]
    runner = load_runner(str(EXAMPLES / f"{name}.py"), str(tmp_path / "s.db"))
    app = create_web_app(runner)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            assert (await client.get("/")).status_code == 200
            body = {
                "threadId": "t1",
                "runId": "r1",
                "messages": [{"id": "u1", "role": "user", "content": message}],
            }
            response = await client.post("/agui", json=body)
    finally:
        await runner.close()
        close_sessions(runner)
    events = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    assert [e["type"] for e in events if e["type"].startswith("RUN_")] == ["RUN_STARTED", "RUN_FINISHED"]
    said = [e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == "adk.event"]
    if name == "payments":  # the page shows Approve / Reject for the waiting call
        [interrupt] = events[-1]["outcome"]["interrupts"]
        assert interrupt["id"] == "call-bo"
        assert [d["kind"] for e in said for d in e["decisions"]] == ["deferred"]
        return
    answers = [
        (e["author"], e["choices"][0]["message"]["content"])
        for e in said
        if e["object"] == "chat.completion" and e["choices"] and e["choices"][0]["message"]["content"]
    ]
    author, _, content = answer.partition(": ")
    assert answers[-1] == (author, content)
