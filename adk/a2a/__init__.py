"""A2A (Agent2Agent): serve an adk agent to other agents, and use agents elsewhere as sub-agents or
tools. An optional extra (`adk-callbacks[a2a]`): the official a2a-sdk, imported only when an app is made or
a remote agent is asked, so importing this package (and `adk`) stays cheap without it.

- `create_app(runner, url=...)` / `serve(agent_or_runner)`: the agent card and A2A JSON-RPC
  (`message/send`, `message/stream`, tasks), a task per adk invocation, a context per session of
  the caller's user, `input-required` for approvals (docs/a2a.md); `adk a2a serve agent.py`.
- `RemoteA2aAgent(url, name=...)`: a sub-agent that asks the agent at `url`; `.as_tool()` or
  `A2aTool(url, name=...)`: the same as a tool, through the tool hooks and recovery.

Where each part lives: `server` (card, app, serve), `executor` (the SDK's `AgentExecutor` over a
`Runner`), `answers` (a client's approval answers), `remote` (the client side).
"""

from adk.a2a.remote import A2aTool, RemoteA2aAgent, RemoteReply, ask_remote
from adk.a2a.server import CARD_PATH, agent_card, create_app, serve

__all__ = [
    "CARD_PATH",
    "A2aTool",
    "RemoteA2aAgent",
    "RemoteReply",
    "agent_card",
    "ask_remote",
    "create_app",
    "serve",
]
