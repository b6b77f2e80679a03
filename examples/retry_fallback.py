"""A retry-then-fallback policy: retry the primary model, then fall back to a backup.

`RetryThenFallback` retries transient errors on each model as its own policy says (here: two
attempts, 0.1 s apart), then moves on to the next model. The agent's `RetryPolicy` still bounds
every envelope. Run it: python examples/retry_fallback.py, or adk run examples/retry_fallback.py -m Hi
"""

import tenacity

from adk import LlmAgent, ModelContext, Raise, RetryPolicy, Runner
from adk.errors import RateLimitError
from adk.recovery import RetryThenFallback
from adk.testing import ScriptedModel


class ShowFailures:
    """Prints each failed attempt; placed first, it sees every failure before the policy decides."""

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        print(f"attempt {ctx.attempt} on {ctx.model.name} failed: {error}")
        return Raise(error)


def assistant() -> LlmAgent:
    """The agent: its primary model is overloaded twice, its backup answers."""
    overloaded = RateLimitError("429 Too Many Requests", status_code=429)
    primary = ScriptedModel([overloaded, overloaded], name="primary")
    backup = ScriptedModel(["Hello from the backup model."], name="backup")
    return LlmAgent(
        "assistant",
        model=primary,
        callbacks=[
            ShowFailures(),
            RetryThenFallback(
                [backup], RetryPolicy(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_fixed(0.1))
            ),
        ],
        retry_policy=RetryPolicy(stop=tenacity.stop_after_attempt(5)),
    )


agent = assistant()  # what `adk run` and `adk web` open


def main() -> str:
    final = Runner(assistant()).run_sync("user", "session", "Hi!")[-2]
    print(f"{final.author} (via {final.model}): {final.content}")
    return final.content


if __name__ == "__main__":
    main()
