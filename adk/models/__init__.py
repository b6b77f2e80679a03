"""Models: the protocol and the scripted test model (see adk.testing)."""

from adk.models.base import LlmRequest, Model

__all__ = ["LlmRequest", "Model"]
