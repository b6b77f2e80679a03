"""The public surface: `adk.__all__` is complete and sorted, and its optional parts load lazily."""

import subprocess
import sys
import types

import pytest

import adk
import adk.sessions


def test_all_is_sorted() -> None:
    assert adk.__all__ == sorted(adk.__all__)


def test_all_is_complete() -> None:
    # dir(), not vars(): it also lists the names that load on first use.
    public = {name for name in dir(adk) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(adk, name)).__name__ == "module"}
    assert set(adk.__all__) == public - modules


def test_every_name_in_all_exists() -> None:
    for name in adk.__all__:
        assert hasattr(adk, name), name


def test_lazy_names_are_their_modules_objects() -> None:
    from adk.agui import AfterTranslate, BeforeTranslate, TranslateContext
    from adk.sessions.sqlite import SqliteSessionService

    assert (adk.AfterTranslate, adk.BeforeTranslate, adk.TranslateContext) == (
        AfterTranslate,
        BeforeTranslate,
        TranslateContext,
    )
    assert adk.SqliteSessionService is SqliteSessionService
    assert adk.sessions.SqliteSessionService is SqliteSessionService


@pytest.mark.parametrize("module", [adk, adk.sessions])
def test_an_unknown_name_is_an_attribute_error_naming_it(module: types.ModuleType) -> None:
    message = f"module '{module.__name__}' has no attribute 'SqliteSessionServise'"
    with pytest.raises(AttributeError, match=message):
        _ = module.SqliteSessionServise


def test_import_adk_leaves_optional_parts_unloaded() -> None:
    # A fresh interpreter: this one has loaded everything already.
    optional = ["adk.agui", "adk.sessions.sqlite", "sqlite3", "adk.sessions.postgres", "asyncpg"]
    code = f"import sys, adk; print([m for m in {optional!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    code = "import sys, adk; adk.SqliteSessionService; adk.TranslateContext; print('sqlite3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_import_adk_loads_no_pydantic_until_something_is_validated() -> None:
    # Pydantic is most of a bare import's cost: it loads where a tool is made or a value checked.
    code = (
        "import sys, adk\n"
        "print(sorted(m for m in ('pydantic', 'pydantic_core', 'openai', 'httpx') if m in sys.modules))\n"
        "def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
        "t = adk.tool(add)\n"
        "print('pydantic' in sys.modules, t.validate({'a': '1', 'b': 2}))\n"
        "print(t.declaration.parameters['required'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "True {'a': 1, 'b': 2}", "['a', 'b']"]


def test_state_checks_values_in_a_fresh_interpreter() -> None:
    code = (
        "import adk\n"
        "state = adk.State({})\n"
        "state['n'] = [1]\n"
        "try:\n"
        "    state['bad'] = object()\n"
        "except TypeError as e:\n"
        "    print(e)\n"
        "print(dict(state))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("state['bad']: JSON cannot hold a value of type object")
    assert lines[1] == "{'n': [1]}"
