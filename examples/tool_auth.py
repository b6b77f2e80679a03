"""Tool authorization: `before_tool` checks the caller's role, kept in invocation state.

`before_agent` looks the role up once per run and keeps it in invocation state (this run only,
shared by every callback and tool in it); `before_tool` refuses admin-only tools to everyone
else, and the model is told why. Run it: python examples/tool_auth.py, or
adk run examples/tool_auth.py -m "Delete carol." (as user `user`, a guest; --user alice is an admin)
"""

from typing import Any

from adk import AgentContext, Cont, Halt, LlmAgent, LlmRequest, LlmResponse, Runner, ToolContext
from adk.events import ToolCall
from adk.testing import ScriptedModel

ROLES = {"alice": "admin", "bob": "viewer"}
ADMIN_ONLY = {"delete_user"}


def delete_user(name: str) -> str:
    """Delete a user account."""
    return f"deleted {name}"


class Authorize:
    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        ctx.invocation.set_state("role", ROLES.get(ctx.invocation.session.user_id, "guest"))
        return Cont(ctx)

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:
        role = ctx.invocation.get_state("role")
        if ctx.tool.name in ADMIN_ONLY and role != "admin":
            return Halt({"error": f"{ctx.tool.name} needs the admin role; you are {role}"})
        return Cont(ctx)


def report(request: LlmRequest) -> str:
    return f"Tool said: {request.messages[-1].content}"


def admin_bot() -> LlmAgent:
    delete = LlmResponse.calls(ToolCall.of("delete_user", '{"name": "carol"}'))
    model = ScriptedModel([delete, report, delete, report])
    return LlmAgent("admin_bot", model=model, tools=[delete_user], callbacks=[Authorize()])


agent = admin_bot()  # what `adk run` and `adk web` open (`adk run --user alice` is an admin)


def main() -> list[str]:
    runner = Runner(admin_bot())
    answers = []
    for user in ["bob", "alice"]:
        answers.append(runner.run_sync(user, "session", "Please delete carol.")[-2].content)
        print(f"{user}: {answers[-1]}")
    return answers


if __name__ == "__main__":
    main()
