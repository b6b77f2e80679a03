"""Every ```python block of README.md and docs/*.md runs, so the docs cannot rot.

Every block is marked, on the line before it, as one of:

- `<!-- script -->`: a whole program; it runs as it would pasted into a file: on its own, without
  top-level `await` (what it defines is then there for the blocks below).
- `<!-- fragment -->`: a piece of the page, not a program: it runs in the document's namespace,
  after the blocks above it, like a reader going down the page; top-level `await` is allowed, and
  `model` (a scripted model that answers "Hello!") and `agent` (an `LlmAgent` on it) are defined.
- `<!-- no-test -->`: skipped (a server that runs until stopped, a real model's key).

An unmarked block fails `test_every_block_is_marked`. Retry waits are off.
"""

import ast
import asyncio
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adk import LlmAgent
from adk.testing import ScriptedModel, set_testing

ROOT = Path(__file__).parents[1]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SKIP = "<!-- no-test -->"
SCRIPT = "<!-- script -->"
FRAGMENT = "<!-- fragment -->"
MARKS = (SKIP, SCRIPT, FRAGMENT)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    code: str
    script: bool = False
    mark: str = FRAGMENT


def every_block(path: Path) -> Iterator[Block]:
    """Every ```python block of `path`, with the mark on the line before it ('' if none)."""
    text = path.read_text()
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        line = text.count("\n", 0, match.start()) + 2
        mark = before if before in MARKS else ""
        yield Block(path, line, match.group(1), before == SCRIPT, mark)


def blocks(path: Path) -> Iterator[Block]:
    """The blocks of `path` that run: all but those marked `<!-- no-test -->`."""
    return (b for b in every_block(path) if b.mark != SKIP)


def documents() -> list[Path]:
    return [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if p.is_file()]


def run(block: Block, namespace: dict[str, Any]) -> None:
    name = str(block.path.relative_to(ROOT))
    source = "\n" * (block.line - 1) + block.code  # tracebacks point at the document's lines
    if block.script:
        script: dict[str, Any] = {"__name__": "__main__"}
        exec(compile(source, name, "exec"), script)
        namespace.update(script)
        return
    code = compile(source, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)
    if asyncio.iscoroutine(result):
        asyncio.run(result)


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()  # a block may configure logging: leave the test session's as it was
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    model = ScriptedModel([lambda request: "Hello!"] * 20)
    agent = LlmAgent("assistant", model=model)
    namespace: dict[str, Any] = {"__name__": f"docs_{path.stem}", "model": model, "agent": agent}
    with set_testing(True):
        for block in blocks(path):
            run(block, namespace)


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_is_marked(path: Path) -> None:
    """A reader pasting a block into a file must know whether it runs there: a script does."""
    unmarked = [f"{path.relative_to(ROOT)}:{b.line}" for b in every_block(path) if not b.mark]
    assert unmarked == [], f"mark each block {SCRIPT}, {FRAGMENT} or {SKIP}"


def test_an_unmarked_block_is_found(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```python\nx = 1\n```\n\n<!-- fragment -->\n```python\ny = 2\n```\n")
    assert [(b.line, b.mark) for b in every_block(doc)] == [(2, ""), (7, FRAGMENT)]


def test_blocks_are_found_and_skipped_as_marked(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# T\n\n```python\nx = 1\n```\n\n<!-- no-test -->\n```python\nraise SystemExit\n```\n"
        "\n```sh\nls\n```\n\n```python\nassert x == 1\n```\n"
    )
    found = list(blocks(doc))
    assert [(b.line, b.code) for b in found] == [(4, "x = 1\n"), (17, "assert x == 1\n")]


def test_a_failing_block_names_its_document_line(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("text\n\n```python\nx = 1\ny = undefined\n```\n")
    [block] = blocks(doc)
    with pytest.raises(NameError) as caught:
        run(Block(ROOT / "doc.md", block.line, block.code), {})
    assert caught.traceback[-1].lineno + 1 == 5  # pytest's line numbers count from 0


def test_top_level_await_runs() -> None:
    namespace: dict[str, Any] = {}
    run(Block(ROOT / "x.md", 1, "import asyncio\nawait asyncio.sleep(0)\ndone = True\n"), namespace)
    assert namespace["done"] is True


def test_a_script_block_runs_on_its_own_without_top_level_await(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "```python\nx = 1\n```\n\n<!-- script -->\n```python\nimport asyncio\nawait asyncio.sleep(0)\n```\n"
    )
    first, script = blocks(doc)
    assert (first.script, script.script) == (False, True)
    with pytest.raises(SyntaxError, match="'await' outside function"):
        run(Block(ROOT / "doc.md", script.line, script.code, script=True), {})
    with pytest.raises(NameError, match="name 'x' is not defined"):
        run(Block(ROOT / "doc.md", 1, "print(x)\n", script=True), {"x": 1})
    namespace: dict[str, Any] = {}
    run(Block(ROOT / "doc.md", 1, "y = 2\n", script=True), namespace)
    assert namespace["y"] == 2  # there for the blocks below


def test_the_readme_opens_with_two_commands_then_the_getting_started_path() -> None:
    text = (ROOT / "README.md").read_text()
    first = re.search(r"^```(\w+)\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert first is not None and first.group(1) == "sh"
    assert first.group(2).splitlines() == [
        "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/adk demo",
        ".venv/bin/python -m pytest",
    ]
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings[0] == "Getting started"
    start = text.index("## Getting started")
    path = text[start : text.index("\n## ", start + 1)]
    steps = [
        "**Install.**",
        "**A first agent.**",
        "**A first callback.**",
        "**A first retry.**",
        "`adk web`.**",
    ]
    assert sorted(steps, key=path.index) == steps
    assert "|---" not in text[:start]  # no table before it
    for table in ("| hook | fires |", "| result | meaning |", "| callback | what it does |"):
        assert table not in text  # the reference tables live in docs/reference.md
        assert table in (ROOT / "docs" / "reference.md").read_text()
