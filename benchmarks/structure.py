"""The run core's shape, measured: the table of issue 30, read off adk/'s source.

    python -m benchmarks.structure

Prints the longest functions, those over 60 lines or over complexity 12 (ruff's C901, as CI
checks it), files over 500 lines, `_private` names imported across modules, module-level
containers written while running, import circles (imports inside functions counted,
`TYPE_CHECKING` ones not) and the size of `adk.__all__`. tests/test_source_rules.py holds the
limits; this script shows where the code stands against them.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "adk"
MAX_LINES = 60
MAX_FILE = 500
MAX_COMPLEXITY = 12
CONTAINERS = {"dict", "set", "list", "defaultdict", "OrderedDict", "deque", "WeakKeyDictionary",
              "WeakValueDictionary", "WeakSet", "Counter"}  # fmt: skip
MUTATORS = {"add", "append", "update", "pop", "setdefault", "clear", "discard", "remove", "extend",
            "insert", "popitem", "appendleft", "popleft"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Function:
    """A function or method of adk/: where it is and how long."""

    path: str
    qualname: str
    line: int
    lines: int


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def functions(path: Path) -> Iterator[Function]:
    """Every function in `path`, with its qualified name and its length in lines (decorators not
    counted, its docstring counted)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[Function]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                end = child.end_lineno or child.lineno
                yield Function(relative(path), name, child.lineno, end - child.lineno + 1)
                yield from walk(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")

    yield from walk(ast.parse(path.read_text(), str(path)), "")


def complexity(every: list[Function]) -> list[tuple[Function, int]]:
    """Functions over the complexity limit, by ruff's C901 (the rule CI runs), with their figure."""
    found = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "C901", "--output-format", "json",
         "--config", f"lint.mccabe.max-complexity={MAX_COMPLEXITY}", str(PACKAGE)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    at = {(f.path, f.line): f for f in every}
    return [
        (at[relative(Path(r["filename"])), r["location"]["row"]], int(r["message"].split("(")[1].split()[0]))
        for r in json.loads(found.stdout or "[]")
    ]


def private_imports(path: Path) -> list[str]:
    """`_names` imported from another module of adk/ (a private module's public names are fine),
    as `path:module._name`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            found += [
                f"{relative(path)}:{node.module}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
    return found


def _container(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict | ast.Set | ast.List | ast.DictComp | ast.SetComp | ast.ListComp):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in CONTAINERS
    return False


def module_tables(path: Path) -> dict[str, int]:
    """The module-level containers of `path` (dicts, sets, lists, and tuples of them), by line."""
    tables: dict[str, int] = {}
    for node in ast.parse(path.read_text()).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        values = value.elts if isinstance(value, ast.Tuple) else [value]
        for target in targets:
            if isinstance(target, ast.Name) and any(_container(v) for v in values):
                tables[target.id] = node.lineno
    return tables


def written_tables(path: Path, tables: dict[str, dict[str, int]]) -> list[str]:
    """The module-level containers (its own, or one it imports) that a function of `path` writes:
    run state's usual hiding place."""
    module = ast.parse(path.read_text())
    mine = {name: (module_name(path), line) for name, line in tables[module_name(path)].items()}
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and node.module in tables:
            for alias in node.names:
                if alias.name in tables[node.module]:
                    mine[alias.asname or alias.name] = (node.module, tables[node.module][alias.name])
    written = set()
    for func in ast.walk(module):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            written |= _writes(func) & mine.keys()
    return [f"{_path(mine[n][0])}:{n}" for n in sorted(written)]


def _path(module: str) -> str:
    candidate = ROOT / Path(*module.split("."))
    return relative(candidate / "__init__.py" if candidate.is_dir() else candidate.with_suffix(".py"))


def _base(node: ast.expr) -> str | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _writes(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    found = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            found.update(b for t in targets if isinstance(t, ast.Subscript) and (b := _base(t)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and (b := _base(node.func.value))
        ):
            found.add(b)
    return found


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path, known: set[str]) -> set[str]:
    """The adk modules `path` imports at run time: at module level or inside functions, not under
    `if TYPE_CHECKING:`."""
    found: set[str] = set()
    current = module_name(path)
    package = current if path.name == "__init__.py" else current.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in known)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*up, base] if base else up)
                for alias in child.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m in known and m != current}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = []
            while (top := stack.pop()) != node:
                part.append(top)
            part.append(node)
            if len(part) > 1:
                found.append(sorted(part))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


@dataclass(frozen=True, slots=True)
class Shape:
    """Where adk/ stands against each limit; every list holds keys as tests/test_source_rules.py's
    EXCEPTIONS spells them (`adk/<file>.py:<qualname or NAME>`, a file's path alone)."""

    longest: Function
    long: dict[str, int]
    """Functions over MAX_LINES: their lines."""
    complex: dict[str, int]
    """Functions over MAX_COMPLEXITY: their complexity."""
    files: dict[str, int]
    """Files over MAX_FILE: their lines."""
    private: list[str]
    """`path:module._name`: a private name imported from another module."""
    tables: list[str]
    """`path:NAME`: a module-level container that a function writes."""
    circles: list[str]
    """Import circles, `a <-> b <-> c`."""
    public: int
    """The names in `adk.__all__`."""


def measure() -> Shape:
    """Every figure of the table, read off the source (and `adk.__all__`)."""
    paths = sources()
    every = [f for p in paths for f in functions(p)]
    known = {module_name(p) for p in paths}
    graph = {module_name(p): imports(p, known) for p in paths}
    tables = {module_name(p): module_tables(p) for p in paths}
    lengths = {relative(p): len(p.read_text().splitlines()) for p in paths}
    sys.path.insert(0, str(ROOT))
    import adk

    return Shape(
        longest=max(every, key=lambda f: f.lines),
        long={f"{f.path}:{f.qualname}": f.lines for f in every if f.lines > MAX_LINES},
        complex={f"{f.path}:{f.qualname}": n for f, n in complexity(every)},
        files={path: n for path, n in lengths.items() if n > MAX_FILE},
        private=[i for p in paths for i in private_imports(p)],
        tables=[t for p in paths for t in written_tables(p, tables)],
        circles=[" <-> ".join(c) for c in circles(graph)],
        public=len(adk.__all__),
    )


def main() -> None:
    shape = measure()
    f = shape.longest
    print(f"longest function: {f.path}:{f.line} {f.qualname}, {f.lines} lines")
    sections: dict[str, list[str]] = {
        f"functions over {MAX_LINES} lines": _by_size(shape.long),
        f"functions over complexity {MAX_COMPLEXITY}": _by_size(shape.complex),
        f"files over {MAX_FILE} lines": _by_size(shape.files),
        "_private names imported across modules": shape.private,
        "module-level containers written while running": shape.tables,
        "import circles (imports inside functions counted, TYPE_CHECKING ones not)": shape.circles,
    }
    for title, rows in sections.items():
        print(f"{title}: {len(rows)}")
        for row in rows:
            print(f"    {row}")
    print(f"adk.__all__: {shape.public} names")


def _by_size(figures: dict[str, int]) -> list[str]:
    return [f"{key} ({n})" for key, n in sorted(figures.items(), key=lambda item: -item[1])]


if __name__ == "__main__":
    main()
