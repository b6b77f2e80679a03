"""The library logs and never prints: only the command line (adk/cli/commands.py and display.py,
adk/demo.py) writes to the terminal."""

import ast
from pathlib import Path

import adk

PACKAGE = Path(adk.__file__).parent
TERMINAL = {PACKAGE / p for p in ("demo.py", "__main__.py", "cli/commands.py", "cli/display.py")}


def library_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p not in TERMINAL)


def test_no_library_module_prints_or_writes_to_the_terminal() -> None:
    offenders = []
    for path in library_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                fn = node.func
                if isinstance(fn, ast.Name) and fn.id in {"print", "input", "breakpoint"}:
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {fn.id}()")
            if isinstance(node, ast.Attribute) and node.attr in {"stdout", "stderr"}:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} sys.{node.attr}")
    assert offenders == []


def test_loggers_are_named_after_their_module() -> None:
    """`logging.getLogger(__name__)`: the logger names in docs/observability.md are module names."""
    offenders = []
    for path in library_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "getLogger"
                and not (
                    len(node.args) == 1
                    and isinstance(node.args[0], ast.Name)
                    and node.args[0].id == "__name__"
                )
            ):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []
    assert len(library_modules()) > 20
