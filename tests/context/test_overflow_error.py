"""A request too long for the model is a `ContextOverflowError`, in the shapes real servers answer:
a chat-completions server on 127.0.0.1 refuses it as OpenAI (and vLLM) do, and as llama.cpp does."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from adk.errors import BadRequestError, ContextOverflowError, ModelError
from adk.events import Message
from adk.models.base import LlmRequest
from adk.models.openai import OpenAIModel
from tests.agui.support import serving

OPENAI = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
LLAMA_CPP = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 600,
        "n_ctx": 512,
    }
}
OTHER = {"error": {"message": "the last message must not be empty", "type": "invalid_request_error"}}


def refusing(body: dict[str, Any]) -> Starlette:
    async def chat(request: Request) -> JSONResponse:
        return JSONResponse(body, status_code=400)

    return Starlette(routes=[Route("/agui/chat/completions", chat, methods=["POST"])])


async def refusal(body: dict[str, Any], stream: bool) -> ModelError:
    with serving(refusing(body)) as url:
        model = OpenAIModel("small", base_url=url)
        request = LlmRequest(messages=[Message.user("Hi")], stream=stream)
        try:
            with pytest.raises(ModelError) as info:
                async for _ in model.generate(request):
                    pass
        finally:
            await model.aclose()
    return info.value


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "streamed"])
@pytest.mark.parametrize(
    ("body", "detail"),
    [(OPENAI, OPENAI["error"]["message"]), (LLAMA_CPP, LLAMA_CPP["error"]["message"])],
    ids=["openai", "llama.cpp"],
)
async def test_a_request_too_long_for_the_model_is_a_context_overflow(
    body: dict[str, Any], detail: str, stream: bool
) -> None:
    error = await refusal(body, stream)

    assert type(error) is ContextOverflowError
    assert isinstance(error, BadRequestError)
    assert (error.status_code, error.transient) == (400, False)
    assert str(error).endswith(f"the request is longer than the model's context (HTTP 400): {detail}")


async def test_another_bad_request_stays_a_bad_request() -> None:
    error = await refusal(OTHER, stream=False)

    assert type(error) is BadRequestError
    assert str(error).endswith("the request was rejected (HTTP 400): the last message must not be empty")
