"""The OpenAI adapter's own cost, per request and per streamed chunk, against an in-process server.

httpx.MockTransport answers at once, so only the client side is measured: the openai SDK raw
(HTTP, auth and SSE, as `OpenAIModel` uses it), the SDK typed (`chat.completions.create`, whose
pydantic objects a naive adapter would pay for), and `OpenAIModel`. "adk's own cost" is
OpenAIModel minus the raw SDK. Run from the repository root:
`python -m benchmarks.openai_adapter [--chunks 200] [--rounds 15]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import openai

from adk.events import Message, ToolDeclaration
from adk.models.base import LlmRequest
from adk.models.openai import OpenAIModel

URL = "http://bench.test/v1"
TOOL = ToolDeclaration(
    name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}
)
REQUEST = LlmRequest(
    instruction="Be brief.",
    messages=[Message.user("Weather in Paris?"), Message.assistant("Sunny.")],
    tools=[TOOL],
)
RAW_BODY: dict[str, Any] = {
    "model": "bench",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Sunny."},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "", "parameters": TOOL.parameters},
        }
    ],
}


def completion_bytes() -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "bench",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        }
    ).encode()


def sse_bytes(chunks: int) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        data = {
            "id": "chatcmpl-2",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(data)}\n\n"

    body = [chunk({"role": "assistant", "content": ""})]
    body += [chunk({"content": " word"}) for _ in range(chunks)]
    body += [chunk({}, "stop"), "data: [DONE]\n\n"]
    return "".join(body).encode()


def client(body: bytes, content_type: str) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def best_us(runs: list[Callable[[], Awaitable[None]]], repeat: int, rounds: int) -> list[float]:
    """Per run, the best over `rounds` of its mean time in microseconds; rounds interleave the runs.

    The best, as timeit reports, because other processes on the machine only ever add time.
    """
    for run in runs:  # warm up
        for _ in range(max(repeat // 10, 1)):
            await run()
    best = [float("inf")] * len(runs)
    for _ in range(rounds):
        for i, run in enumerate(runs):
            start = time.perf_counter_ns()
            for _ in range(repeat):
                await run()
            best[i] = min(best[i], (time.perf_counter_ns() - start) / repeat / 1000)
    return best


async def main(chunks: int, rounds: int) -> None:
    print(f"python {sys.version.split()[0]}, openai {openai.__version__}, httpx {httpx.__version__}")
    print(f"µs, best of {rounds} rounds; SDK raw: HTTP and SSE only; SDK typed: chat.completions.create")

    http = client(completion_bytes(), "application/json")
    sdk = openai.AsyncOpenAI(api_key="k", base_url=URL, http_client=http, max_retries=0)  # type: ignore[arg-type,unused-ignore]
    model = OpenAIModel("bench", base_url=URL, api_key="k", http_client=http)

    async def raw_request() -> None:
        await sdk.post("/chat/completions", body=RAW_BODY, cast_to=object)

    async def typed_request() -> None:
        await sdk.chat.completions.create(**RAW_BODY)

    async def adk_request() -> None:
        async for _ in model.generate(REQUEST):
            pass

    report(
        "per request, not streamed",
        await best_us([raw_request, typed_request, adk_request], 200, rounds),
    )
    await http.aclose()

    http = client(sse_bytes(chunks), "text/event-stream")
    sdk = openai.AsyncOpenAI(api_key="k", base_url=URL, http_client=http, max_retries=0)  # type: ignore[arg-type,unused-ignore]
    model = OpenAIModel("bench", base_url=URL, api_key="k", http_client=http)
    streamed = REQUEST.model_copy(update={"stream": True})
    raw_body = {**RAW_BODY, "stream": True}

    async def raw_stream() -> None:
        stream = await sdk.post(
            "/chat/completions",
            body=raw_body,
            cast_to=object,
            stream=True,
            stream_cls=openai.AsyncStream[object],
        )
        async for _ in stream:
            pass

    async def typed_stream() -> None:
        async for _ in await sdk.chat.completions.create(stream=True, **RAW_BODY):
            pass

    async def adk_stream() -> None:
        async for _ in model.generate(streamed):
            pass

    report(
        f"per streamed chunk ({chunks}/request)",
        [us / chunks for us in await best_us([raw_stream, typed_stream, adk_stream], 10, rounds)],
    )
    await http.aclose()


def report(label: str, us: list[float]) -> None:
    raw, typed, adk = us
    print(
        f"{label:<32} SDK raw {raw:7.1f}   SDK typed {typed:7.1f}   OpenAIModel {adk:7.1f}"
        f"   adk's own cost {adk - raw:6.1f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=200, help="text chunks per streamed response")
    parser.add_argument("--rounds", type=int, default=15, help="rounds to take the best of")
    args = parser.parse_args()
    asyncio.run(main(args.chunks, args.rounds))
