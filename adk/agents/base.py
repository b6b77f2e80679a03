"""The base agent (placeholder until the runtime lands)."""

from __future__ import annotations

__all__ = ["BaseAgent"]


class BaseAgent:
    name: str
