"""`serve` and the optional dependencies: nothing heavy is imported until it is used."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.requests import Request

from adk.agents import LlmAgent
from adk.agui import serve
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests.agui.support import run_input

ROOT = Path(__file__).parents[2]


def test_importing_adk_and_adk_agui_imports_no_optional_dependency() -> None:
    code = (
        "import sys, adk, adk.agui; print([m for m in ('ag_ui', 'starlette', 'uvicorn') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What `serve` handed to uvicorn, instead of serving it."""
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: seen.update(app=app, **options))
    return seen


async def test_serve_wraps_an_agent_in_a_runner_and_starts_uvicorn_on_loopback(
    served: dict[str, Any],
) -> None:
    serve(LlmAgent("helper", model=ScriptedModel(["Hello"])), port=8123)
    assert (served["host"], served["port"]) == ("127.0.0.1", 8123)
    transport = httpx.ASGITransport(app=served["app"])
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.post("/", json=run_input("t1", "r1", "hi"))
    assert response.status_code == 200
    assert response.text.count('"type":"TEXT_MESSAGE_CONTENT"') == 1
    assert response.text.endswith('data: {"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}\n\n')


async def test_serve_uses_a_runner_as_it_is(served: dict[str, Any]) -> None:
    runner = Runner(LlmAgent("helper", model=ScriptedModel(["Hello"])))
    serve(runner, "0.0.0.0", 9000, path="/agent", identity=lambda request: request.headers.get("x-user"))
    assert (served["host"], served["port"]) == ("0.0.0.0", 9000)
    transport = httpx.ASGITransport(app=served["app"])
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.post("/agent", json=run_input("t1", "r1", "hi"), headers={"x-user": "ann"})
        assert response.status_code == 200
        assert (await client.post("/agent", json=run_input("t1", "r2", "hi"))).status_code == 401
    assert await runner.session_service.list_sessions("ann") == ["t1"]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.com"])
def test_serve_refuses_anonymous_clients_beyond_loopback(served: dict[str, Any], host: str) -> None:
    agent = LlmAgent("helper", model=ScriptedModel([]))
    with pytest.raises(ValueError, match=f"refusing to serve on {host} without an identity function"):
        serve(agent, host)
    assert served == {}
    serve(agent, host, insecure_anonymous=True)
    assert served["host"] == host


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_serve_takes_anonymous_clients_on_loopback(served: dict[str, Any], host: str) -> None:
    serve(LlmAgent("helper", model=ScriptedModel([])), host)
    assert served["host"] == host


REFUSED = (
    "the Host header {!r} names no host this server answers (it answers loopback names and the "
    "hosts it was given with allowed_hosts)"
)


def over(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


@pytest.mark.parametrize("bound", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
async def test_on_loopback_a_request_naming_another_host_is_refused(
    served: dict[str, Any], bound: str
) -> None:
    """DNS rebinding: a page on attacker.example that points its name at 127.0.0.1 still sends
    `Host: attacker.example`; it reaches neither the agent nor the store."""
    model = ScriptedModel(["Hello"] * 5)
    runner = Runner(LlmAgent("helper", model=model))
    serve(runner, bound, 8123, allowed_hosts=["agent.internal"])
    async with over(served["app"]) as client:
        for host in ("attacker.example", "attacker.example:8123", "127.0.0.1.attacker.example", "[::2]:80"):
            refused = await client.post("/", json=run_input("t1", "r1", "hi"), headers={"host": host})
            assert (refused.status_code, refused.json()) == (421, {"detail": REFUSED.format(host)})
        assert model.requests == []
        assert await runner.session_service.list_sessions("anonymous") == []
        for i, host in enumerate(
            ["127.0.0.1:8123", "localhost:8123", "[::1]:8123", "LocalHost", "agent.internal"]
        ):
            answered = await client.post("/", json=run_input(f"t{i}", "r1", "hi"), headers={"host": host})
            assert answered.status_code == 200, host


async def test_beyond_loopback_any_host_is_answered_unless_allowed_hosts_are_given(
    served: dict[str, Any],
) -> None:
    """There the identity function guards the server (a rebinding page carries no credentials)."""
    runner = Runner(LlmAgent("helper", model=ScriptedModel(["Hello"] * 2)))

    def ann(request: Request) -> str | None:
        return request.headers.get("x-user")

    def post(client: httpx.AsyncClient, thread: str, host: str) -> Awaitable[httpx.Response]:
        return client.post("/", json=run_input(thread, "r1", "hi"), headers={"x-user": "ann", "host": host})

    serve(runner, "0.0.0.0", identity=ann)
    async with over(served["app"]) as client:
        assert (await post(client, "t1", "a.example")).status_code == 200
    serve(runner, "0.0.0.0", identity=ann, allowed_hosts=["a.example"])
    async with over(served["app"]) as client:
        assert (await post(client, "t2", "a.example")).status_code == 200
        refused = await post(client, "t3", "b.example")
    assert (refused.status_code, refused.json()) == (421, {"detail": REFUSED.format("b.example")})
