"""Budget: a hard ceiling on a run's cost that no model call crosses, checked before each call.

Each call is sent with `max_tokens` lowered to what the budget has left; a call it cannot afford
at all is not made, and the run ends with a `BudgetExceeded` decision on its last event.
Run it: python examples/budget.py
"""

from adk import LlmAgent, LlmResponse, Runner
from adk.events import Usage
from adk.limits import Budget, BudgetWarning
from adk.testing import ScriptedModel, call_tool


def billed(response: LlmResponse, prompt: int, completion: int) -> LlmResponse:
    """A scripted answer that reports its usage, as a real model does."""
    response.usage = Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )
    return response


def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def make_agent() -> tuple[LlmAgent, ScriptedModel]:
    """The agent, its budget on its callbacks, and its scripted model (which reports usage)."""
    model = ScriptedModel(
        [billed(call_tool("lookup", city="Paris"), 40, 900), billed(LlmResponse.text("Sunny."), 60, 5)]
    )
    budget = Budget(usd=0.01, prices={"scripted": (2.5, 10.0)})  # USD per 1M input / output tokens
    return LlmAgent("assistant", model=model, tools=[lookup], callbacks=[budget]), model


agent, _ = make_agent()  # for `adk run examples/budget.py` and `adk web`


def main() -> list[int | None]:
    made, model = make_agent()
    runner = Runner(made)
    events = runner.run_sync("user", "session", "Weather in Paris?")
    for event in events:
        for decision in event.decisions:
            if isinstance(decision, BudgetWarning):
                print(f"{event.object}: {decision.limit} {decision.spent:.6f} of {decision.allowed} spent")
    sent = [request.max_tokens for request in model.requests]
    print(f"max_tokens sent: {sent}; answer: {events[-2].content or events[-1].error}")
    return sent


if __name__ == "__main__":
    main()
