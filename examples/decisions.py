"""Every decision a callback can make, in one keyless agent: halted, replaced, retried, fell back,
deferred, approved, rejected. Each is recorded on the event it shaped, and shown where it happened.

    Guardrail.before_model      "password"          -> halted: the model is never asked
    Redact.after_model          a phone number      -> replaced: the user sees the redacted text
    RetryThenFallback           "unstable"          -> retried after a 503, fell back after a 401
    LargeTransfers.before_tool  "pay bo 5000"       -> deferred, then approved or rejected by a person

Run it: python examples/decisions.py (it plays every turn, approving one transfer and rejecting
another), or adk web examples/decisions.py and type the messages: the page shows each decision
inline, and asks you to approve or reject the large transfers.
"""

import asyncio
import re
from collections.abc import AsyncIterator

import tenacity

from adk import (
    Approve,
    Cont,
    Defer,
    Halt,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    ModelContext,
    Reject,
    RetryPolicy,
    Runner,
    ToolContext,
)
from adk.errors import AuthenticationError, ServerError
from adk.events import ToolCall
from adk.recovery import RetryThenFallback

PHONE = re.compile(r"\+?\d[\d ]{7,}\d")


def transfer(to: str, amount: int) -> str:
    """Send `amount` euros to `to`."""
    return f"sent {amount} € to {to}"


class Clerk:
    """Stands in for a model, offline: pays on "pay <name> <amount>", gives Ada's number when asked,
    and otherwise says what to try. `unstable` makes its next calls fail: a 503, then a 401."""

    def __init__(self, name: str, *, unstable: bool = False) -> None:
        self.name = name
        self.failures: list[Exception] = []
        self.unstable = unstable

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        last = request.messages[-1]
        if self.unstable and last.role == "user" and "unstable" in last.content and not self.failures:
            self.failures = [
                ServerError("503 Service Unavailable", status_code=503),
                AuthenticationError("401 API key revoked", status_code=401),
            ]
        if self.failures:
            raise self.failures.pop(0)
        yield self.answer(last.role, last.content)

    def answer(self, role: str, said: str) -> LlmResponse:
        words = said.split()
        if role == "tool":
            return LlmResponse.text(f"The bank said: {said}", model=self.name)
        if len(words) == 3 and words[0].lower() == "pay" and words[2].isdigit():
            arguments = f'{{"to": "{words[1]}", "amount": {words[2]}}}'
            return LlmResponse.calls(
                ToolCall.of("transfer", arguments, id=f"call-{words[1]}"), model=self.name
            )
        if "ada" in said.lower():
            return LlmResponse.text("Call Ada on +44 20 7946 0958.", model=self.name)
        return LlmResponse.text(
            f"{self.name} here: try 'pay bo 5000', 'reach Ada', 'unstable'.", model=self.name
        )


class Guardrail:
    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
        if "password" in ctx.request.messages[-1].content.lower():
            return Halt(LlmResponse.text("Sorry, I can't help with passwords."))
        return Cont(ctx)


class Redact:
    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        if not PHONE.search(response.content):
            return response
        return LlmResponse.text(PHONE.sub("[phone]", response.content), model=response.model)


class LargeTransfers:
    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Defer:
        if ctx.args.get("amount", 0) > 1000:
            return Defer("transfers over 1000 € need a person's approval")
        return Cont(ctx)


def clerk() -> LlmAgent:
    return LlmAgent(
        "clerk",
        model=Clerk("primary", unstable=True),
        tools=[transfer],
        callbacks=[
            Guardrail(),
            Redact(),
            LargeTransfers(),
            RetryThenFallback(
                [Clerk("backup")],
                RetryPolicy(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_fixed(0.1)),
            ),
        ],
    )


agent = clerk()  # what `adk run` and `adk web` open

TURNS: list[tuple[str | None, dict[str, Approve | Reject]]] = [
    ("What's the admin password?", {}),
    ("How do I reach Ada?", {}),
    ("unstable: hello?", {}),
    ("pay bo 5000", {}),
    (None, {"call-bo": Approve()}),
    ("pay cy 9000", {}),
    (None, {"call-cy": Reject("not on a Sunday")}),
]
"""The turns `main` plays: a message, or a person's answer to the calls waiting for approval."""


async def main() -> list[str]:
    runner = Runner(clerk())
    kinds: list[str] = []
    for message, approvals in TURNS:
        print(f"user: {message}" if message else f"person: {approvals}")
        seen: list[object] = []  # a failed attempt's decision is on its event and on the answer's
        async for event in runner.run("user", "session", message, approvals=approvals or None):
            for decision in event.decisions:
                if decision not in seen:
                    seen.append(decision)
                    kinds.append(decision.kind)
                    print(f"  {decision.kind}: {decision.target}")
            if event.author == "clerk" and event.object == "chat.completion" and event.content:
                print(f"clerk: {event.content}")
    return kinds


if __name__ == "__main__":
    asyncio.run(main())
