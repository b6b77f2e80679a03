"""Caching: `before_model` and `before_tool` answer from a cache instead of calling out.

`after_model` and `after_tool` fill the cache; the `before_*` hooks halt with what is there, so
the same request never reaches the model (or the tool) twice. Run it: python examples/caching.py,
or adk run examples/caching.py -m "How much is a widget?" (and adk web examples/caching.py)
"""

import json
from typing import Any

from adk import Cont, Halt, LlmAgent, LlmResponse, ModelContext, Runner, ToolContext
from adk.events import ToolCall
from adk.testing import ScriptedModel

runs: list[str] = []


def get_price(item: str) -> float:
    """The price of an item, in euros (slow and costly, in real life)."""
    runs.append(item)
    return 4.2


class Cache:
    """Remembers model responses by conversation, and tool results by tool and arguments."""

    def __init__(self) -> None:
        self.store: dict[str, Any] = {}
        self.hits = 0

    def _hit(self, key: str) -> Halt[Any] | None:
        if key not in self.store:
            return None
        self.hits += 1
        return Halt(self.store[key])

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
        return self._hit(_model_key(ctx)) or Cont(ctx)

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self.store[_model_key(ctx)] = response
        return response

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:
        return self._hit(_tool_key(ctx)) or Cont(ctx)

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        self.store[_tool_key(ctx)] = result
        return result


def _model_key(ctx: ModelContext) -> str:
    return ctx.request.model_dump_json(include={"messages"})


def _tool_key(ctx: ToolContext) -> str:
    return f"{ctx.tool.name}:{json.dumps(ctx.args, sort_keys=True)}"


def shop(cache: Cache) -> tuple[LlmAgent, ScriptedModel]:
    """The shop agent, its cache, and its scripted model (a real one would decide to call get_price)."""
    ask = LlmResponse.calls(ToolCall.of("get_price", '{"item": "widget"}', id="call_1"))
    model = ScriptedModel([ask, "A widget costs 4.20 €."])
    return LlmAgent("shop", model=model, tools=[get_price], callbacks=[cache]), model


agent = shop(Cache())[0]  # what `adk run` and `adk web` open: ask twice, the second is cached


def main() -> Cache:
    cache = Cache()
    shop_agent, model = shop(cache)
    runner = Runner(shop_agent)
    for session in ["monday", "tuesday"]:  # the same question, in two conversations
        answer = runner.run_sync("user", session, "How much is a widget?")[-2].content
        print(f"{session}: {answer} (model calls: {len(model.requests)}, tool runs: {len(runs)})")
    print(f"cache hits: {cache.hits}")
    return cache


if __name__ == "__main__":
    main()
