"""Redaction: `after_model` removes personal data from every model response.

What the user sees and what the session stores is the redacted response. (Streamed chunks go out
before `after_model` runs: redact a streamed run's final text, or don't stream it.)
Run it: python examples/redaction.py, or adk run examples/redaction.py -m "How do I reach Ada?"
"""

import re

from adk import LlmAgent, LlmResponse, ModelContext, Runner
from adk.testing import ScriptedModel

PATTERNS = {
    "email": re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+"),
    "phone": re.compile(r"\+?\d[\d ()-]{7,}\d"),
}


def redact(text: str) -> str:
    for kind, pattern in PATTERNS.items():
        text = pattern.sub(f"[{kind}]", text)
    return text


class Redact:
    """Replaces e-mail addresses and phone numbers in the model's text."""

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        if not response.content:
            return response
        redacted = response.model_copy(deep=True)
        for choice in redacted.choices:
            if choice.message is not None:  # messages are frozen: put a changed copy in its place
                choice.message = choice.message.model_copy(update={"content": redact(choice.message.content)})
        return redacted


def assistant() -> LlmAgent:
    model = ScriptedModel(["Call Ada on +44 20 7946 0958 or write to ada@example.com."])
    return LlmAgent("assistant", model=model, callbacks=[Redact()])


agent = assistant()  # what `adk run` and `adk web` open


def main() -> str:
    runner = Runner(assistant())
    answer = runner.run_sync("user", "session", "How do I reach Ada?")[-2].content
    print(f"assistant: {answer}")
    return answer


if __name__ == "__main__":
    main()
