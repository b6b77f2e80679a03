"""`before_tool` guards every execution: no tool body runs with arguments its chain has not passed.

An authorising callback records what it passed; the tools record what ran. On every path (normal,
retried, repaired, fallback, another tool) every execution must have been passed, and an
attacker's call (truncated JSON with a huge amount, an unknown tool repaired to a real one) must
be refused.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
import tenacity

from adk import Cont, Fallback, Halt, LlmAgent, LlmResponse, Raise, Retry, RetryPolicy, Runner, ToolContext
from adk.callbacks.decisions import FellBack, Halted, Retried
from adk.errors import ToolArgumentsError, ToolNotFoundError
from adk.events import ToolCall
from adk.recovery import Testing
from adk.testing import ScriptedModel
from tests._runtime import Tool, reply, run

pytestmark = pytest.mark.usefixtures("testing")

LIMIT = 1000


class Authorize:
    """Refuses transfers above LIMIT; records every (tool, arguments) it let through."""

    def __init__(self) -> None:
        self.passed: list[tuple[str, dict[str, Any]]] = []
        self.refused: list[tuple[str, dict[str, Any]]] = []

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
        seen = (ctx.tool.name, copy.deepcopy(ctx.args))
        if ctx.args.get("amount", 0) > LIMIT:
            self.refused.append(seen)
            return Halt(f"refused: {ctx.tool.name} of {ctx.args['amount']} is above {LIMIT}")
        self.passed.append(seen)
        return Cont(ctx)


class Bank:
    """Transfer tools that record every execution, failing on demand."""

    def __init__(self, failures: int = 0) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self.failures = failures
        self.transfer = Tool("transfer", self._run("transfer"))
        self.wire = Tool("wire", self._run("wire"))

    def _run(self, name: str) -> Any:
        def body(args: dict[str, Any], ctx: ToolContext) -> str:
            self.ran.append((name, copy.deepcopy(args)))
            if self.failures:
                self.failures -= 1
                raise ConnectionError("the bank is unreachable")
            return f"sent {args['amount']}"

        return body


def transfer(arguments: str, name: str = "transfer") -> LlmResponse:
    return LlmResponse.calls(ToolCall.of(name, arguments, id="c1"))


async def go(bank: Bank, auth: Authorize, arguments: str, *repairs: object, name: str = "transfer") -> str:
    """One turn whose model calls `name` with `arguments`; the tool's result as the model saw it."""
    model = ScriptedModel([transfer(arguments, name), reply])
    agent = LlmAgent("bank", model=model, tools=[bank.transfer, bank.wire], callbacks=[auth, *repairs])
    events = await run(Runner(agent))
    assert all(ran in auth.passed for ran in bank.ran), "a tool ran with arguments before_tool never passed"
    return next(e for e in events if e.object == "tool.response").content


class RepairJson:
    """Repairs truncated JSON arguments by closing the object: the kind of help that was a bypass."""

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext] | Raise:
        if isinstance(error, ToolArgumentsError) and ctx.attempt == 1:
            calls = ctx.invocation.session.events[-1].tool_calls  # the model's response, stored
            raw = next(c.function.arguments for c in calls if c.id == ctx.tool_call_id)
            return Retry(dataclasses.replace(ctx, args=json.loads(raw + "}")))
        return Raise(error)


class RenameTool:
    """Maps a tool name the model invented to a real tool, with the arguments it meant."""

    def __init__(self, bank: Bank, args: dict[str, Any]) -> None:
        self.bank = bank
        self.args = args

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext] | Raise:
        if isinstance(error, ToolNotFoundError):
            return Retry(dataclasses.replace(ctx, tool=self.bank.transfer, args=self.args))
        return Raise(error)


async def test_a_normal_call_runs_with_the_arguments_before_tool_passed() -> None:
    bank, auth = Bank(), Authorize()
    assert await go(bank, auth, '{"amount": 10, "to": "bob"}') == "sent 10"
    assert auth.passed == bank.ran == [("transfer", {"amount": 10, "to": "bob"})]


async def test_an_attackers_truncated_json_repaired_by_a_callback_is_refused_before_it_runs() -> None:
    bank, auth = Bank(), Authorize()
    result = await go(bank, auth, '{"amount": 1000000', RepairJson())
    assert result == "refused: transfer of 1000000 is above 1000"
    assert bank.ran == []  # before the fix: the repaired transfer ran, unchecked
    assert auth.refused == [("transfer", {"amount": 1000000})]


async def test_a_repaired_call_within_the_limit_passes_and_runs() -> None:
    bank, auth = Bank(), Authorize()
    assert await go(bank, auth, '{"amount": 5', RepairJson()) == "sent 5"
    assert bank.ran == auth.passed == [("transfer", {"amount": 5})]


async def test_an_unknown_tool_repaired_to_a_real_one_is_refused_before_it_runs() -> None:
    bank, auth = Bank(), Authorize()
    huge = {"amount": 10**9, "to": "mallory"}
    result = await go(bank, auth, json.dumps(huge), RenameTool(bank, huge), name="transfer_money")
    assert result == "refused: transfer of 1000000000 is above 1000"
    assert bank.ran == []
    assert auth.refused == [("transfer", huge)]


async def test_a_retry_with_the_same_arguments_does_not_pass_before_tool_again(testing: Testing) -> None:
    bank, auth = Bank(failures=1), Authorize()
    bank.transfer.idempotent = True  # so the default policy retries the connection error
    assert await go(bank, auth, '{"amount": 10}') == "sent 10"
    assert bank.ran == [("transfer", {"amount": 10})] * 2
    assert auth.passed == [("transfer", {"amount": 10})]  # once per envelope: passed args run again
    assert len(testing.waits) == 1


async def test_arguments_edited_in_place_before_a_retry_pass_before_tool_again() -> None:
    class Inflate:
        def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext] | Raise:
            if ctx.attempt == 1:
                ctx.args["amount"] = 10**6  # in place: the same dict object comes back
                return Retry(ctx)
            return Raise(error)

    bank, auth = Bank(failures=1), Authorize()
    assert await go(bank, auth, '{"amount": 10}', Inflate()) == "refused: transfer of 1000000 is above 1000"
    assert bank.ran == [("transfer", {"amount": 10})]
    assert auth.refused == [("transfer", {"amount": 10**6})]


async def test_a_retry_on_another_tool_passes_before_tool_for_that_tool() -> None:
    class UseWire:
        def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext] | Raise:
            if ctx.tool.name == "transfer":
                return Retry(dataclasses.replace(ctx, tool=bank.wire))
            return Raise(error)

    bank, auth = Bank(failures=1), Authorize()
    assert await go(bank, auth, '{"amount": 10}', UseWire()) == "sent 10"
    assert bank.ran == auth.passed == [("transfer", {"amount": 10}), ("wire", {"amount": 10})]


async def test_a_fallback_result_runs_no_tool_body() -> None:
    class Sorry:
        def on_tool_error(self, error: Exception, ctx: ToolContext) -> Fallback[str]:
            return Fallback("the bank is down; try later")

    bank, auth = Bank(failures=1), Authorize()
    assert await go(bank, auth, '{"amount": 10}', Sorry()) == "the bank is down; try later"
    assert bank.ran == auth.passed == [("transfer", {"amount": 10})]


async def test_the_decisions_of_each_path_are_on_the_tool_response() -> None:
    bank, auth = Bank(), Authorize()
    model = ScriptedModel([transfer('{"amount": 1000000'), reply])
    agent = LlmAgent("bank", model=model, tools=[bank.transfer], callbacks=[auth, RepairJson()])
    events = await run(Runner(agent, retry_policy=RetryPolicy(wait=tenacity.wait_fixed(0.25))))
    (response,) = [e for e in events if e.object == "tool.response"]
    assert response.decisions == (
        Retried(
            "callback:RepairJson.on_tool_error",
            "tool:transfer",
            attempt=2,
            wait=0.25,
            error="ToolArgumentsError",
            message="invalid arguments for tool 'transfer': arguments are not valid JSON "
            """(EOF while parsing an object at line 1 column 18): '{"amount": 1000000'""",
        ),
        Halted("callback:Authorize.before_tool", "tool:transfer"),
    )


async def test_a_retry_on_another_tool_is_a_fallback_decision() -> None:
    bank, auth = Bank(), Authorize()
    model = ScriptedModel([transfer('{"amount": 10}', "pay"), reply])
    agent = LlmAgent(
        "bank", model=model, tools=[bank.transfer], callbacks=[auth, RenameTool(bank, {"amount": 10})]
    )
    events = await run(Runner(agent))
    (response,) = [e for e in events if e.object == "tool.response"]
    assert response.content == "sent 10"
    assert response.decisions == (
        FellBack(
            "callback:RenameTool.on_tool_error",
            "tool:pay",
            "tool:transfer",
            "ToolNotFoundError",
            "unknown tool 'pay'; available: transfer",
        ),
    )
