"""Type-checked only (mypy --strict), never run: structured output's typed value, transfers, conditions."""

import dataclasses
from typing import assert_type

from pydantic import BaseModel
from typing_extensions import TypedDict

from adk import AgentTool, Event, LlmAgent, LoopAgent, Runner
from adk.agents import Condition, last_event, mentioned, output_of, output_response, state_set
from adk.testing import ScriptedModel, call_tool, transfer_to


class Invoice(BaseModel):
    number: str
    total: float


@dataclasses.dataclass
class Item:
    name: str


class Person(TypedDict):
    name: str


events: list[Event] = []
assert_type(output_of(events, Invoice), Invoice)
assert_type(output_of(events, Invoice, author="extractor"), Invoice)
assert_type(output_of(events, list[Item]), list[Item])
assert_type(output_of(events, Person), Person)
total: float = output_of(events, Invoice).totl  # type: ignore[attr-defined]
output_of(events)  # type: ignore[call-arg]

model = ScriptedModel([transfer_to("billing"), call_tool("lookup", order="42"), output_response(Item("pen"))])
billing = LlmAgent("billing", model=model, disallow_transfer_to_parent=True)
helper = LlmAgent("helper", model=model, output_type=Invoice, output_key="invoice", output_retries=1)
root = LlmAgent("root", model=model, sub_agents=[billing], tools=[helper, AgentTool(helper, name="again")])
Runner(root).run("u", "s", "hi", agent="billing")
Runner(root).run_sync("u", "s", "hi", agent="root")
LlmAgent("x", model=model, sub_agents=[billing], disallow_transfer_to_peers="no")  # type: ignore[arg-type]

until = state_set("approved") & ~mentioned("but") | last_event(lambda e: e.author == "critic")
assert_type(until, Condition)
LoopAgent("loop", sub_agents=[root], until=until)
LoopAgent("loop", sub_agents=[root], until=lambda: True)  # type: ignore[arg-type]
last_event(lambda e: e.nope)  # type: ignore[attr-defined]
LlmAgent("x", model=model, output_type="Invoice")  # type: ignore[arg-type]
Runner(root).run_sync("hi")  # a first script's: the default user and session
Runner(root).run_sync("u", "hi")  # type: ignore[call-overload]
LlmAgent("typed", model="openai:gpt-4o-mini")  # a provider-prefixed string is a model too
