"""The first steps: the distribution's name in every install hint, `.env`, and `adk create`."""

import re
import sys
import tomllib
from pathlib import Path

import pytest

from tests.cli.shell import ROOT, adk, environment

NAME = "adk-callbacks"
"""The distribution's name (`adk` on the package registry is another project's); the import name
and the command stay `adk`."""

GREETER = """\
import os

from adk import LlmAgent
from adk.testing import ScriptedModel

greeting = f"{os.environ['GREETING']}, {os.environ['WHO']}"
agent = LlmAgent("greeter", model=ScriptedModel([greeting]))
"""


def test_the_distribution_has_a_name_of_its_own_and_keeps_the_command() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == NAME
    assert project["scripts"] == {"adk": "adk.__main__:main"}
    assert project["optional-dependencies"]["dev"][0] == f"{NAME}[otel,agui,postgres,mcp,a2a,dbos,dotenv]"
    assert project["optional-dependencies"]["dotenv"] == ["python-dotenv>=1.0"]


def test_every_install_hint_names_the_distribution() -> None:
    """`pip install 'adk[...]'` would install someone else's code: no hint may say it."""
    texts = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "adk").rglob("*.py")]
    texts += [*(ROOT / "adk").rglob("*.txt"), *(ROOT / "examples").glob("*.py")]
    wrong = [
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path in texts
        for m in re.finditer(r"""(?<![\w-])adk\[[\w,]+\]""", path.read_text(encoding="utf-8"))
    ]
    assert wrong == []
    hints = [m for p in texts for m in re.findall(rf"{NAME}\[(\w+)", p.read_text(encoding="utf-8"))]
    assert {"agui", "mcp", "postgres", "otel", "dotenv"} <= set(hints)


def test_env_file_sets_what_is_not_set_already(tmp_path: Path) -> None:
    (tmp_path / "greeter.py").write_text(GREETER)
    (tmp_path / ".env").write_text("GREETING=hello\nWHO=from the file\n")
    done = adk("run", "greeter.py", "-m", "hi", cwd=tmp_path, env={"WHO": "from the shell"})
    assert (done.returncode, done.stdout) == (0, "greeter: hello, from the shell\n")


def test_env_file_without_python_dotenv_says_how_to_read_it(tmp_path: Path) -> None:
    (tmp_path / "greeter.py").write_text(GREETER)
    (tmp_path / ".env").write_text("GREETING=hello\n")
    done = adk("run", "greeter.py", "-m", "hi", cwd=tmp_path, env={"WHO": "you"}, hide="dotenv")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == f"adk: .env not read: pip install '{NAME}[dotenv]' to read it"


def test_create_writes_an_agent_that_runs_and_tests_that_pass(tmp_path: Path) -> None:
    done = adk("create", "weather_bot", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "wrote weather_bot/agent.py (a tool, a callback, a model) and weather_bot/test_agent.py",
        "  adk run weather_bot/agent.py                chat with it",
        "  adk web weather_bot/agent.py                watch it work on a page",
        "  python -m pytest weather_bot/test_agent.py  run its tests, offline",
    ]
    chat = adk("run", "weather_bot/agent.py", "-m", "What's the weather in Paris?", cwd=tmp_path)
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.splitlines() == [
        '  ⚙ get_weather(city="Paris")',
        "  ↳ 18°C and sunny",
        "weather_bot: The weather tool says: 18°C and sunny",
    ]
    halted = adk("run", "weather_bot/agent.py", "-m", "the admin password?", cwd=tmp_path)
    assert halted.stdout.splitlines() == [
        "  ⛔ Guardrail.before_model halted model offline; the model was not called",
        "weather_bot: Sorry, I can't help with passwords.",
    ]

    import subprocess

    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_agent.py"],
        cwd=tmp_path / "weather_bot",
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert tests.returncode == 0, tests.stdout
    assert "2 passed" in tests.stdout


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("9lives", "adk: create '9lives': the agent's name is a Python identifier such as my_agent"),
        ("../up", "adk: create '../up': the agent's name is a Python identifier such as my_agent"),
        ("taken", "adk: create 'taken': taken already exists; choose another name"),
    ],
)
def test_create_refuses_a_bad_or_taken_name_in_one_line(tmp_path: Path, name: str, line: str) -> None:
    (tmp_path / "taken").mkdir()
    done = adk("create", name, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(line) and done.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert list((tmp_path / "taken").iterdir()) == []
