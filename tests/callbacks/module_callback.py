"""A module used as a callback: its top-level functions are its hooks.

Each hook leaves a mark on what it threads, so tests see that it ran and where in the chain.
"""

from adk.callbacks import Cont, Raise


def before_model(ctx: tuple[str, ...]) -> Cont[tuple[str, ...]]:
    return Cont((*ctx, "module"))


async def after_tool(value: str, ctx: object) -> str:
    return f"module({value})"


def on_model_error(error: Exception, ctx: object) -> Raise:
    return Raise(KeyError(f"module saw {error}"))
