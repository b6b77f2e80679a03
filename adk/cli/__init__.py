"""The `adk` command line: play the demo, chat with your agent, serve it over AG-UI, MCP,
A2A or on a web page.

    adk demo [--model openai:<name>] [--wait S] [--pace S] [--log-level LEVEL] [--verbose]
    adk run path/to/agent.py [-m MESSAGE] [--session ID] [--user ID] [--sessions PATH|URL] [--verbose] ...
    adk serve path/to/agent.py [--host HOST] [--port PORT] [--sessions PATH|URL] [--identity M:F] ...
    adk web path/to/agent.py [--host HOST] [--port PORT] [--sessions PATH|URL] [--identity M:F] ...
    adk mcp serve path/to/agent.py [--port PORT [--host HOST]] [--sessions PATH|URL]
    adk a2a serve path/to/agent.py [--host HOST] [--port PORT] [--url URL] [--identity M:F] ...

A run is shown as it happens: streamed text, tool calls and their results, and what callbacks
decided (a halt, a replaced output, a retry and its wait, a fallback), all read from the run's
events by `Display`. The library itself never prints.

Where each part lives: `commands` (one function per command, and `main`), `parser` (the
argparse parser), `display` (`Display`, and `visible` for text with control characters),
`loading` (a user's agent file, a session store, a model, an identity function).
"""

from adk.cli.commands import main
from adk.cli.display import Display
from adk.cli.loading import load, load_runner
from adk.errors import CliError

__all__ = ["CliError", "Display", "load", "load_runner", "main"]
