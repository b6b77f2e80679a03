"""Structured output: extract an invoice from an email as a typed value, then reply using it.

    SequentialAgent("inbox")
     ├── LlmAgent("extractor", output_type=Invoice, output_key="invoice")
     └── LlmAgent("replier"): its instruction is filled from state["invoice"] by a callback

The extractor's request carries Invoice's JSON schema (`response_format`; a llama.cpp server
enforces it with a grammar). Its first answer here forgets the total: that is an
`OutputValidationError`, offered to `on_model_error`, where the default policy asks the model to
correct it, naming the problem. The corrected value is stored under "invoice" for the replier,
and `output_of` gives it back typed. Run it: python examples/extractor.py, or paste an email into
adk web examples/extractor.py
"""

import dataclasses
from datetime import date

from pydantic import BaseModel

from adk import Cont, LlmAgent, ModelContext, Raise, Runner, SequentialAgent
from adk.agents import output_of
from adk.errors import OutputValidationError
from adk.testing import ScriptedModel


class Invoice(BaseModel):
    number: str
    issued: date
    total: float
    currency: str = "EUR"


class ShowCorrections:
    """Prints what was wrong with each answer that failed validation; the default policy acts."""

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
        if isinstance(error, OutputValidationError):
            print(f"answer {ctx.attempt} rejected: {'; '.join(error.problems)}")
        return Raise(error)


class FillInstruction:
    """Puts the extracted invoice into the replier's instruction."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        invoice = ctx.state["invoice"]  # JSON data: the value as a dict
        amount = f"{invoice['total']} {invoice['currency']}"
        instruction = f"Confirm receipt of invoice {invoice['number']} ({amount})."
        request = ctx.request.model_copy(update={"instruction": instruction})
        return Cont(dataclasses.replace(ctx, request=request))


def inbox() -> tuple[SequentialAgent, ScriptedModel]:
    """The workflow, and the replier's scripted model (which records what it was told)."""
    extractor = LlmAgent(
        "extractor",
        model=ScriptedModel(
            [
                '{"number": "INV-2024-17", "issued": "2024-05-02"}',
                '{"number": "INV-2024-17", "issued": "2024-05-02", "total": 1250.0}',
            ],
            name="extractor_model",
        ),
        instruction="Extract the invoice from the email.",
        output_type=Invoice,
        output_key="invoice",
        callbacks=[ShowCorrections()],
    )
    replier_model = ScriptedModel(["Thank you: we received invoice INV-2024-17 for 1250.0 EUR."])
    replier = LlmAgent("replier", model=replier_model, callbacks=[FillInstruction()])
    return SequentialAgent("inbox", sub_agents=[extractor, replier]), replier_model


agent = inbox()[0]  # what `adk run` and `adk web` open: paste an email


def main() -> Invoice:
    workflow, replier_model = inbox()
    email = "Hello, please find attached invoice INV-2024-17 of May 2, 2024, for 1,250.00 EUR."
    events = Runner(workflow).run_sync("accounts", "mail-1", email)
    invoice = output_of(events, Invoice, author="extractor")
    print(f"extracted: {invoice!r}")
    print(f"replier was told: {replier_model.requests[0].instruction}")
    print(f"replier: {events[-2].content}")
    return invoice


if __name__ == "__main__":
    main()
