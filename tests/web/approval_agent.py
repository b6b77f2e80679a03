"""The browser test's bank: `pay` needs a person's approval; the model pays whom the user names
and then repeats what the tool said."""

import json

from adk import LlmAgent, LlmRequest, LlmResponse, ToolCall, tool
from adk.testing import ScriptedModel


@tool(requires_approval=True)
def pay(to: str, amount: int) -> str:
    """Pay `amount` to `to`."""
    return f"sent {amount} to {to}"


def bank(request: LlmRequest) -> LlmResponse | str:
    last = request.messages[-1]
    if last.role == "user":  # "pay bo 5000"
        _, to, amount = last.content.split()
        arguments = json.dumps({"to": to, "amount": int(amount)})
        return LlmResponse.calls(ToolCall.of("pay", arguments, id=f"pay-{to}"))
    return f"The bank said: {last.content}"


agent = LlmAgent("bank", model=ScriptedModel([bank] * 10), tools=[pay])
