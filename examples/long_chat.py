"""A long chat that never outgrows its model's context: `Compact` folds the older turns.

The agent's model takes 200 tokens (`max_context_tokens=200`); before a request would pass 150,
`Compact` asks a second model for a summary of all but the last whole turn, stores it in the
session (a `compaction` event) and sends the summary and the turns after it. Offline: both models
are scripted. Run it: python examples/long_chat.py
"""

from adk import LlmAgent, Runner
from adk.callbacks.decisions import Compacted
from adk.compaction import Compact
from adk.events import Event, ObjectType
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel

QUESTIONS = [f"Question {n}: tell me about topic {n}. " + "Some detail. " * 12 for n in range(1, 6)]


def make_agent() -> tuple[LlmAgent, ScriptedModel]:
    """The agent, and its chat model (scripted: five answers; its summaries, three)."""
    chat = ScriptedModel([f"Answer {n}." for n in range(1, 6)], name="chat")
    summaries = ["Topic 1 was covered.", "Topics 1 and 2 were covered.", "Topics 1 to 3 were covered."]
    summarizer = ScriptedModel(summaries, name="summary")
    made = LlmAgent(
        "assistant",
        model=chat,
        callbacks=[Compact(keep_last=1, summarize=summarizer, threshold_tokens=150)],
        max_context_tokens=200,
    )
    return made, chat


agent, _ = make_agent()  # for `adk run examples/long_chat.py` and `adk web`


def main() -> list[str]:
    """The chat's answers, and a line for each compaction stored on the way."""
    chatter, chat = make_agent()
    runner = Runner(chatter, session_service=InMemorySessionService())
    lines = []
    for question in QUESTIONS:
        for event in runner.run_sync("user", "chat", question):
            lines += _told(event)
    for line in lines:
        print(line)
    print("the model last received:", [m.content[:24] for m in chat.requests[-1].messages])
    return lines


def _told(event: Event) -> list[str]:
    if event.object == ObjectType.COMPACTION:
        folded = sum(d.folded for d in event.decisions if isinstance(d, Compacted))
        return [f"(compacted: {event.content.splitlines()[-1]!r}, {folded} messages folded)"]
    if event.author == "assistant" and event.content:
        return [event.content]
    return []


if __name__ == "__main__":
    main()
