"""Registration: what may be a callback, what is resolved once, and mistakes reported where made."""

from __future__ import annotations

import types
from typing import Any, get_args

import pytest

from adk.callbacks import HOOKS, Callback, Callbacks, Cont, HookName, Raise
from adk.errors import CallbackRegistrationError
from tests.callbacks import module_callback
from tests.callbacks.scripted import Scripted, Trace


def hooks_of(callbacks: Callbacks) -> dict[str, list[str]]:
    """Which hooks are registered, and for whom: {hook: [function names]}."""
    return {
        hook: [fn.__qualname__.split(".")[-1] + "@" + type(owner).__name__ for fn, _, owner in impls]
        for hook in HOOKS
        if (impls := callbacks.get(hook))
    }


class Both:
    def before_model(self, ctx: object) -> Cont[object]:
        return Cont(ctx)

    async def after_tool(self, result: object, ctx: object) -> object:
        return result


def test_hook_names() -> None:
    assert get_args(HookName) == HOOKS
    assert HOOKS[:8] == (
        "before_agent",
        "after_agent",
        "before_model",
        "after_model",
        "on_model_error",
        "before_tool",
        "after_tool",
        "on_tool_error",
    )


def test_an_instance_registers_each_hook_it_has_with_whether_it_is_async() -> None:
    both = Both()
    callbacks = Callbacks.of([both])
    assert callbacks.objects == (both,)
    ((fn, is_async, owner),) = callbacks.get("before_model")
    assert (fn, is_async, owner) == (both.before_model, False, both)
    ((fn, is_async, owner),) = callbacks.get("after_tool")
    assert (fn, is_async, owner) == (both.after_tool, True, both)
    assert [hook for hook in HOOKS if callbacks.get(hook)] == ["before_model", "after_tool"]


def test_a_class_is_instantiated_once_at_registration() -> None:
    built: list[object] = []

    class Counted(Both):
        def __init__(self) -> None:
            built.append(self)

    callbacks = Callbacks.of([Counted])
    assert len(built) == 1
    assert callbacks.objects == (built[0],)
    assert callbacks.get("before_model")[0][2] is built[0]


def test_a_module_registers_its_functions() -> None:
    callbacks = Callbacks.of([module_callback])
    assert callbacks.objects == (module_callback,)
    assert [(fn, is_async) for fn, is_async, _ in callbacks.get("before_model")] == [
        (module_callback.before_model, False)
    ]
    assert [(fn, is_async) for fn, is_async, _ in callbacks.get("after_tool")] == [
        (module_callback.after_tool, True)
    ]
    assert repr(callbacks) == "Callbacks(tests.callbacks.module_callback)"


def test_an_async_callable_object_is_async() -> None:
    class AsyncCall:
        async def __call__(self, ctx: object) -> Cont[object]:
            return Cont(ctx)

    class Holder:
        before_model = AsyncCall()

    ((_, is_async, _),) = Callbacks.of([Holder()]).get("before_model")
    assert is_async


def test_a_hook_set_to_none_is_not_registered() -> None:
    class Disabled(Both):
        before_model = None  # type: ignore[assignment]

    assert [hook for hook in HOOKS if Callbacks.of([Disabled]).get(hook)] == ["after_tool"]


def test_private_attributes_are_not_checked_for_misspellings() -> None:
    class Private(Both):
        _before_mdoel = 1

    assert Callbacks.of([Private])


# --- registration errors: each names the object and what is wrong with it ---------------------


class Nothing:
    def helper(self) -> None: ...


class MisspeltModel:
    def before_mdoel(self, ctx: object) -> Cont[object]:
        return Cont(ctx)


class MisspeltTool(Both):
    def on_tool_eror(self, error: Exception, ctx: object) -> Raise:
        return Raise(error)


class NeedsArgs:
    def __init__(self, api_key: str) -> None:
        self.api_key = api_key

    def before_model(self, ctx: object) -> Cont[object]:
        return Cont(ctx)


class NotCallable:
    before_model = "yes"


@pytest.mark.parametrize(
    ("callback", "message"),
    [
        (Nothing(), "callback Nothing implements no hook; expected at least one of before_agent, "
         "after_agent, before_model, after_model, on_model_error, before_tool, after_tool, on_tool_error"),
        (Nothing, "callback Nothing implements no hook; expected at least one of before_agent, "),
        (MisspeltModel(), "callback MisspeltModel has an attribute 'before_mdoel' that looks like the hook "
         "'before_model'; rename it (or make it private with a leading underscore)"),
        (MisspeltTool, "callback MisspeltTool has an attribute 'on_tool_eror' that looks like the hook "
         "'on_tool_error'; "),
        (NeedsArgs, "callback class NeedsArgs could not be instantiated without arguments: "
         "NeedsArgs.__init__() missing 1 required positional argument: 'api_key'"),
        (NotCallable(), "callback NotCallable: before_model is not callable"),
        (types.ModuleType("empty_module"), "callback empty_module implements no hook; "),
        (42, "callback int implements no hook; "),
    ],
)  # fmt: skip
def test_a_mistake_is_reported_at_registration_naming_object_and_attribute(
    callback: Any, message: str
) -> None:
    with pytest.raises(CallbackRegistrationError) as caught:
        Callbacks.of([Both(), callback])
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, TypeError)


def test_a_misspelt_hook_in_a_module_is_reported() -> None:
    module = types.ModuleType("my_hooks")
    module.before_tool = lambda ctx: Cont(ctx)  # type: ignore[attr-defined]
    module.after_tol = lambda result, ctx: result  # type: ignore[attr-defined]
    with pytest.raises(
        CallbackRegistrationError, match=r"^callback my_hooks has an attribute 'after_tol' that looks"
    ):
        Callbacks.of([module])


def test_a_class_that_cannot_be_built_keeps_the_cause() -> None:
    with pytest.raises(CallbackRegistrationError) as caught:
        Callbacks.of([NeedsArgs])
    assert isinstance(caught.value.__cause__, TypeError)


# --- the Callback base class ------------------------------------------------------------------


class OnlyModel(Callback):
    def before_model(self, ctx: Any, /) -> Any:
        return Cont(ctx)

    async def after_model(self, response: Any, ctx: Any, /) -> Any:
        return response


def test_a_callback_subclass_registers_only_the_hooks_it_overrides() -> None:
    callbacks = Callbacks.of([OnlyModel])
    assert hooks_of(callbacks) == {
        "before_model": ["before_model@OnlyModel"],
        "after_model": ["after_model@OnlyModel"],
    }
    assert callbacks.get("after_model")[0][1] is True


def test_overrides_are_found_through_intermediate_classes() -> None:
    class Child(OnlyModel):
        def on_tool_error(self, error: Exception, ctx: Any, /) -> Any:
            return Raise(error)

    assert list(hooks_of(Callbacks.of([Child]))) == ["before_model", "after_model", "on_tool_error"]


def test_a_callback_subclass_that_overrides_nothing_is_an_error() -> None:
    class Empty(Callback):
        pass

    with pytest.raises(
        CallbackRegistrationError, match=r"^callback .*Empty implements no hook \(a Callback "
    ):
        Callbacks.of([Empty])


async def test_the_base_class_hooks_do_nothing() -> None:
    base = Callback()
    ctx: Any = object()
    error = ValueError()
    assert base.before_agent(ctx) == Cont(ctx)
    assert base.before_model(ctx) == Cont(ctx)
    assert base.before_tool(ctx) == Cont(ctx)
    response: Any = object()
    result = object()
    assert base.after_agent(None, ctx) is None
    assert base.after_model(response, ctx) is response
    assert base.after_tool(result, ctx) is result
    assert base.on_model_error(error, ctx) == Raise(error)
    assert base.on_tool_error(error, ctx) == Raise(error)


# --- Callbacks: + and without -----------------------------------------------------------------


def test_plus_runs_every_hook_of_the_left_before_those_of_the_right() -> None:
    trace: Trace = []
    a = Scripted("a", trace, before_model=Cont, after_tool=lambda r, c: r)
    b = Scripted("b", trace, before_model=Cont)
    c = Scripted("c", trace, after_tool=lambda r, c: r)
    left, right = Callbacks.of([a, b]), Callbacks.of([c, a])
    both = left + right
    assert both.objects == (a, b, c, a)
    assert [owner for _, _, owner in both.get("before_model")] == [a, b, a]
    assert [owner for _, _, owner in both.get("after_tool")] == [a, c, a]
    assert len(both) == 4
    # The operands are unchanged.
    assert [owner for _, _, owner in left.get("before_model")] == [a, b]


def test_plus_with_an_empty_side_is_the_other_side() -> None:
    some, empty = Callbacks.of([Both()]), Callbacks.of([])
    assert some + empty is some
    assert empty + some is some


def test_without_removes_callbacks_and_their_hooks() -> None:
    calls: list[object] = []

    class Default(Both):
        pass

    keep, default = Both(), Default()
    callbacks = Callbacks.of([keep, default, OnlyModel])

    def is_default(obj: object) -> bool:
        calls.append(obj)
        return isinstance(obj, Default)

    trimmed = callbacks.without(is_default)
    assert trimmed.objects == (keep, callbacks.objects[2])
    assert [owner for _, _, owner in trimmed.get("before_model")] == [keep, callbacks.objects[2]]
    assert [owner for _, _, owner in trimmed.get("after_tool")] == [keep]
    assert calls == list(callbacks.objects)  # once per object, not per hook
    assert [owner for _, _, owner in callbacks.get("after_tool")] == [keep, default]  # unchanged


def test_without_everything_is_empty() -> None:
    trimmed = Callbacks.of([Both(), OnlyModel]).without(lambda obj: True)
    assert not trimmed
    assert len(trimmed) == 0
    assert all(trimmed.get(hook) == () for hook in HOOKS)


def test_of_returns_a_callbacks_as_it_is_and_accepts_none() -> None:
    callbacks = Callbacks.of([Both()])
    assert Callbacks.of(callbacks) is callbacks
    assert not Callbacks.of(None)
    assert not Callbacks.of()


def test_get_an_unknown_hook_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^unknown hook 'before_mdoel'; did you mean 'before_model'\?$"):
        Callbacks.of([]).get("before_mdoel")  # type: ignore[arg-type]


def test_repr_names_the_callbacks() -> None:
    assert repr(Callbacks.of([Both, module_callback])) == "Callbacks(Both, tests.callbacks.module_callback)"
