"""`resolve_model`: a provider-prefixed string is a model; anything else is one line naming it and where."""

import pytest

from adk.models.openai import OpenAIModel
from adk.models.resolve import ModelSpecError, resolve_model
from adk.testing import ScriptedModel


def test_openai_prefix_is_an_openai_model_on_the_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = resolve_model("openai:qwen2.5-7b", "--model")
    assert isinstance(model, OpenAIModel)
    assert repr(model) == "OpenAIModel('qwen2.5-7b', base_url='http://127.0.0.1:9/v1')"


def test_a_model_object_is_taken_as_it_is() -> None:
    model = ScriptedModel([])
    assert resolve_model(model, "--model") is model


@pytest.mark.parametrize(
    ("spec", "line"),
    [
        (
            "anthropic:claude",
            "--model 'anthropic:claude': unknown provider 'anthropic' (adk knows openai:<name>)",
        ),
        ("gpt-4o", "--model 'gpt-4o': expected a provider and a model name, e.g. openai:gpt-4o-mini"),
        ("openai:", "--model 'openai:': expected a provider and a model name, e.g. openai:gpt-4o-mini"),
        ("openai: ", "--model 'openai: ': expected a provider and a model name, e.g. openai:gpt-4o-mini"),
    ],
)
def test_an_unknown_prefix_or_no_name_is_refused_naming_where(spec: str, line: str) -> None:
    with pytest.raises(ModelSpecError) as refused:
        resolve_model(spec, "--model")
    assert str(refused.value) == line


def test_no_key_and_no_server_is_refused_naming_where(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelSpecError, match=r"^LlmAgent 'a' model= 'openai:gpt-4o-mini': no API key"):
        resolve_model("openai:gpt-4o-mini", "LlmAgent 'a' model=")


def test_an_agent_takes_a_provider_prefixed_model_string(monkeypatch: pytest.MonkeyPatch) -> None:
    from adk import LlmAgent

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    agent = LlmAgent("a", model="openai:gpt-4o-mini")
    assert isinstance(agent.model, OpenAIModel)
    assert repr(agent.model) == "OpenAIModel('gpt-4o-mini', base_url='http://127.0.0.1:9/v1')"


def test_an_agent_refuses_an_unknown_prefix_where_it_is_made() -> None:
    from adk import LlmAgent

    with pytest.raises(ModelSpecError) as refused:
        LlmAgent("a", model="anthropic:claude")
    assert str(refused.value) == (
        "LlmAgent 'a' model= 'anthropic:claude': unknown provider 'anthropic' (adk knows openai:<name>)"
    )
