"""Rules the package's own source keeps, checked on its syntax tree.

- No `assert` statement: `python -O` removes them, so none may guard a user-facing path.
- A `match` over a hook's result (class patterns of `Cont`, `Halt`, `Retry`, `Fallback`, `Raise`)
  ends in a case that calls `assert_never`, so mypy proves it exhaustive.
- Every public exception class lives in adk.errors; the docs cite docs/ pages, not a design
  document that is not in the repository.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import adk
import adk.errors

ROOT = Path(__file__).parent.parent
SOURCES = sorted((ROOT / "adk").rglob("*.py"))
RESULTS = {"Cont", "Halt", "Retry", "Fallback", "Raise"}


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"


def test_the_package_has_no_assert_statement() -> None:
    found = [where(p, n) for p in SOURCES for n in ast.walk(tree(p)) if isinstance(n, ast.Assert)]
    assert found == []


def matches_results(node: ast.Match) -> bool:
    for case in node.cases:
        for pattern in ast.walk(case.pattern):
            if isinstance(pattern, ast.MatchClass) and ast.unparse(pattern.cls) in RESULTS:
                return True
    return False


def ends_in_assert_never(node: ast.Match) -> bool:
    last = node.cases[-1]
    irrefutable = isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None
    calls = [ast.unparse(n.func) for n in ast.walk(last) if isinstance(n, ast.Call)]
    return irrefutable and "assert_never" in calls


def test_every_match_over_results_ends_in_assert_never() -> None:
    matches = [(p, n) for p in SOURCES for n in ast.walk(tree(p)) if isinstance(n, ast.Match)]
    over_results = [(p, n) for p, n in matches if matches_results(n)]
    assert len(over_results) >= 6  # the agents' and recovery's: the rule is not checked on nothing
    assert [where(p, n) for p, n in over_results if not ends_in_assert_never(n)] == []


def test_every_public_exception_lives_in_adk_errors_and_in_its_tree() -> None:
    for module in pkgutil.walk_packages(adk.__path__, "adk."):
        importlib.import_module(module.name)
    classes = [
        (path, node)
        for path in SOURCES
        if path.name != "errors.py"
        for node in ast.walk(tree(path))
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
    ]
    assert [f"{where(p, n)} {n.name}" for p, n in classes if _is_exception(p, n.name)] == []
    drawn = adk.errors.__doc__ or ""
    errors = [n for n in adk.errors.__all__ if isinstance(getattr(adk.errors, n), type)]
    assert len(errors) > 15
    assert [n for n in errors if not re.search(rf"^(.*── )?{n}\b", drawn, re.MULTILINE)] == []


def _is_exception(path: Path, name: str) -> bool:
    parts = path.relative_to(ROOT).with_suffix("").parts
    module = importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    value = getattr(module, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("adk.agents.llm", "MaxIterationsExceeded"),
        ("adk.agents", "MaxIterationsExceeded"),
        ("adk.recovery", "CircuitOpenError"),
        ("adk.testing", "ScriptError"),
    ],
)
def test_moved_errors_are_still_importable_from_where_they_were(module: str, name: str) -> None:
    error = getattr(adk.errors, name)
    assert getattr(importlib.import_module(module), name) is error
    assert getattr(adk, name) is error
    assert issubclass(error, adk.errors.AdkError)


def test_the_docs_cite_pages_in_the_repository() -> None:
    texts = [*(ROOT / "docs").glob("*.md"), ROOT / "README.md", *SOURCES]
    assert [str(p.relative_to(ROOT)) for p in texts if "DESIGN" in p.read_text()] == []
