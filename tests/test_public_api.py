"""The public surface: `adk.__all__` and `adk.types.__all__` are complete and sorted, `adk` stays
small, and its optional parts load lazily."""

import subprocess
import sys
import types

import pytest

import adk
import adk.sessions
import adk.types


@pytest.mark.parametrize("module", [adk, adk.types])
def test_all_is_sorted(module: types.ModuleType) -> None:
    assert module.__all__ == sorted(module.__all__)


@pytest.mark.parametrize("module", [adk, adk.types])
def test_all_is_complete(module: types.ModuleType) -> None:
    # dir(), not vars(): it also lists the names that load on first use.
    public = {name for name in dir(module) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(module, name)).__name__ == "module"}
    assert set(module.__all__) == public - modules


@pytest.mark.parametrize("module", [adk, adk.types])
def test_every_name_in_all_exists(module: types.ModuleType) -> None:
    for name in module.__all__:
        assert hasattr(module, name), name


def test_adk_holds_at_most_50_names() -> None:
    assert len(adk.__all__) <= 50


def test_typing_names_are_in_adk_types_not_in_adk() -> None:
    assert set(adk.__all__).isdisjoint(adk.types.__all__)
    assert not {"Approved", "Decision", "Halted", "Retried"} & set(adk.__all__)


def test_ready_made_recovery_callbacks_are_importable_from_adk() -> None:
    from adk import recovery

    for name in ("RetryPolicy", "FallbackModels", "RetryThenFallback", "FixedFallback", "CircuitBreaker"):
        assert getattr(adk, name) is getattr(recovery, name), name


def test_lazy_names_are_their_modules_objects() -> None:
    from adk.models.openai import OpenAIModel
    from adk.sessions.sqlite import SqliteSessionService

    assert adk.OpenAIModel is OpenAIModel
    assert adk.SqliteSessionService is SqliteSessionService
    assert adk.sessions.SqliteSessionService is SqliteSessionService


@pytest.mark.parametrize("module", [adk, adk.sessions])
def test_an_unknown_name_is_an_attribute_error_naming_it(module: types.ModuleType) -> None:
    message = f"module '{module.__name__}' has no attribute 'SqliteSessionServise'"
    with pytest.raises(AttributeError, match=message):
        _ = module.SqliteSessionServise


def test_import_adk_leaves_optional_parts_unloaded() -> None:
    # A fresh interpreter: this one has loaded everything already.
    optional = [
        "adk.agui",
        "adk.sessions.sqlite",
        "sqlite3",
        "adk.sessions.postgres",
        "asyncpg",
        "adk.models.openai",
        "openai",
    ]
    code = f"import sys, adk; print([m for m in {optional!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    code = "import sys, adk; adk.SqliteSessionService; adk.OpenAIModel; print('sqlite3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_import_adk_types_loads_no_pydantic_and_nothing_optional() -> None:
    # Annotation-only names must not cost a program that imports them more than `import adk`.
    optional = ("pydantic", "pydantic_core", "openai", "httpx", "adk.agui", "sqlite3", "asyncpg")
    code = f"import sys, adk.types; print(sorted(m for m in {optional!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_adk_loads_no_pydantic_until_something_is_validated() -> None:
    # Pydantic is most of a bare import's cost: it loads where a tool is made or a value checked.
    code = (
        "import sys, adk\n"
        "late = ('pydantic', 'pydantic_core', 'openai', 'httpx', 'hashlib')\n"
        "print(sorted(m for m in late if m in sys.modules))\n"
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
