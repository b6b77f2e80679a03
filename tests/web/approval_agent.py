"""The browser test's bank: `pay` needs a person's approval; the model pays whom the user names
and then repeats what the tool said."""

import json

from adk import LlmAgent, LlmRequest, LlmResponse, tool
from adk.events import ToolCall, Usage
from adk.testing import ScriptedModel


@tool(requires_approval=True)
def pay(to: str, amount: int) -> str:
    """Pay `amount` to `to`."""
    return f"sent {amount} to {to}"


def bank(request: LlmRequest) -> LlmResponse:
    last = request.messages[-1]
    if last.role == "user":  # "pay bo 5000"
        _, to, amount = last.content.split()
        arguments = json.dumps({"to": to, "amount": int(amount)})
        return LlmResponse.calls(ToolCall.of("pay", arguments, id=f"pay-{to}"), model="teller", usage=USAGE)
    return LlmResponse.text(f"The bank said: {last.content}", model="teller", usage=USAGE)


USAGE = Usage(prompt_tokens=12, completion_tokens=3, total_tokens=15)
"""What the teller reports for each call, which the page shows."""


agent = LlmAgent("bank", model=ScriptedModel([bank] * 10), tools=[pay])
