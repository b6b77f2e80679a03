"""Human approval: a payment agent whose transfers over 1,000 wait for a person.

`before_tool` defers a large transfer (`Defer(reason)`); the run ends with an approval request
and is paused in the session. The application asks a person, then answers with
`runner.run(..., approvals={call_id: Approve() | Reject(reason)})`, which resumes the same
invocation; a small transfer runs at once. Run it: python examples/payments.py, or
adk web examples/payments.py and type "pay bo 5000": the page asks you to approve or reject it.
"""

import asyncio
from collections.abc import AsyncIterator

from adk import (
    Approve,
    Cont,
    Defer,
    Event,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    ObjectType,
    Reject,
    Runner,
    ToolContext,
)
from adk.callbacks import Deferred
from adk.events import ToolCall

LIMIT = 1000


def transfer(to: str, amount: int) -> str:
    """Send `amount` euros to `to`.

    Args:
        to: the payee.
        amount: whole euros.
    """
    return f"sent {amount} € to {to}"


class LargeTransfers:
    """Transfers over the limit wait for a person's approval."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Defer:
        if ctx.tool.name == "transfer" and ctx.args.get("amount", 0) > LIMIT:
            return Defer(f"transfers over {LIMIT} € need approval")
        return Cont(ctx)


def report(request: LlmRequest) -> str:
    return f"Bank said: {request.messages[-1].content}"


def pay(to: str, amount: int) -> LlmResponse:
    arguments = f'{{"to": "{to}", "amount": {amount}}}'
    return LlmResponse.calls(ToolCall.of("transfer", arguments, id=f"call-{to}"), model="teller")


class Teller:
    """Stands in for a model, offline: "pay <name> <amount>" asks for a transfer; a tool's result
    is reported. A real model would understand more than that."""

    name = "teller"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        last = request.messages[-1]
        words = last.content.split()
        if last.role == "tool":
            yield LlmResponse.text(report(request), model=self.name)
        elif len(words) == 3 and words[0].lower() == "pay" and words[2].isdigit():
            yield pay(words[1], int(words[2]))
        else:
            yield LlmResponse.text(
                'Say "pay <name> <amount>": pay bo 5000 waits for approval.', model=self.name
            )


def bank() -> LlmAgent:
    return LlmAgent("bank", model=Teller(), tools=[transfer], callbacks=[LargeTransfers()])


agent = bank()  # what `adk run` and `adk web` open: in `adk web`, approve or reject on the page


async def main() -> list[str]:
    runner = Runner(bank())
    said: list[str] = []

    async def show(events: AsyncIterator[Event]) -> None:
        async for event in events:
            for decision in event.decisions:
                if isinstance(decision, Deferred):
                    said.append(f"waits: {decision.call_id} {decision.arguments} ({decision.reason})")
            if event.author == "bank" and event.object == ObjectType.CHAT_COMPLETION and event.content:
                said.append(f"assistant: {event.content}")

    await show(runner.run("u", "s", "pay ana 50"))
    await show(runner.run("u", "s", "pay bo 5000"))
    await show(runner.run("u", "s", approvals={"call-bo": Approve()}))
    await show(runner.run("u", "s", "pay cy 9000"))
    await show(runner.run("u", "s", approvals={"call-cy": Reject("not on a Sunday")}))
    for line in said:
        print(line)
    return said


if __name__ == "__main__":
    asyncio.run(main())
