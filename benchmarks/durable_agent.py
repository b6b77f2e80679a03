"""The agent `python -m benchmarks.durable --workers N` runs in its `adk worker` processes: a
model that answers from the request (any number of runs), one tool call per run."""

from __future__ import annotations

from collections.abc import AsyncIterator

from adk import LlmAgent, LlmResponse
from adk.models.base import LlmRequest
from adk.testing import call_tool


class Answering:
    """Asks for the price, then answers with it: a scripted S2 turn for every run."""

    name = "answering"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        if request.messages[-1].role == "user":
            yield call_tool("price", call_id="c1", item="widget")
        else:
            yield LlmResponse.text(f"it costs {request.messages[-1].content}", model=self.name)


def price(item: str) -> float:
    """The price of an item.

    Args:
        item: its name.
    """
    return 4.2


agent = LlmAgent("bench", model=Answering(), tools=[price])
