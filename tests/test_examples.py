"""Every example runs, prints what its docstring promises, and leaves the traces it should."""

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from adk.recovery import Testing
from examples import (
    caching,
    callbacks_module,
    extractor,
    guardrail,
    payments,
    redaction,
    retry_fallback,
    timing,
    tool_auth,
    triage,
    workflow,
)

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


@pytest.mark.parametrize(
    "name",
    ["guardrail", "caching", "redaction", "tool_auth", "workflow", "callbacks_module", "triage", "extractor"],
)
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
