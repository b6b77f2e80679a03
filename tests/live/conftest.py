"""Live tests run against a real OpenAI-compatible server: `pytest -m live tests/live`.

`ADK_LIVE_BASE_URL` (default http://127.0.0.1:8765/v1) names the server and `ADK_LIVE_MODEL` the
model (default: the first the server lists); `ADK_LIVE_SMALL_BASE_URL` (default
http://127.0.0.1:8766/v1) a server of the same model with a 512-token context, for the compaction
tests. An unreachable server skips the tests, unless `ADK_LIVE_REQUIRED=1` (as in CI), where it
fails them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import httpx
import pytest

from adk.models.openai import OpenAIModel

BASE_URL = os.environ.get("ADK_LIVE_BASE_URL", "http://127.0.0.1:8765/v1").rstrip("/")
SMALL_BASE_URL = os.environ.get("ADK_LIVE_SMALL_BASE_URL", "http://127.0.0.1:8766/v1").rstrip("/")
"""A second server of the same model, started with a 512-token context (`--n_ctx 512`) by .ci/live."""


def served_model(base_url: str, variable: str) -> str:
    """The model to ask for at `base_url`; reaching it decides whether the tests that use it run."""
    try:
        listing = httpx.get(f"{base_url}/models", timeout=5)
        listing.raise_for_status()
    except httpx.HTTPError as e:
        if os.environ.get("ADK_LIVE_REQUIRED") == "1":
            pytest.fail(f"ADK_LIVE_REQUIRED=1 but the server at {base_url} is unreachable: {e!r}")
        pytest.skip(f"no live server at {base_url} ({e!r}); set {variable}")
    return os.environ.get("ADK_LIVE_MODEL") or str(listing.json()["data"][0]["id"])


@pytest.fixture(scope="session")
def live_model_name() -> str:
    """The model to ask for; reaching the server here decides whether the live tests run at all."""
    return served_model(BASE_URL, "ADK_LIVE_BASE_URL")


@pytest.fixture(scope="session")
def small_model_name() -> str:
    """The model on the 512-token server (`ADK_LIVE_SMALL_BASE_URL`)."""
    return served_model(SMALL_BASE_URL, "ADK_LIVE_SMALL_BASE_URL")


@pytest.fixture
async def live_model(live_model_name: str) -> AsyncIterator[OpenAIModel]:
    """A model with its own connections: a stream the server breaks cannot spoil the next test."""
    model = OpenAIModel(live_model_name, base_url=BASE_URL, timeout=120, temperature=0, max_tokens=8)
    yield model
    await model.aclose()


@pytest.fixture
async def small_model(small_model_name: str) -> AsyncIterator[OpenAIModel]:
    """Like `live_model`, on the server with a 512-token context."""
    model = OpenAIModel(small_model_name, base_url=SMALL_BASE_URL, timeout=120, temperature=0, max_tokens=8)
    yield model
    await model.aclose()
