"""`adk run` and `adk serve`: loading a user's agent, one message or a chat, sessions, failures."""

import asyncio
import io
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk import BaseAgent, Runner
from adk.cli import main
from adk.testing import set_testing
from tests import postgres

ECHO = """\
from adk import LlmAgent
from adk.testing import ScriptedModel


def answer(request):
    said = [m.content for m in request.messages if m.role == "user"]
    return f"heard {said}"


agent = LlmAgent("echo", model=ScriptedModel([answer] * 10))
"""


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    with set_testing(True):
        yield tmp_path


def write(name: str, code: str) -> str:
    Path(name).write_text(textwrap.dedent(code))
    return name


def test_one_message_and_a_second_run_continues_the_session(capsys: pytest.CaptureFixture[str]) -> None:
    path = write("echo_agent.py", ECHO)
    assert main(["run", path, "-m", "hello", "--session", "s1"]) == 0
    assert capsys.readouterr().out == "echo: heard ['hello']\n"
    assert main(["run", path, "-m", "again", "--session", "s1"]) == 0
    assert capsys.readouterr().out == "echo: heard ['hello', 'again']\n"
    assert Path(".adk/sessions.sqlite3").is_file()


def test_without_a_session_id_a_new_one_is_made_and_shown(capsys: pytest.CaptureFixture[str]) -> None:
    path = write("echo_agent.py", ECHO)
    assert main(["run", path, "-m", "hello"]) == 0
    out, err = capsys.readouterr()
    assert out == "echo: heard ['hello']\n"
    session = err.split()[1]
    assert err == f"session {session} (continue it with --session {session})\n"
    assert main(["run", path, "-m", "more", "--session", session]) == 0
    assert capsys.readouterr().out == "echo: heard ['hello', 'more']\n"


def test_users_and_db_files_keep_sessions_apart(capsys: pytest.CaptureFixture[str]) -> None:
    path = write("echo_agent.py", ECHO)
    main(["run", path, "-m", "a", "--session", "s", "--user", "ann"])
    main(["run", path, "-m", "b", "--session", "s", "--user", "bob"])
    main(["run", path, "-m", "c", "--session", "s", "--db", "other.sqlite3"])
    capsys.readouterr()
    assert main(["run", path, "-m", "d", "--session", "s", "--user", "ann"]) == 0
    assert capsys.readouterr().out == "echo: heard ['a', 'd']\n"


def test_an_interactive_chat_reads_lines_until_exit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write("echo_agent.py", ECHO)
    monkeypatch.setattr(sys, "stdin", io.StringIO("one\n\n two \n/exit\nnever\n"))
    assert main(["run", path, "--session", "chat"]) == 0
    assert capsys.readouterr().out == (
        "you: one\necho: heard ['one']\nyou: two\necho: heard ['one', 'two']\n"
    )


def test_a_module_may_define_a_runner_which_keeps_its_own_store(capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        "with_runner.py",
        """\
        from adk import LlmAgent, Runner
        from adk.testing import ScriptedModel

        runner = Runner(LlmAgent("mine", model=ScriptedModel(["one", "two"])))
        """,
    )
    assert main(["run", path, "-m", "hi", "--session", "s"]) == 0
    assert capsys.readouterr().out == "mine: one\n"
    assert not Path(".adk").exists()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "x = 1\n",
            "m.py defines neither `agent` (an adk agent such as LlmAgent) nor `runner` (a Runner); "
            "define one of them at module level",
        ),
        ("agent = 'helper'\n", "m.py: `agent` is a str, not an adk agent (a BaseAgent)"),
        ("runner = object()\n", "m.py: `runner` is a object, not an adk Runner"),
        ("import os\n\nagent = undefined\n", "m.py:3: NameError: name 'undefined' is not defined"),
    ],
)
def test_a_module_without_a_usable_agent_is_one_clear_line(
    code: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", write("m.py", code), "-m", "hi"]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"adk: {message}\n")


def test_a_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "nowhere.py", "-m", "hi"]) == 1
    assert capsys.readouterr().err == "adk: nowhere.py: no such file\n"


def test_a_failed_run_exits_non_zero_with_the_error(capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        "failing.py",
        """\
        from adk import LlmAgent
        from adk.errors import AuthenticationError
        from adk.testing import ScriptedModel

        agent = LlmAgent("a", model=ScriptedModel([AuthenticationError("bad key")], name="gpt"))
        """,
    )
    assert main(["run", path, "-m", "hi", "--session", "s"]) == 1
    assert capsys.readouterr() == ("", "✗ error: AuthenticationError: bad key [model:gpt]\n")


def test_an_exception_outside_the_run_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        "misspelt.py",
        """\
        from adk import LlmAgent, Runner
        from adk.testing import ScriptedModel

        class Hooks:
            def before_mdoel(self, ctx):
                ...

        agent = LlmAgent("a", model=ScriptedModel(["x"]), callbacks=[Hooks()])
        """,
    )
    assert main(["run", path, "-m", "hi"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("adk: misspelt.py:8: CallbackRegistrationError: callback Hooks has an attribute ")
    assert err.count("\n") == 1


def test_serve_hands_the_runner_to_agui(monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[tuple[Any, ...]] = []
    fake = types.ModuleType("adk.agui")
    fake.serve = lambda runner, host, port: served.append((runner, host, port))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "adk.agui", fake)
    path = write("echo_agent.py", ECHO)
    assert main(["serve", path, "--port", "9999", "--db", "served.sqlite3"]) == 0
    [(runner, host, port)] = served
    assert (type(runner), host, port) == (Runner, "127.0.0.1", 9999)
    assert isinstance(runner.agent, BaseAgent)
    assert Path("served.sqlite3").is_file()


def test_serve_without_the_agui_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def serve(runner: Runner, host: str, port: int) -> None:
        raise ModuleNotFoundError("No module named 'uvicorn'", name="uvicorn")

    fake = types.ModuleType("adk.agui")
    fake.serve = serve  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "adk.agui", fake)
    assert main(["serve", write("echo_agent.py", ECHO)]) == 1
    assert (
        capsys.readouterr().err
        == "adk: adk serve needs the agui extra: pip install 'adk[agui]' (no module 'uvicorn')\n"
    )


def test_demo_on_an_openai_model(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from adk.demo import DemoModel

    made: list[str] = []

    def openai_model(name: str) -> DemoModel:
        made.append(name)
        return DemoModel(name)

    fake = types.ModuleType("adk.models.openai")
    fake.OpenAIModel = openai_model  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "adk.models.openai", fake)
    assert main(["demo", "--model", "openai:gpt-test", "--pace", "0"]) == 0
    out = capsys.readouterr().out
    assert made == ["gpt-test"]
    assert out.startswith("adk demo: an assistant with a weather tool, a guardrail and recovery; model ")
    assert "falls back to model gpt-test\n" in out


def test_an_unknown_model_provider(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--model", "anthropic:claude"]) == 1
    assert capsys.readouterr().err == "adk: --model 'anthropic:claude': expected openai:<model name>\n"


def test_sessions_in_postgresql_are_shared_by_separate_runs(capsys: pytest.CaptureFixture[str]) -> None:
    postgres.require()
    path = write("echo_agent.py", ECHO)
    schema = postgres.schema_name()
    url = f"{postgres.URL}?schema={schema}"
    try:
        assert main(["run", path, "-m", "one", "--session", "s", "--sessions", url]) == 0
        assert main(["run", path, "-m", "two", "--session", "s", "--sessions", url]) == 0
        assert capsys.readouterr().out == "echo: heard ['one']\necho: heard ['one', 'two']\n"
    finally:
        asyncio.run(postgres.drop(schema))
    assert not Path(".adk").exists()  # no SQLite file was made


@pytest.mark.parametrize(
    ("where", "said"),
    [
        (
            "postgresql://",
            "adk: --sessions: session store URL 'postgresql://' is not a PostgreSQL URL:"
            " expected postgresql://user[:password]@host[:port]/database\n",
        ),
        (
            "postgresql://adk:hunter2@127.0.0.1:1/db",
            "✗ error: ConnectionError: cannot open session store postgresql://adk:***@127.0.0.1:1/db: ",
        ),
    ],
)
def test_a_bad_sessions_url_is_one_line(where: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = write("echo_agent.py", ECHO)
    assert main(["run", path, "-m", "hi", "--session", "s", "--sessions", where]) == 1
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1 and "hunter2" not in err
