"""The `adk web` app without a browser: routes, the sessions' endpoints scoped by identity, the
details a page needs on the AG-UI stream, and where it may be served."""

from __future__ import annotations

import gc
import json
import re
import weakref
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.requests import Request

from adk import web
from adk.agents import LlmAgent
from adk.cli import main
from adk.events import LlmResponse, ToolCall, Usage
from adk.runner import Runner
from adk.testing import ScriptedModel
from adk.web import STATIC, create_web_app, serve_web, timing
from tests.agui.support import Hanging, post_run, run_input, serving, weather


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
        for name in (
            "app.js",
            "agui.js",
            "decisions.js",
            "icons.js",
            "picker.js",
            "timeline.js",
            "style.css",
            "timeline.css",
        ):
            assert (await c.get(f"/static/{name}")).text == (STATIC / name).read_text()
        assert (await c.get("/static/../__init__.py")).status_code == 404
    for file in STATIC.iterdir():
        assert not re.search(r"https?://", file.read_text()), f"{file.name} names another site"


async def test_every_adk_event_goes_out_whole_with_each_calls_start_latency_and_usage() -> None:
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
    # Each model and tool call's start (on the events' clock) and time, for the page's timeline.
    timed = [e for e in details if "latency" in e]
    assert [e["object"] for e in timed] == ["chat.completion", "tool.response", "chat.completion"]
    assert timed[0]["failed_at"] == timed[2]["failed_at"] == []
    for e in timed:
        assert details[0]["timestamp"] <= e["started"] <= e["started"] + e["latency"] <= e["timestamp"]


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


@pytest.mark.parametrize("bound", ["127.0.0.1", "127.0.0.2", "::1"])
async def test_on_loopback_a_request_naming_another_host_is_refused(
    bound: str, served: dict[str, Any]
) -> None:
    """A page on another site that rebinds its name to 127.0.0.1 still sends its own name as Host:
    the same check as `adk serve` and `adk mcp serve` (adk.serving), IPv6 loopback included."""
    serve_web(LlmAgent("helper", model=ScriptedModel([])), bound, 8123)
    assert (served["host"], served["port"]) == (bound, 8123)
    refused = (
        "the Host header 'evil.example:8123' names no host this server answers (it answers loopback "
        "names and the hosts it was given with allowed_hosts)"
    )
    async with client(served["app"]) as c:
        for host in ("127.0.0.1:8123", "localhost:8123", "[::1]:8123"):
            assert (await c.get("/api/sessions", headers={"host": host})).status_code == 200
        for path in ("/", "/static/app.js", "/api/sessions"):
            response = await c.get(path, headers={"host": "evil.example:8123"})
            assert (response.status_code, response.json()) == (421, {"detail": refused})


def test_adk_web_refuses_a_public_host_without_an_identity(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", "agent.py", "--host", "0.0.0.0"]) == 1
    assert capsys.readouterr().err == (
        "adk: refusing to serve on 0.0.0.0 without --identity MODULE:FUNCTION: every client would be "
        "'anonymous' and could read any thread it names (--insecure-anonymous serves it anyway)\n"
    )


def test_a_client_that_leaves_mid_model_call_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model-call timer is the run's: it goes with the run however the run ends, so that no
    client can make the server keep what it sent (a run id of up to 256 characters) past its run."""
    timers: list[weakref.ref[Any]] = []

    class Recorded(timing.RunTimes):
        def __init__(self) -> None:
            super().__init__()
            timers.append(weakref.ref(self))

    monkeypatch.setattr(timing, "RunTimes", Recorded)
    model = Hanging(ScriptedModel(["Back again"]))
    app = create_web_app(Runner(LlmAgent("helper", model=model)))
    with serving(app) as url:
        with (
            httpx.Client(timeout=30) as c,
            c.stream("POST", url, json=run_input("t1", "r-left", "hi")) as response,
        ):
            for line in response.iter_lines():
                if '"TEXT_MESSAGE_CONTENT"' in line:  # the model streamed a word, and waits
                    break  # dropping the stream closes the connection mid model call
        assert model.closed.wait(timeout=30), "the model call was not stopped"
        events = post_run(url, run_input("t1", "r2", "hi again"))  # waits for the first run to let go
    assert [e["type"] for e in events][-1] == "RUN_FINISHED"
    gc.collect()
    assert timers[0]() is None  # the abandoned run's is gone, while the app serves on
    assert len(timers) == 2  # one per run
    assert app.routes


async def test_a_folders_agents_are_served_each_under_its_name_listing_only_its_own_sessions() -> None:
    runners = {
        "ann": Runner(LlmAgent("helper", model=ScriptedModel(["Hi"]), description="Helps.")),
        "bob": Runner(LlmAgent("other", model=ScriptedModel(["Yo"]))),
    }
    runners["bob"].session_service = runners["ann"].session_service  # one store, as on disk
    listed = [
        {"name": "ann", "description": "Helps.", "url": "agents/ann/"},
        {"name": "bob", "description": "", "url": "agents/bob/"},
    ]
    async with client(web.create_folder_app(runners)) as c:
        assert (await c.get("/api/agent")).json() == {"name": "", "description": "", "agents": listed}
        assert (await c.get("/agents/ann/api/agent")).json() == {
            "name": "helper",
            "description": "Helps.",
            "agents": listed,
            "prefix": "ann-",
        }
        assert (await c.get("/agents/bob")).status_code == 307  # to its page, /agents/bob/
        assert (await c.get("/agents/bob/")).headers["content-type"].startswith("text/html")
        assert (await c.post("/agents/ann/agui", json=run_input("ann-1", "r1", "hi"))).status_code == 200
        assert [s["id"] for s in (await c.get("/agents/ann/api/sessions")).json()] == ["ann-1"]
        assert (await c.get("/agents/bob/api/sessions")).json() == []


def test_adk_web_serves_every_agent_file_of_a_folder(tmp_path: Any, served: dict[str, Any]) -> None:
    (tmp_path / "first.py").write_text(AGENT_FILE.format(name="first"))
    (tmp_path / "second.py").write_text(
        AGENT_FILE.format(name="second").replace("agent =", "runner = Runner(") + ")"
    )
    (tmp_path / "helpers.py").write_text("raise SystemExit('a helper module is never run')\n")
    (tmp_path / "_private.py").write_text("agent = 1\n")
    assert main(["web", str(tmp_path), "--sessions", str(tmp_path / "s.sqlite3")]) == 0
    routes = [getattr(r, "path", "") for r in served["app"].app.routes]
    assert routes == ["/", "/static", "/api/agent", "/agents/first", "/agents/second"]


def test_adk_web_refuses_a_folder_without_an_agent_file(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.py").write_text("x = 1\n")
    assert main(["web", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"adk: {tmp_path}: no agent file in this folder (a .py defining `agent` or `runner`)\n"
    )


AGENT_FILE = """
from adk import LlmAgent, Runner
from adk.testing import ScriptedModel

agent = LlmAgent("{name}", model=ScriptedModel(["hi"]))
"""
