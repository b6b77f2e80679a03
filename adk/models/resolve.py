"""`resolve_model`: a model from a provider-prefixed string such as `openai:gpt-4o-mini`, as
pydantic-ai and google-adk users write it; a `Model` object is taken as it is.

`openai:<name>` is an `OpenAIModel` on `OPENAI_BASE_URL` (or OpenAI's own) with `OPENAI_API_KEY`;
any OpenAI-compatible server (vLLM, llama.cpp, Ollama, LiteLLM) is reached that way. Any other
prefix is refused with one line naming the string and where it was given.
"""

from __future__ import annotations

from adk.errors import AdkError, ModelSpecError
from adk.models.base import Model

__all__ = ["PROVIDERS", "ModelSpecError", "resolve_model"]

PROVIDERS = ("openai",)
"""The prefixes `resolve_model` knows."""


def resolve_model(spec: str | Model, where: str) -> Model:
    """The model `spec` names: `openai:<name>`, or a `Model` object, returned as it is.

    `where` names where the string was given (`--model`, `LlmAgent 'a' model=`), for the error.
    """
    if not isinstance(spec, str):
        return spec
    provider, colon, name = spec.partition(":")
    if not colon or not name.strip():
        raise ModelSpecError(
            f"{where} {spec!r}: expected a provider and a model name, e.g. openai:gpt-4o-mini"
        )
    if provider != "openai":
        known = ", ".join(f"{p}:<name>" for p in PROVIDERS)
        raise ModelSpecError(f"{where} {spec!r}: unknown provider {provider!r} (adk knows {known})")
    from adk.models.openai import OpenAIModel

    try:
        return OpenAIModel(name)
    except AdkError as e:
        raise ModelSpecError(f"{where} {spec!r}: {e}") from e
