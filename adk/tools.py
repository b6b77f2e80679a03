"""Tools: `BaseTool`, and `FunctionTool` / `@tool` that make one from a typed Python function.

(Contract only in this commit; FunctionTool and @tool land next.)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from adk.events import ToolDeclaration

if TYPE_CHECKING:
    from adk.context import ToolContext

__all__ = ["BaseTool"]


class BaseTool(ABC):
    """A tool the model can call.

    `validate` turns the model's decoded JSON arguments into the arguments `run` takes, raising
    `ToolArgumentsError` that names each bad argument; `run` does the work.
    """

    name: str
    description: str = ""
    idempotent: bool = False
    """An idempotent tool may be re-run by the default retry policy after a transient failure."""
    max_retries: int = 2
    """How many times the tool may raise `ToolRetry` in one invocation before it is an error."""

    @property
    @abstractmethod
    def declaration(self) -> ToolDeclaration:
        """The tool's name, description and JSON schema, as the model sees them."""

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Check `args` against the tool's schema; raise `ToolArgumentsError` if they fail."""
        return dict(args)

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Run the tool with validated `args`."""
