"""The conventions' client metrics, recorded once per model call: its duration and its tokens."""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import MeterProvider

from adk.events import Usage
from adk.telemetry.names import (
    DURATION_BUCKETS,
    INPUT,
    OPERATION_DURATION,
    OUTPUT,
    TOKEN_BUCKETS,
    TOKEN_USAGE,
    gen_ai,
)

__all__ = ["Metrics"]


class Metrics:
    """`gen_ai.client.operation.duration` (seconds) and `gen_ai.client.token.usage` histograms,
    with the bucket boundaries the conventions advise."""

    def __init__(self, meter_provider: MeterProvider | None) -> None:
        meter = metrics.get_meter("adk", meter_provider=meter_provider)
        self._duration = meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self._tokens = meter.create_histogram(
            TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        )

    def record(self, seconds: float, attributes: dict[str, Any], usage: Usage | None) -> None:
        """One model call: `attributes` are the operation's (name, provider, models, `error.type`)."""
        self._duration.record(seconds, attributes)
        if usage is not None:
            for kind, count in ((INPUT, usage.prompt_tokens), (OUTPUT, usage.completion_tokens)):
                self._tokens.record(count, attributes | {gen_ai.GEN_AI_TOKEN_TYPE: kind})
