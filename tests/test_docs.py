"""Every ```python block of README.md and docs/*.md runs, so the docs cannot rot.

The blocks of one file run in order in one namespace, like a reader going down the page; top-level
`await` is allowed. A block preceded by a `<!-- no-test -->` line is skipped; one preceded by
`<!-- script -->` runs as a script pasted into a file would: on its own, without top-level `await`
(what it defines is then there for the blocks below). Retry waits are off.
Each document starts with `model` (a scripted model that answers "Hello!") and `agent` (an
`LlmAgent` on it) defined, for snippets that only need some model or agent.
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


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    code: str
    script: bool = False


def blocks(path: Path) -> Iterator[Block]:
    text = path.read_text()
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        if before != SKIP:
            yield Block(path, text.count("\n", 0, match.start()) + 2, match.group(1), before == SCRIPT)


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
