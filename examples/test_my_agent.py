"""Testing your own agent: script the model, switch retry waits off, assert on what happened.

`ScriptedModel` answers from a script and records every request; `set_testing(True)` makes retry
waits instant (and records them). Run it: python -m pytest examples/test_my_agent.py
"""

from collections.abc import Iterator

import pytest

from adk import LlmAgent, LlmResponse, Model, Runner
from adk.errors import RateLimitError
from adk.events import ToolCall
from adk.recovery import Testing
from adk.testing import ScriptedModel, set_testing


def order_status(order_id: str) -> str:
    """Where an order is."""
    return {"A1": "shipped"}.get(order_id, "unknown")


def support_agent(model: Model) -> LlmAgent:
    """The agent under test, as the application builds it."""
    return LlmAgent("support", model=model, instruction="Help with orders.", tools=[order_status])


agent = support_agent(  # what `adk run` and `adk web` open, on a scripted model too
    ScriptedModel(
        [
            LlmResponse.calls(ToolCall.of("order_status", '{"order_id": "A1"}', id="c1")),
            "Order A1 has shipped.",
        ]
    )
)


@pytest.fixture(autouse=True)
def testing() -> Iterator[Testing]:
    with set_testing(True) as switch:
        yield switch


def test_it_looks_the_order_up_before_answering() -> None:
    model = ScriptedModel(
        [
            LlmResponse.calls(ToolCall.of("order_status", '{"order_id": "A1"}', id="c1")),
            "Order A1 has shipped.",
        ]
    )
    events = Runner(support_agent(model)).run_sync("user", "session", "Where is order A1?")

    assert [e.object for e in events] == [
        "chat.completion",  # the user's message
        "chat.completion",  # the model asks for the tool
        "tool.response",
        "chat.completion",  # the answer
        "runner.completion",
    ]
    assert events[2].content == "shipped"
    assert model.requests[0].instruction == "Help with orders."
    assert model.requests[1].messages[-1].content == "shipped"  # the model saw the tool's result
    assert events[-2].content == "Order A1 has shipped."
    model.assert_done()


def test_a_rate_limit_is_retried_after_the_servers_wait(testing: Testing) -> None:
    model = ScriptedModel([RateLimitError("429", retry_after=5), "Hello!"])
    events = Runner(support_agent(model)).run_sync("user", "session", "Hi")

    assert events[-2].content == "Hello!"
    assert testing.waits == [5]  # the wait was asked for, and skipped


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
