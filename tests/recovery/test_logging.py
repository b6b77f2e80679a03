"""Recovery decisions are logged at INFO on `adk.recovery`, with their details on `record.adk`."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import tenacity

from adk import LlmAgent, LlmResponse, Runner, ToolContext
from adk.errors import AuthenticationError, ServerError
from adk.events import ToolCall
from adk.recovery import FallbackModels, FixedFallback, RetryPolicy, Testing
from adk.testing import ScriptedModel
from tests._runtime import Tool


def run(runner: Runner) -> None:
    runner.run_sync("u", "s", "hi")


def records(caplog: pytest.LogCaptureFixture) -> list[tuple[str, dict[str, Any]]]:
    return [(r.getMessage(), r.__dict__["adk"]) for r in caplog.records if r.name == "adk.recovery"]


def test_a_retry_says_when_and_why(caplog: pytest.LogCaptureFixture, testing: Testing) -> None:
    policy = RetryPolicy(wait=tenacity.wait_fixed(0.25))
    model = ScriptedModel([ServerError("503 unavailable"), "ok"], name="flaky")
    runner = Runner(LlmAgent("a", model=model), retry_policy=policy)
    with caplog.at_level(logging.INFO, logger="adk.recovery"):
        run(runner)
    [(message, details)] = records(caplog)
    assert message == "retrying model 'flaky' in 0.25s (attempt 2) after ServerError: 503 unavailable"
    assert details == {
        "action": "retry",
        "by": "callback:RetryPolicy.on_model_error",
        "invocation": details["invocation"],
        "agent": "a",
        "model": "flaky",
        "attempt": 1,
        "error": "ServerError: 503 unavailable",
        "wait": 0.25,
    }
    assert testing.waits == [0.25]


def test_a_switch_to_another_model_names_both(caplog: pytest.LogCaptureFixture, testing: Testing) -> None:
    backup = ScriptedModel(["ok"], name="backup")
    primary = ScriptedModel([AuthenticationError("bad key")], name="primary")
    runner = Runner(LlmAgent("a", model=primary, callbacks=[FallbackModels([backup])]))
    with caplog.at_level(logging.INFO, logger="adk.recovery"):
        run(runner)
    [(message, details)] = records(caplog)
    assert message == "falling back from model 'primary' to 'backup' after AuthenticationError: bad key"
    assert (details["action"], details["model"], details["to"]) == ("switch", "primary", "backup")


def test_a_fallback_result(caplog: pytest.LogCaptureFixture, testing: Testing) -> None:
    model = ScriptedModel([AuthenticationError("bad key")], name="m")
    runner = Runner(LlmAgent("a", model=model, callbacks=[FixedFallback("sorry")]))
    with caplog.at_level(logging.INFO, logger="adk.recovery"):
        run(runner)
    assert [m for m, _ in records(caplog)] == [
        "a fallback result stands in for model 'm' after AuthenticationError: bad key"
    ]


def test_a_tool_retry(caplog: pytest.LogCaptureFixture, testing: Testing) -> None:
    failures = [ConnectionError("reset")]

    async def fetch(args: dict[str, Any], ctx: ToolContext) -> str:
        if failures:
            raise failures.pop()
        return "page"

    tool = Tool("fetch", fetch, idempotent=True)
    model = ScriptedModel([LlmResponse.calls(ToolCall.of("fetch", id="c1")), "done"])
    runner = Runner(LlmAgent("a", model=model, tools=[tool]))
    with caplog.at_level(logging.INFO, logger="adk.recovery"):
        run(runner)
    [(message, details)] = records(caplog)
    assert message.startswith("retrying tool 'fetch' in ")
    assert message.endswith("s (attempt 2) after ConnectionError: reset")
    assert (details["tool"], details["attempt"]) == ("fetch", 1)


def test_nothing_is_formatted_when_info_is_off(caplog: pytest.LogCaptureFixture, testing: Testing) -> None:
    model = ScriptedModel([ServerError("503"), "ok"])
    with caplog.at_level(logging.WARNING, logger="adk.recovery"):
        run(Runner(LlmAgent("a", model=model)))
    assert records(caplog) == []
