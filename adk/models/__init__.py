"""Models: the protocol, and `OpenAIModel` for OpenAI-compatible servers (loaded on first use)."""

from typing import TYPE_CHECKING, Any

from adk.models.base import LlmRequest, Model

if TYPE_CHECKING:
    from adk.models.openai import OpenAIModel

__all__ = ["LlmRequest", "Model", "OpenAIModel"]

if not TYPE_CHECKING:  # hidden from mypy, so that a misspelt import is still a type error

    def __getattr__(name: str) -> Any:
        # Importing the openai SDK takes hundreds of milliseconds: only users of the adapter pay for it.
        if name == "OpenAIModel":
            from adk.models.openai import OpenAIModel

            globals()[name] = OpenAIModel
            return OpenAIModel
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
