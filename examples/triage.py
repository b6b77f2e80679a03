"""A triage agent that hands the conversation to specialists, and a guard on one of them.

    LlmAgent("triage", sub_agents=[billing, tech_support, human_desk])

The model picks the specialist from the agents' descriptions (a ScriptedModel plays it here:
with OpenAIModel, a real one decides). The first message goes to triage, which transfers to
billing; the next goes straight to billing, which the session remembers as the agent that last
answered, and billing hands it on to its peer tech_support; the third asks for a person, and
`OpeningHours` refuses the transfer to the human desk in `before_tool`, so tech_support answers
itself. Run it: python examples/triage.py, or adk web examples/triage.py
"""

from adk import Cont, Halt, LlmAgent, Runner, ToolContext
from adk.testing import ScriptedModel, transfer_to


class OpeningHours:
    """Refuses transfers to the human desk while it is closed; the model is told why."""

    def __init__(self, open_now: bool) -> None:
        self.open_now = open_now

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
        wanted = ctx.args.get("agent_name") if ctx.tool.name == "transfer_to_agent" else None
        if wanted == "human_desk" and not self.open_now:
            return Halt("The human desk is closed until Monday 9:00: help the user yourself.")
        return Cont(ctx)


def support() -> Runner:
    """The triage agent and its specialists, in a runner whose `OpeningHours` guards every transfer."""
    billing = LlmAgent(
        "billing",
        model=ScriptedModel(
            ["I refunded the duplicate charge of 12 €.", transfer_to("tech_support")], name="billing_model"
        ),
        description="Invoices, charges and refunds.",
    )
    tech_support = LlmAgent(
        "tech_support",
        model=ScriptedModel(
            [
                "Reset your password from the login page.",
                transfer_to("human_desk"),
                "The human desk opens Monday at 9:00; until then, I can help you here.",
            ],
            name="tech_support_model",
        ),
        description="Logins, passwords and app problems.",
    )
    human_desk = LlmAgent(
        "human_desk", model=ScriptedModel([], name="human_model"), description="A person, on weekdays."
    )
    triage = LlmAgent(
        "triage",
        model=ScriptedModel([transfer_to("billing")], name="triage_model"),
        instruction="Route the user to the specialist whose description fits best.",
        sub_agents=[billing, tech_support, human_desk],
    )
    return Runner(triage, callbacks=[OpeningHours(open_now=False)])


runner = support()  # what `adk run` and `adk web` open


def main() -> list[str]:
    runner = support()
    lines = []
    for message in ["I was charged twice.", "Thanks! Also, I can't log in.", "Can I talk to a person?"]:
        lines.append(f"user: {message}")
        for event in runner.run_sync("ada", "support-chat", message):
            if event.object == "agent.transfer":
                lines.append(f"  ({event.author} -> {event.actions.transfer_to_agent})")
            elif event.object == "tool.response" and event.content.startswith("The human desk"):
                lines.append(f"  (refused: {event.content})")
            elif event.object == "chat.completion" and event.author != "user" and event.content:
                lines.append(f"{event.author}: {event.content}")
    for line in lines:
        print(line)
    return lines


if __name__ == "__main__":
    main()
