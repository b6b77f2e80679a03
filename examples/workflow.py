"""A workflow: research in parallel, then write and review in a loop until the critic approves.

    SequentialAgent("pipeline")
     ├── ParallelAgent("research"): two researchers, each on its own branch
     └── LoopAgent("drafting", max_iterations=3): writer, then critic; the critic's `approve`
         tool escalates, which ends the loop

Run it: python examples/workflow.py, or adk web examples/workflow.py
"""

from adk import LlmAgent, LlmResponse, LoopAgent, ParallelAgent, Runner, SequentialAgent, ToolContext
from adk.events import ToolCall
from adk.testing import ScriptedModel


def approve(ctx: ToolContext) -> str:
    """Approve the draft: ends the drafting loop."""
    ctx.escalate()
    return "approved"


def worker(name: str, *answers: str | LlmResponse) -> LlmAgent:
    return LlmAgent(name, model=ScriptedModel(answers, name=f"{name}_model"), tools=[approve])


def pipeline() -> SequentialAgent:
    return SequentialAgent(
        "pipeline",
        sub_agents=[
            ParallelAgent(
                "research",
                sub_agents=[
                    worker("prices", "Widgets cost 4.20 €."),
                    worker("reviews", "Buyers rate widgets 4.5/5."),
                ],
            ),
            LoopAgent(
                "drafting",
                max_iterations=3,
                sub_agents=[
                    worker("writer", "Widgets are good.", "Widgets cost 4.20 € and rate 4.5/5."),
                    worker(
                        "critic",
                        "Too vague: use the research.",
                        LlmResponse.calls(ToolCall.of("approve")),
                        "Approved.",
                    ),
                ],
            ),
        ],
    )


agent = pipeline()  # what `adk run` and `adk web` open


def main() -> list[str]:
    lines = []
    for event in Runner(pipeline()).run_sync("user", "session", "Write a blurb about widgets."):
        if event.object == "chat.completion" and event.author != "user":
            said = event.content or ", ".join(f"calls {c.function.name}" for c in event.tool_calls)
            lines.append(f"{event.author}: {said}")
            print(lines[-1])
    return lines


if __name__ == "__main__":
    main()
