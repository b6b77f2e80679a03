"""The `adk web` app without a browser: routes, the sessions' endpoints scoped by identity, the
details a page needs on the AG-UI stream, and where it may be served."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.requests import Request

from adk.agents import LlmAgent
from adk.cli import main
from adk.events import LlmResponse, ToolCall, Usage
from adk.runner import Runner
from adk.testing import ScriptedModel
from adk.web import STATIC, create_web_app, serve_web
from tests.agui.support import run_input, weather


def by_header(request: Request) -> str | None:
    return request.headers.get("x-user")


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


def sse(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


async def test_the_page_and_its_files_are_served_from_the_package_and_load_nothing_from_elsewhere() -> None:
    async with client(create_web_app(Runner(LlmAgent("a", model=ScriptedModel([]))))) as c:
        page = await c.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        for name in ("app.js", "agui.js", "style.css"):
            assert (await c.get(f"/static/{name}")).text == (STATIC / name).read_text()
        assert (await c.get("/static/../__init__.py")).status_code == 404
    for file in STATIC.iterdir():
        assert not re.search(r"https?://", file.read_text()), f"{file.name} names another site"


async def test_every_adk_event_goes_out_whole_with_the_model_calls_latency_and_usage() -> None:
    usage = Usage(prompt_tokens=12, completion_tokens=3, total_tokens=15)
    call = ToolCall.of("weather", '{"city": "Paris"}', id="call_1")
    answers = [
        LlmResponse.calls(call, usage=usage, model="m"),
        LlmResponse.text("Sunny", usage=usage, model="m"),
    ]
    model = ScriptedModel(answers)
    async with client(create_web_app(Runner(LlmAgent("helper", model=model, tools=[weather])))) as c:
        response = await c.post("/agui", json=run_input("t1", "r1", "Weather in Paris?"))
    assert response.status_code == 200
    details = [e["value"] for e in sse(response.text) if e["type"] == "CUSTOM" and e["name"] == "adk.event"]
    assert [(e["author"], e["object"]) for e in details] == [
        ("user", "chat.completion"),
        ("helper", "chat.completion"),
        ("helper", "tool.response"),
        ("helper", "chat.completion"),
        ("helper", "runner.completion"),
    ]
    calls = [e for e in details if e["model"]]
    assert [e["usage"] for e in calls] == [usage.model_dump()] * 2
    assert all(isinstance(e["latency"], float) and e["latency"] >= 0 for e in calls)
    assert ["latency" in e for e in details] == [False, True, False, True, False]


async def test_sessions_are_listed_and_opened_only_for_the_user_the_identity_names() -> None:
    runner = Runner(LlmAgent("helper", model=ScriptedModel(["Hello Ann", "Hello Bob"])))
    async with client(create_web_app(runner, identity=by_header)) as c:
        ann, bob = {"x-user": "ann"}, {"x-user": "bob"}
        assert (
            await c.post("/agui", json=run_input("ann-1", "r1", "hi, I'm Ann"), headers=ann)
        ).status_code == 200
        assert (await c.post("/agui", json=run_input("bob-1", "r2", "hi"), headers=bob)).status_code == 200

        listed = (await c.get("/api/sessions", headers=ann)).json()
        assert [(s["id"], s["title"]) for s in listed] == [("ann-1", "hi, I'm Ann")]
        opened = (await c.get("/api/sessions/ann-1", headers=ann)).json()
        assert [e["choices"][0]["message"]["content"] for e in opened["events"][:2]] == [
            "hi, I'm Ann",
            "Hello Ann",
        ]

        # Bob names Ann's session: it does not exist for him. Without an identity: refused.
        stolen = await c.get("/api/sessions/ann-1", headers=bob)
        assert (stolen.status_code, stolen.json()) == (404, {"detail": "no session 'ann-1'"})
        assert [s["id"] for s in (await c.get("/api/sessions", headers=bob)).json()] == ["bob-1"]
        for path in ("/api/sessions", "/api/sessions/ann-1"):
            refused = await c.get(path)
            assert refused.status_code == 401
            assert refused.json() == {"detail": "the request carries no identity this server accepts"}


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What `serve_web` handed to uvicorn, instead of serving it."""
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: seen.update(app=app, **options))
    return seen


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.com"])
def test_serve_web_refuses_anonymous_clients_beyond_loopback(served: dict[str, Any], host: str) -> None:
    agent = LlmAgent("helper", model=ScriptedModel([]))
    with pytest.raises(ValueError, match=f"refusing to serve on {host} without an identity function"):
        serve_web(agent, host)
    assert served == {}
    serve_web(agent, host, insecure_anonymous=True)
    assert served["host"] == host
    serve_web(agent, host, identity=by_header)
    assert served["host"] == host


async def test_on_loopback_a_request_naming_another_host_is_refused(served: dict[str, Any]) -> None:
    """A page on another site that rebinds its name to 127.0.0.1 still sends its own name as Host."""
    serve_web(LlmAgent("helper", model=ScriptedModel([])), port=8123)
    assert (served["host"], served["port"]) == ("127.0.0.1", 8123)
    for host, status in [("127.0.0.1:8123", 200), ("localhost:8123", 200), ("evil.example:8123", 400)]:
        async with client(served["app"]) as c:
            assert (await c.get("/api/sessions", headers={"host": host})).status_code == status


def test_adk_web_refuses_a_public_host_without_an_identity(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", "agent.py", "--host", "0.0.0.0"]) == 1
    assert capsys.readouterr().err == (
        "adk: refusing to serve on 0.0.0.0 without --identity MODULE:FUNCTION: every client would be "
        "'anonymous' and could read any thread it names (--insecure-anonymous serves it anyway)\n"
    )
