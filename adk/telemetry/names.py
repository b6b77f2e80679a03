"""The names adk's telemetry emits: the GenAI semantic conventions', taken from the conventions
package (`opentelemetry-semantic-conventions`), and adk's own, all prefixed `adk.`.

One table, so that a test can check every name against the package and the docs can list them.
"""

from __future__ import annotations

from typing import Final

try:
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
    from opentelemetry.semconv._incubating.attributes.user_attributes import USER_ID
    from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
    from opentelemetry.semconv.attributes.error_attributes import ERROR_TYPE, ErrorTypeValues
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("adk.telemetry needs OpenTelemetry: pip install 'adk-callbacks[otel]'") from e

__all__ = [
    "ERROR_TYPE",
    "USER_ID",
    "gen_ai",
]

# gen_ai.operation.name values; each span's name is `<operation> <agent, model or tool name>`.
INVOKE_AGENT: Final = gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value
CHAT: Final = gen_ai.GenAiOperationNameValues.CHAT.value
EXECUTE_TOOL: Final = gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value

OPENAI: Final = gen_ai.GenAiProviderNameValues.OPENAI.value
UNKNOWN_PROVIDER: Final = ErrorTypeValues.OTHER.value
"""`_OTHER`, the conventions' value for what no well-known value names (a model that declares no provider)."""

INPUT: Final = gen_ai.GenAiTokenTypeValues.INPUT.value
OUTPUT: Final = gen_ai.GenAiTokenTypeValues.OUTPUT.value

# gen_ai.tool.type values (the conventions list them as examples; the package has no constants):
# a function the application runs, or an extension that reaches outside it (an MCP server, an agent).
FUNCTION: Final = "function"
EXTENSION: Final = "extension"

OPERATION_DURATION: Final = gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION
TOKEN_USAGE: Final = gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE
DURATION_BUCKETS: Final = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)
"""The bucket boundaries the conventions advise for `gen_ai.client.operation.duration`, in seconds."""
TOKEN_BUCKETS: Final = tuple(4**i for i in range(14))
"""The bucket boundaries the conventions advise for `gen_ai.client.token.usage`: 1, 4, 16, ... 67108864."""

CAPTURE_CONTENT: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The conventions' opt-in for message content on spans; off unless `true`."""

# adk's own attributes and span event, for what the conventions have no name for.
ADK_INVOCATION_ID: Final = "adk.invocation_id"
ADK_BRANCH: Final = "adk.branch"
ADK_ATTEMPT: Final = "adk.attempt"
ADK_HALTED: Final = "adk.halted"
ADK_HALTED_BY: Final = "adk.halted_by"
ADK_STOPPED: Final = "adk.stopped"
DECISION_EVENT: Final = "adk.decision"
