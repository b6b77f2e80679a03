"""Structured output and transfer against a real server, checked for shape: a tiny model's words are noise.

llama.cpp turns `response_format`'s JSON schema and a forced tool call's parameters into grammars,
so even a 135M model answers in the shape asked for: that is what these tests rely on. The CI
server, llama-cpp-python's, takes the schema as `json_object` (`ADK_LIVE_SCHEMA_FORMAT=json_schema`
for a server that takes OpenAI's form, such as llama.cpp's own `llama-server`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import AsyncIterator
from typing import Literal, cast

import pytest
from pydantic import BaseModel

from adk import Cont, LlmAgent, ModelContext, ObjectType, Runner
from adk.agents import output_of
from adk.events import Event, Message
from adk.models.base import LlmRequest
from adk.models.openai import OpenAIModel
from tests.live.conftest import BASE_URL

pytestmark = pytest.mark.live

FORCE_TRANSFER = {"type": "function", "function": {"name": "transfer_to_agent"}}
SCHEMA_FORMAT = cast(
    Literal["json_schema", "json_object"], os.environ.get("ADK_LIVE_SCHEMA_FORMAT", "json_object")
)


class Verdict(BaseModel):
    ok: bool


@pytest.fixture
async def roomy_model(live_model_name: str) -> AsyncIterator[OpenAIModel]:
    """Like `live_model`, with room for a small JSON answer or tool call."""
    model = OpenAIModel(
        live_model_name,
        base_url=BASE_URL,
        timeout=120,
        temperature=0,
        max_tokens=64,
        schema_format=SCHEMA_FORMAT,
    )
    yield model
    await model.aclose()


async def collect(runner: Runner, message: str) -> list[Event]:
    return [e async for e in runner.run("live", "s", message)]


async def test_the_schema_goes_out_as_response_format_and_the_answer_matches_it(
    roomy_model: OpenAIModel,
) -> None:
    agent = LlmAgent("judge", model=roomy_model, instruction="Answer in JSON.", output_type=Verdict)
    request = LlmRequest(
        messages=[Message.user("Is the sky blue?")], response_format=agent._output.response_format
    )  # type: ignore[union-attr]

    [response] = [r async for r in roomy_model.generate(request)]

    assert response.choices[0].finish_reason == "stop"
    assert isinstance(json.loads(response.content)["ok"], bool)


async def test_structured_output_through_the_runner(roomy_model: OpenAIModel) -> None:
    agent = LlmAgent(
        "judge", model=roomy_model, instruction="Answer in JSON.", output_type=Verdict, output_key="verdict"
    )
    runner = Runner(agent)

    events = await collect(runner, "Is the sky blue?")

    assert [e.object for e in events] == [
        ObjectType.CHAT_COMPLETION,
        ObjectType.CHAT_COMPLETION,
        ObjectType.RUNNER_COMPLETION,
    ]
    verdict = output_of(events, Verdict)
    assert isinstance(verdict.ok, bool)
    assert events[1].actions.state_delta == {"verdict": {"ok": verdict.ok}}
    stored = await runner.session_service.get("live", "s")
    assert stored is not None
    assert stored.state == {"verdict": {"ok": verdict.ok}}


async def test_one_transfer_with_the_tool_choice_forced(roomy_model: OpenAIModel) -> None:
    class ForceTransfer:
        """Root's calls must transfer: the grammar then allows only an agent it may reach."""

        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            if ctx.agent.name != "root":
                return Cont(ctx)
            return Cont(
                dataclasses.replace(
                    ctx, request=ctx.request.model_copy(update={"tool_choice": FORCE_TRANSFER})
                )
            )

    billing = LlmAgent(
        "billing",
        model=roomy_model,
        description="Answers billing questions.",
        disallow_transfer_to_parent=True,
    )
    root = LlmAgent("root", model=roomy_model, sub_agents=[billing], callbacks=[ForceTransfer()])

    events = await collect(Runner(root), "I have a question about my invoice.")

    assert [(e.object, e.author) for e in events] == [
        (ObjectType.CHAT_COMPLETION, "user"),
        (ObjectType.CHAT_COMPLETION, "root"),
        (ObjectType.TOOL_RESPONSE, "root"),
        (ObjectType.AGENT_TRANSFER, "root"),
        (ObjectType.CHAT_COMPLETION, "billing"),
        (ObjectType.RUNNER_COMPLETION, "root"),
    ]
    [call] = events[1].tool_calls
    assert call.function.name == "transfer_to_agent"
    assert json.loads(call.function.arguments) == {"agent_name": "billing"}
    assert events[2].content == "Transferred to agent 'billing'."
    assert events[3].actions.transfer_to_agent == "billing"
    assert events[4].message is not None
    assert events[4].message.role == "assistant"
