"""A guardrail: `before_model` halts the call when the user raises a banned topic.

The halted response stands in for the model's: the model is never asked, and the user gets the
refusal. Run it: python examples/guardrail.py, or adk run examples/guardrail.py -m "the password?"
"""

from adk import Cont, Halt, LlmAgent, LlmResponse, ModelContext, Runner
from adk.testing import ScriptedModel

BANNED = ("password", "credit card")


class Guardrail:
    """Refuses, in the model's place, when the user's last message mentions a banned topic."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:
        said = ctx.request.messages[-1].content.lower()
        for topic in BANNED:
            if topic in said:
                return Halt(LlmResponse.text(f"Sorry, I can't help with {topic}s."))
        return Cont(ctx)


def assistant(model: ScriptedModel) -> LlmAgent:
    return LlmAgent("assistant", model=model, callbacks=[Guardrail()])


agent = assistant(ScriptedModel(["Paris is the capital of France."]))  # for `adk run` and `adk web`


def main() -> None:
    model = ScriptedModel(["Paris is the capital of France."])
    runner = Runner(assistant(model))
    for question in ["What's the capital of France?", "What's the admin password?"]:
        print(f"user: {question}")
        for event in runner.run_sync("user", "session", question):
            if event.author != "user" and event.content:
                print(f"{event.author}: {event.content}")
    model.assert_done()  # asked once: the banned question never reached the model


if __name__ == "__main__":
    main()
