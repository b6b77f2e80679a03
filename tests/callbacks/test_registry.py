"""Registration: what may be a callback, what is resolved once, and mistakes reported where made."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import types
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, get_args

import pytest

from adk.callbacks import (
    HOOKS,
    Callback,
    Callbacks,
    Cont,
    HookName,
    Raise,
    registry,
    run_after,
    run_before,
    run_on_error,
    signatures,
)
from adk.callbacks.chain import run_chain
from adk.callbacks.registry import AFTER, BEFORE, ON_ERROR, REPLACE, Hook, declare_hooks, hook_impls
from adk.errors import CallbackError, CallbackRegistrationError
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


# --- signatures: a hook that cannot take its hook's arguments is refused at registration -------


class NoContext:
    def before_model(self) -> Any:
        return None


class OneArgAfter:
    def after_model(self, response: Any) -> Any:
        return response


class NeedsAKeyword:
    def on_tool_error(self, error: Exception, ctx: Any, *, policy: str) -> Any:
        return Raise(error)


def module_with(**hooks: Any) -> types.ModuleType:
    module = types.ModuleType("hooks_here")
    for name, fn in hooks.items():
        setattr(module, name, fn)
    return module


@pytest.mark.parametrize(
    ("callback", "message"),
    [
        (NoContext, "callback NoContext: hook before_model(self) cannot be called as before_model(ctx): "
         "too many positional arguments"),
        (OneArgAfter(), "callback OneArgAfter: hook after_model(self, response) cannot be called as "
         "after_model(value, ctx): too many positional arguments"),
        (NeedsAKeyword, "callback NeedsAKeyword: hook on_tool_error(self, error, ctx, *, policy) cannot be "
         "called as on_tool_error(error, ctx): missing a required argument: 'policy'"),
        (module_with(before_tool=lambda: None), "callback hooks_here: hook before_tool() cannot be called as "
         "before_tool(ctx): too many positional arguments"),
        (module_with(after_tool=lambda a, b, c: a), "callback hooks_here: hook after_tool(a, b, c) cannot be "
         "called as after_tool(value, ctx): missing a required argument: 'c'"),
    ],
)  # fmt: skip
def test_a_hook_that_cannot_take_its_arguments_is_refused_naming_callback_and_hook(
    callback: Any, message: str
) -> None:
    with pytest.raises(CallbackRegistrationError) as caught:
        Callbacks.of([Both(), callback])
    assert str(caught.value) == message


class Flexible:
    """Signatures that can take the arguments, however they are written."""

    def before_model(self, ctx: Any, extra: Any = None) -> Any:
        return Cont(ctx)

    def after_model(self, *args: Any) -> Any:
        return args[0]

    @staticmethod
    def before_tool(ctx: Any) -> Any:
        return Cont(ctx)

    @classmethod
    def after_tool(cls, result: Any, ctx: Any, /) -> Any:
        return result

    class _Call:
        def __call__(self, error: Exception, ctx: Any) -> Any:
            return Raise(error)

    on_tool_error = _Call()


def test_hooks_that_can_take_their_arguments_are_accepted() -> None:
    callbacks = Callbacks.of([Flexible])
    assert [hook for hook in HOOKS if callbacks.get(hook)] == [
        "before_model",
        "after_model",
        "before_tool",
        "after_tool",
        "on_tool_error",
    ]


def test_the_signature_check_is_cached_per_function() -> None:
    signatures._function_cannot_take.cache_clear()
    for _ in range(3):
        Callbacks.of([Flexible(), Both()])
    info = signatures._function_cannot_take.cache_info()
    # Flexible's 4 functions and Both's 2, inspected once each (a callable object is not cached).
    assert (info.misses, info.hits) == (6, 12)


# --- hook families: declared by the module that owns them ---------------------------------------


@pytest.fixture
def render_hooks() -> Iterator[tuple[Hook, Hook]]:
    """A family of two hooks, declared for one test and forgotten after it."""
    hooks = (
        Hook("before_render", REPLACE, str, "a str or None"),
        Hook("after_render", AFTER, int, "an int"),
    )
    declare_hooks(*hooks)
    yield hooks
    for hook in hooks:
        del registry._declared[hook.name]
    registry._misspelt.cache_clear()


class Renders:
    def before_render(self, page: str, ctx: object) -> str | None:
        return page.upper() if page.startswith("draft") else None

    def after_render(self, size: int, ctx: object) -> Any:
        return size + 1 if size < 10 else "too big"


async def test_a_declared_family_is_resolved_and_run_by_the_core(render_hooks: tuple[Hook, Hook]) -> None:
    before, after = render_hooks
    callbacks = Callbacks.of([Renders, Both])
    assert [fn.__name__ for fn, _, _ in callbacks.get(before)] == ["before_render"]
    assert await run_chain(callbacks.get(before), before, "draft 1", None) == "DRAFT 1"
    assert await run_chain(callbacks.get(before), before, "final", None) == "final"
    assert await run_chain(callbacks.get(after), after, 1, None) == 2
    with pytest.raises(CallbackError) as caught:
        await run_chain(callbacks.get(after), after, 10, None)
    assert str(caught.value) == (
        "callback Renders failed in after_render: returned 'too big'; "
        "after_render must return an int, not str"
    )


async def test_run_after_calls_a_declared_one_argument_after_hook_with_one_argument() -> None:
    hook = Hook("after_count", AFTER, int, "an int", unary=True)
    declare_hooks(hook)
    try:
        counter = module_with(after_count=lambda count: count + 1)
        assert await run_after([counter, counter], "after_count", 1, "unused ctx") == 3  # type: ignore[call-overload]
    finally:
        del registry._declared[hook.name]
        registry._misspelt.cache_clear()


async def test_the_chain_helpers_find_no_hooks_of_a_family_declared_after_the_callbacks() -> None:
    early = Callbacks.of([Both()])
    hooks = (Hook("before_paint", BEFORE), Hook("after_paint", AFTER), Hook("on_paint_error", ON_ERROR))
    declare_hooks(*hooks)
    try:
        error = ValueError("smudge")
        assert await run_before(early, "before_paint", ["ctx"]) == Cont(["ctx"])  # type: ignore[call-overload]
        assert await run_after(early, "after_paint", "canvas", None) == "canvas"  # type: ignore[call-overload]
        assert await run_on_error(early, "on_paint_error", error, None) == Raise(error)  # type: ignore[call-overload]
    finally:
        for hook in hooks:
            del registry._declared[hook.name]
        registry._misspelt.cache_clear()


def test_a_declared_family_is_checked_at_registration(render_hooks: tuple[Hook, Hook]) -> None:
    misspelt = module_with(befor_render=lambda page, ctx: None)
    with pytest.raises(
        CallbackRegistrationError, match="'befor_render' that looks like the hook 'before_render'"
    ):
        Callbacks.of([misspelt])
    with pytest.raises(CallbackRegistrationError, match=r"hook after_render\(size\) cannot be called as"):
        Callbacks.of([module_with(after_render=lambda size: size)])


def test_callbacks_made_before_a_family_was_declared_have_no_hooks_of_it() -> None:
    early = Callbacks.of([Both()])
    hook = Hook("before_paint", REPLACE, str, "a str or None")
    declare_hooks(hook)
    try:
        assert early.get(hook) == ()
        assert early.get("before_model") != ()
    finally:
        del registry._declared[hook.name]
        registry._misspelt.cache_clear()


def test_declaring_a_hook_again_is_allowed_only_as_it_was(render_hooks: tuple[Hook, Hook]) -> None:
    before, _ = render_hooks
    declare_hooks(Hook("before_render", REPLACE, str, "a str or None"))  # a reloaded module
    assert registry.DECLARED["before_render"] == before
    with pytest.raises(
        ValueError, match=r"^hook 'before_render' is already declared as Hook\('before_render'"
    ):
        declare_hooks(Hook("before_render", AFTER, str, "a str"))
    with pytest.raises(ValueError, match="'after_model' is already declared"):
        declare_hooks(Hook("after_model", AFTER))  # the core's hooks cannot be redefined either


def test_the_core_declares_only_the_agent_model_and_tool_hooks() -> None:
    # A fresh interpreter: in this one adk.agui has declared its hooks already. Importing adk
    # declares the run-level hooks (adk.callbacks.run, which the runner imports).
    code = (
        "import adk.callbacks.registry as r\n"
        "print([h.name for h in r.CORE] == list(r.HOOKS))\n"
        "print([h for h in r.DECLARED if h not in r.HOOKS])\n"
        "import adk.agui\n"
        "print([h for h in r.DECLARED if h not in r.HOOKS][4:])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "True",
        "['on_user_message', 'before_run', 'on_event', 'after_run']",
        "['before_translate', 'after_translate']",
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: run_before([], "after_model", None), "run_before runs before hooks; after_model is not one"),
        (lambda: run_after([], "before_tool", 1, None), "run_after runs after hooks; before_tool is not one"),
        (lambda: run_on_error([], "after_tool", ValueError(), None), "run_on_error runs on_error hooks; "),
    ],
)
async def test_a_chain_helper_refuses_a_hook_of_another_chain(
    call: Callable[[], Awaitable[object]], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        await call()


# --- plain lists given to the chain helpers: resolved on every call, per class from a plan --------


class Named:
    def __init__(self, name: str) -> None:
        self.name = name

    def before_tool(self, ctx: list[str]) -> Cont[list[str]]:
        return Cont([*ctx, self.name])


async def test_instances_of_one_class_in_plain_lists_keep_their_own_state() -> None:
    for _ in range(2):  # the second time, the class is known
        assert await run_before([Named("a"), Named("b")], "before_tool", []) == Cont(["a", "b"])
        assert await run_before([Named("c")], "before_tool", ["x"]) == Cont(["x", "c"])


async def test_an_instance_with_a_hook_of_its_own_is_resolved_in_full() -> None:
    await run_before([Named("a")], "before_tool", [])
    own = Named("own")
    own.before_tool = lambda ctx: Cont([*ctx, "instance attribute"])  # type: ignore[method-assign]
    assert await run_before([Named("a"), own], "before_tool", []) == Cont(["a", "instance attribute"])


async def test_a_misspelt_attribute_of_an_instance_is_caught_although_its_class_is_known() -> None:
    await run_before([Named("a")], "before_tool", [])
    odd = Named("odd")
    odd.before_tol = None  # type: ignore[attr-defined]
    with pytest.raises(
        CallbackRegistrationError, match="'before_tol' that looks like the hook 'before_tool'"
    ):
        await run_before([odd], "before_tool", [])


async def test_a_class_in_a_plain_list_is_instantiated_on_every_call() -> None:
    made: list[int] = []

    class Counted:
        def __init__(self) -> None:
            made.append(len(made))

        def before_tool(self, ctx: int) -> Cont[int]:
            return Cont(ctx + 1)

    assert [await run_before([Counted, Counted()], "before_tool", 0) for _ in range(2)] == [Cont(2)] * 2
    assert made == [0, 1, 2, 3]


async def test_a_plain_list_of_instances_is_resolved_as_callbacks_of_resolves_it_in_that_order() -> None:
    a, b = Named("a"), Named("b")
    first = hook_impls([a, b], "before_tool")
    assert first == Callbacks.of([a, b]).get("before_tool")
    assert hook_impls((a, b), "before_tool") == first  # the same objects: the same hooks
    assert [owner for _, _, owner in hook_impls([b, a], "before_tool")] == [b, a]
    assert await run_before([b, a], "before_tool", []) == Cont(["b", "a"])


async def test_a_hook_set_on_an_instance_after_its_first_use_in_a_plain_list_is_seen() -> None:
    # A plain list is resolved on every call: what an instance holds now is what runs, in a list
    # of one (once looked up by the object's id) as in a longer one.
    named, other = Named("a"), Named("b")
    for _ in range(2):
        assert await run_before([named], "before_tool", []) == Cont(["a"])
        assert await run_before([other, named], "before_tool", []) == Cont(["b", "a"])
    named.before_tool = lambda ctx: Cont([*ctx, "own"])  # type: ignore[method-assign]
    assert await run_before([named], "before_tool", []) == Cont(["own"])
    assert await run_before([other, named], "before_tool", []) == Cont(["b", "own"])
    named.before_tool = None  # type: ignore[assignment,method-assign]  # a hook set to None: none
    with pytest.raises(CallbackRegistrationError, match=r"^callback Named implements no hook;"):
        await run_before([named], "before_tool", [])
    del named.before_tool  # the class's hook again
    assert await run_before([named], "before_tool", []) == Cont(["a"])
    assert await run_after([named], "after_tool", "r", None) == "r"
    named.after_tool = lambda result, ctx: f"{result} after a"  # type: ignore[attr-defined]
    assert await run_after([named], "after_tool", "r", None) == "r after a"  # a hook its class lacks
    named.after_tol = None  # type: ignore[attr-defined]
    with pytest.raises(CallbackRegistrationError, match="'after_tol' that looks like the hook 'after_tool'"):
        await run_before([named], "before_tool", [])


async def test_a_plain_list_keeps_none_of_its_callbacks_alive() -> None:
    # Nothing is kept per object: once the caller lets go of a callback, it is freed.
    named = Named("a")
    assert await run_before([named], "before_tool", []) == Cont(["a"])
    gone = weakref.ref(named)
    del named
    gc.collect()
    assert gone() is None


async def test_a_list_of_one_callback_finds_each_hook_it_is_asked_for() -> None:
    # Each hook asked of the same object is its own, a hook it lacks is an empty chain, and a
    # module is resolved each time.
    class Both(Named):
        def after_tool(self, result: str, ctx: object) -> str:
            return f"{result} after {self.name}"

    both = Both("b")
    for _ in range(2):
        assert await run_before([both], "before_tool", []) == Cont(["b"])
        assert await run_after([both], "after_tool", "r", None) == "r after b"
        assert await run_before([both], "before_model", ["ctx"]) == Cont(["ctx"])
        assert await run_after([both], "after_model", "r", None) == "r"
    for _ in range(2):
        assert await run_before([module_callback], "before_model", ("x",)) == Cont(("x", "module"))
        assert await run_after([module_callback], "after_tool", "r", None) == "module(r)"


async def test_objects_of_lists_forgotten_are_never_mistaken_for_new_ones_at_their_address() -> None:
    # Many lists of one, their objects freed and their addresses reused: each is resolved as it is.
    class Other:
        def before_tool(self, ctx: list[str]) -> Cont[list[str]]:
            return Cont([*ctx, "other"])

    for i in range(768):
        obj: object = Named(str(i)) if i % 2 else Other()
        expected = [str(i)] if i % 2 else ["other"]
        assert await run_before([obj], "before_tool", []) == Cont(expected)
