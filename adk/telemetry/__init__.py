"""OpenTelemetry for runs, in the GenAI semantic conventions (the `otel` extra): `Tracing` makes
the spans and metrics. `import adk` never imports OpenTelemetry; `import adk.telemetry` does."""

from adk.telemetry.tracing import Tracing

__all__ = ["Tracing"]
