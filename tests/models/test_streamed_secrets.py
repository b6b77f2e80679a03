"""A key streamed in pieces too short to recognise alone is masked as the pieces join, in the
partial chunks every consumer reads (AG-UI deltas, `adk run`, events), not only in the complete
message; and the URL's credentials are masked in each form a server may echo."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adk import LlmAgent, Runner, tool
from adk.events import Event, Message
from adk.models._redact import Redactor, StreamMask
from adk.models.base import LlmRequest
from adk.models.openai import OpenAIModel
from tests.agui.support import serving
from tests.models import streaming_server
from tests.models.streaming_server import KEY

pytestmark = pytest.mark.usefixtures("testing")


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return "found"


def partials(events: list[Event]) -> list[tuple[str, str]]:
    """Each partial event's delta: ("text", piece) or ("args", piece)."""
    pieces: list[tuple[str, str]] = []
    for event in events:
        if not event.is_partial or event.delta is None:
            continue
        if event.delta.content:
            pieces.append(("text", event.delta.content))
        pieces += (("args", c.function.arguments) for c in event.delta.tool_calls)
    return pieces


def joined(pieces: list[tuple[str, str]], kind: str) -> str:
    return "".join(text for k, text in pieces if k == kind)


async def test_a_key_streamed_in_short_pieces_by_a_loopback_server_is_masked_in_every_chunk() -> None:
    with serving(streaming_server.app()) as url:
        model = OpenAIModel("m", base_url=f"{url}/v1", api_key=KEY)
        agent = LlmAgent("a", model=model, tools=[lookup])
        events = [e async for e in Runner(agent).run("u", "s", "hi", stream=True)]
        await model.aclose()

    first = events[: next(i for i, e in enumerate(events) if e.message and e.message.tool_calls) + 1]
    pieces = partials(first)
    assert joined(pieces, "text") == "The key is *** ok"
    assert joined(pieces, "args") == '{"q": "***"}'
    # The partial chunks join to the complete message: nothing shown was later taken back.
    (call,) = first[-1].message.tool_calls  # type: ignore[union-attr]
    assert (first[-1].content, call.function.arguments) == ("The key is *** ok", '{"q": "***"}')
    # The text held back at most a few characters at a time, not the key's length.
    assert max(len(text) for kind, text in pieces if kind == "text") <= 7 + 3
    assert [e.content for e in events if e.message and e.message.role == "tool"] == ["found"]
    assert joined(partials(events[len(first) :]), "text") == events[-2].content == "Done: ***."
    assert not any(KEY[i : i + 8] in e.model_dump_json() for e in events for i in range(len(KEY) - 7))


def answer(*pieces: str) -> httpx.MockTransport:
    """A server that streams `pieces` as the content of one answer."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({'id': 'c', 'model': 'm', 'choices': [choice]})}\n\n"

    body = "".join(chunk({"content": p}) for p in pieces) + chunk({}, "stop") + "data: [DONE]\n\n"
    return httpx.MockTransport(
        lambda request: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    )


async def streamed(key: str | None, *pieces: str) -> list[str]:
    """The texts of the partial chunks the adapter yields for `pieces`, then the complete text."""
    async with httpx.AsyncClient(transport=answer(*pieces)) as client:
        model = OpenAIModel("m", base_url="http://fake.test/v1", api_key=key, http_client=client)
        request = LlmRequest(messages=[Message.user("hi")], stream=True)
        return [r.content async for r in model.generate(request)]


async def test_without_a_key_nothing_is_held_back_and_with_one_only_what_could_start_it() -> None:
    assert await streamed(None, "Hello", " wor", "ld") == ["Hello", " wor", "ld", "Hello world"]
    # "sk-" could begin the key: held until the next piece shows it does not; so is a last "r".
    assert await streamed(KEY, "ask", "-me", " later") == ["a", "sk-me", " late", "r", "ask-me later"]


def test_a_stream_mask_joins_to_the_whole_text_masked() -> None:
    mask = StreamMask(Redactor([KEY]))
    pieces = [mask.add(p) for p in ["key: ", KEY[:5], KEY[5:9], KEY[9:], " and ", KEY[:6]]]
    assert pieces == ["key: ", "", "", "", "*** and ", ""]
    assert mask.flush() == "sk-pro"  # the end of the text: too short a piece of the key to mask


secret_texts = st.text(alphabet="sk-proj-Zq4T ab", max_size=60)


@given(
    text=st.lists(st.sampled_from(["x y", KEY, KEY[:9], KEY[-10:], "sk-", "Zq4T"]) | secret_texts),
    cuts=st.lists(st.integers(1, 9), min_size=1),
)
def test_a_stream_mask_in_any_pieces_gives_what_masking_the_whole_gives(
    text: list[str], cuts: list[int]
) -> None:
    whole = "".join(text)
    redact = Redactor([KEY, "pw-9f8e7d6c"], ["ada:pw@"])
    mask, released, rest, i = StreamMask(redact), [], whole, 0
    while rest:
        size = cuts[i % len(cuts)]
        released.append(mask.add(rest[:size]))
        rest, i = rest[size:], i + 1
    released.append(mask.flush())
    assert "".join(released) == redact(whole)


# --- the base URL's credentials, in each form ----------------------------------------------------

USER, PASSWORD = "us@er", "p:ss w0rd/Zq4TfW8x"
WRITTEN_USER, WRITTEN = "us%40er", "p%3Ass%20w0rd%2FZq4TfW8x"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


async def test_each_form_of_the_urls_credentials_a_server_may_echo_is_masked() -> None:
    forms = [PASSWORD, WRITTEN, f"{USER}:{PASSWORD}", f"{WRITTEN_USER}:{WRITTEN}@", BASIC, f"Basic {BASIC}"]
    sent: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers["authorization"])
        message = {"role": "assistant", "content": " | ".join([*forms, request.headers["authorization"]])}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return httpx.Response(200, json={"id": "c", "model": "m", "choices": [choice]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        url = f"http://{WRITTEN_USER}:{WRITTEN}@fake.test/v1"
        model = OpenAIModel("m", base_url=url, api_key=KEY, http_client=client)
        [response] = [r async for r in model.generate(LlmRequest(messages=[Message.user("hi")]))]

    assert sent == [f"Basic {BASIC}"]  # httpx sends the URL's credentials, in place of the key
    assert response.content == " | ".join(["***"] * 3 + ["***", "***", "Basic ***", "Basic ***"])


async def test_a_token_written_as_the_urls_user_is_masked_and_a_user_name_alone_is_not() -> None:
    token = "ghp_Zq4TfW8xLm2Rb7Np0K"

    def server(request: httpx.Request) -> httpx.Response:
        content = f"{token} {request.headers['authorization']} administrator: hi"
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        return httpx.Response(200, json={"id": "c", "model": "m", "choices": [choice]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        contents = []
        for url in (f"http://{token}@fake.test/v1", "http://administrator:Pw7Kx2Nq9Lz@fake.test/v1"):
            model = OpenAIModel("m", base_url=url, http_client=client)
            contents += [r.content async for r in model.generate(LlmRequest(messages=[Message.user("hi")]))]

    basic = base64.b64encode(b"administrator:Pw7Kx2Nq9Lz").decode()
    assert contents == [
        "*** Basic *** administrator: hi",
        f"{token} Basic *** administrator: hi",  # the second model has no secret of the first's
    ]
    assert basic not in contents[1]
