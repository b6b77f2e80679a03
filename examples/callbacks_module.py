"""Callbacks written as a module: the module's functions named after hooks are its hooks.

Register the module like any callback (`callbacks=[callbacks_module]`); mypy checks its
functions against the hook protocols as it checks a class's methods.
Run it: python examples/callbacks_module.py, or adk run examples/callbacks_module.py -m "Hi"
"""

import dataclasses
import sys
from typing import Any

from adk import Cont, LlmAgent, LlmRequest, ModelContext, Runner, ToolContext
from adk.callbacks import Callbacks
from adk.testing import ScriptedModel

HOUSE_STYLE = "Answer in one sentence."


def before_model(ctx: ModelContext) -> Cont[ModelContext]:
    """Append the house style to every instruction."""
    request = ctx.request.model_copy(update={"instruction": f"{ctx.request.instruction} {HOUSE_STYLE}"})
    return Cont(dataclasses.replace(ctx, request=request))


def after_tool(result: Any, ctx: ToolContext) -> Any:
    """Round the numbers tools return, so the model quotes them sensibly."""
    return round(result, 2) if isinstance(result, float) else result


def assistant(model: ScriptedModel) -> LlmAgent:
    this_module = sys.modules[__name__]  # this very file, used as a callback
    return LlmAgent(
        "assistant", model=model, instruction="You sell widgets.", callbacks=Callbacks.of([this_module])
    )


agent = assistant(ScriptedModel(["Widgets are great."]))  # what `adk run` and `adk web` open


def main() -> list[LlmRequest]:
    model = ScriptedModel(["Widgets are great."])
    print(Runner(assistant(model)).run_sync("user", "session", "Tell me about widgets.")[-2].content)
    print(f"the model was told: {model.requests[0].instruction!r}")
    return model.requests


if __name__ == "__main__":
    main()
