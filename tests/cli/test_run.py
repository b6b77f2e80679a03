"""`adk run` and `adk serve`: loading a user's agent, one message or a chat, sessions, failures."""

import asyncio
import io
import logging
import re
import sys
import textwrap
import types
from collections.abc import AsyncIterator, Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

from adk import BaseAgent, LlmRequest, LlmResponse, Runner
from adk.cli import main
from adk.errors import ModelConnectionError
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
    # `serve` is faked in these tests: no port is listened on (tests/cli/test_errors.py checks it)
    monkeypatch.setattr("adk.cli.commands.check_port", lambda host, port: None)
    with set_testing(True):
        yield tmp_path


def timeless(err: str) -> str:
    """stderr with the turns' wall times blanked."""
    return re.sub(r"⏱ \d+\.\d\d s", "⏱ T s", err)


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
    assert timeless(err) == (
        f"session {session} (continue it with --session {session})\n"
        "  ⏱ T s · 1 model call · tokens not reported\n"
    )
    assert main(["run", path, "-m", "more", "--session", session]) == 0
    assert capsys.readouterr().out == "echo: heard ['hello', 'more']\n"


def test_the_turn_line_adds_up_the_tokens_of_each_model_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write(
        "counted_agent.py",
        """\
        from adk import LlmAgent, LlmResponse, tool
        from adk.events import FunctionCall, ToolCall, Usage
        from adk.testing import ScriptedModel


        @tool
        def look() -> str:
            \"\"\"Look.\"\"\"
            return "seen"


        call = ToolCall(id="c1", function=FunctionCall(name="look", arguments="{}"))
        first = Usage(prompt_tokens=12, completion_tokens=3, total_tokens=15)
        then = Usage(prompt_tokens=20, completion_tokens=2, total_tokens=22)
        agent = LlmAgent("counted", tools=[look], model=ScriptedModel([
            LlmResponse.calls(call, usage=first, model="m"),
            LlmResponse.text("done", usage=then, model="m"),
        ]))
        """,
    )
    assert main(["run", path, "-m", "go", "--session", "s"]) == 0
    out, err = capsys.readouterr()
    assert out == "  ⚙ look()\n  ↳ seen\ncounted: done\n"
    assert timeless(err).splitlines()[-1] == "  ⏱ T s · 2 model calls · 37 tokens (32 in, 5 out)"


def test_with_a_budget_the_turn_line_adds_what_the_turn_cost(capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        "priced_agent.py",
        """\
        from adk import LlmAgent, LlmResponse
        from adk.events import Usage
        from adk.limits import Budget
        from adk.testing import ScriptedModel

        used = Usage(prompt_tokens=1000, completion_tokens=200, total_tokens=1200)
        model = ScriptedModel([LlmResponse.text("ok", usage=used, model="m")], name="m")
        agent = LlmAgent("priced", model=model, callbacks=[Budget(usd=1, prices={"m": (2.5, 10.0)})])
        """,
    )
    assert main(["run", path, "-m", "go", "--session", "s"]) == 0
    out, err = capsys.readouterr()
    assert out == "priced: ok\n"
    # 1000 tokens in at $2.5 per million and 200 out at $10 per million
    assert (
        timeless(err).splitlines()[-1]
        == "  ⏱ T s · 1 model call · 1200 tokens (1000 in, 200 out) · $0.004500"
    )


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
        ("runner = object()\n", "m.py: `runner` is an object, not an adk Runner"),
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
    out, err = capsys.readouterr()
    assert (out, timeless(err)) == (
        "",
        "✗ error: AuthenticationError: bad key [model:gpt]\n  ⏱ T s · 1 model call · tokens not reported\n",
    )


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


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What `adk serve` hands to `adk.agui.serve`, instead of serving it."""
    calls: list[dict[str, Any]] = []
    fake = types.ModuleType("adk.agui")
    fake.serve = lambda runner, host, port, **options: calls.append(  # type: ignore[attr-defined]
        {"runner": runner, "host": host, "port": port, **options}
    )
    monkeypatch.setitem(sys.modules, "adk.agui", fake)
    return calls


def test_serve_hands_the_runner_to_agui(served: list[dict[str, Any]]) -> None:
    path = write("echo_agent.py", ECHO)
    assert main(["serve", path, "--port", "9999", "--db", "served.sqlite3"]) == 0
    [call] = served
    runner = call.pop("runner")
    assert type(runner) is Runner
    assert isinstance(runner.agent, BaseAgent)
    assert call == {
        "host": "127.0.0.1",
        "port": 9999,
        "identity": None,
        "insecure_anonymous": False,
        "max_body": 1 << 20,
        "cors_origins": [],
    }
    assert Path("served.sqlite3").is_file()


def test_serve_takes_an_identity_function_limits_and_origins(served: list[dict[str, Any]]) -> None:
    write("auth.py", "def identify(request):\n    return request.headers.get('x-user')\n")
    args = ["serve", write("echo_agent.py", ECHO), "--host", "0.0.0.0", "--identity", "auth:identify"]
    args += ["--max-body", "4096", "--cors-origin", "https://a.example", "--cors-origin", "https://b.example"]
    assert main(args) == 0
    [call] = served
    assert call["identity"].__name__ == "identify"
    assert (call["host"], call["max_body"], call["cors_origins"]) == (
        "0.0.0.0",
        4096,
        ["https://a.example", "https://b.example"],
    )


def test_serve_refuses_anonymous_clients_beyond_loopback(
    served: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("echo_agent.py", ECHO)
    assert main(["serve", path, "--host", "0.0.0.0"]) == 1
    assert capsys.readouterr().err == (
        "adk: refusing to serve on 0.0.0.0 without --identity MODULE:FUNCTION: every client would be "
        "'anonymous' and could read any thread it names (--insecure-anonymous serves it anyway)\n"
    )
    assert served == []
    assert main(["serve", path, "--host", "0.0.0.0", "--insecure-anonymous"]) == 0
    assert served[0]["insecure_anonymous"] is True


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("identify", "--identity 'identify': expected MODULE:FUNCTION, e.g. auth:identify"),
        (
            "nowhere:f",
            "--identity 'nowhere:f': cannot import nowhere: ModuleNotFoundError: No module named 'nowhere'",
        ),
        ("auth:missing", "--identity 'auth:missing': auth has no function 'missing'"),
    ],
)
def test_a_bad_identity_is_one_clear_line(
    spec: str, message: str, served: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    write("auth.py", "def identify(request):\n    return None\n")
    assert main(["serve", write("echo_agent.py", ECHO), "--identity", spec]) == 1
    assert capsys.readouterr().err == f"adk: {message}\n"
    assert served == []


def test_serve_without_the_agui_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    assert main(["serve", write("echo_agent.py", ECHO)]) == 1
    assert (
        capsys.readouterr().err
        == "adk: adk serve needs the agui extra: pip install 'adk-callbacks[agui]' (no module 'uvicorn')\n"
    )


def test_version_and_serves_defaults_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    try:
        expected = f"adk {version('adk-callbacks')}\n"
    except PackageNotFoundError:  # a venv whose editable install predates the name
        expected = "adk (not installed)\n"
    assert capsys.readouterr().out == expected
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for default in ("(default: 127.0.0.1)", "(default: 8000)", "(default: 1048576)", "(default: none)"):
        assert default in shown


def test_log_level_shows_adks_log_records_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        "flaky.py",
        """\
        from adk import LlmAgent
        from adk.errors import ServerError
        from adk.testing import ScriptedModel

        agent = LlmAgent("a", model=ScriptedModel([ServerError("503", status_code=503), "ok"], name="m"))
        """,
    )
    adk = logging.getLogger("adk")
    handlers, level = list(adk.handlers), adk.level
    try:
        assert main(["run", path, "-m", "hi", "--session", "s", "--log-level", "info"]) == 0
    finally:
        adk.handlers[:], adk.level = handlers, level
    err = capsys.readouterr().err
    assert re.match(
        r"INFO adk\.recovery: retrying model 'm' in \d\.\d\ds \(attempt 2\) after ServerError: 503\n", err
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
    assert "chose not to call" not in out
    assert out.startswith("adk demo: an assistant with a weather tool, a guardrail and recovery; model ")
    assert "falls back to model gpt-test\n" in out


def test_an_unknown_model_provider(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--model", "anthropic:claude"]) == 1
    assert capsys.readouterr().err == (
        "adk: --model 'anthropic:claude': unknown provider 'anthropic' (adk knows openai:<name>)\n"
    )


class Unreachable:
    """A model whose server is down."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        self.calls += 1
        raise ModelConnectionError(
            f"model {self.name!r} at http://127.0.0.1:9/v1: could not connect: refused"
        )
        yield  # a generator, like every model


class Chatty:
    """A model that never calls a tool: it answers every message in words."""

    name = "chatty"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        yield LlmResponse.text("I would rather talk.", model=self.name)


def fake_openai(monkeypatch: pytest.MonkeyPatch, model: Any) -> None:
    fake = types.ModuleType("adk.models.openai")
    fake.OpenAIModel = lambda name: model  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "adk.models.openai", fake)


def test_the_demo_stops_at_the_first_model_it_cannot_reach(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = Unreachable("small")
    fake_openai(monkeypatch, model)
    assert main(["demo", "--model", "openai:small", "--pace", "0"]) == 1
    out, err = capsys.readouterr()
    assert out == (
        "adk demo: an assistant with a weather tool, a guardrail and recovery; model openai:small\n"
        "\n── a tool call\nyou: What's the weather in Paris?\n"
    )
    assert err == (
        "adk: model 'small' at http://127.0.0.1:9/v1: could not connect: refused (is the server up?); "
        "the demo stops here\n"
    )
    assert model.calls == 1  # not retried, not fallen back from


def test_the_demo_says_when_the_model_chose_not_to_call_the_tool(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_openai(monkeypatch, Chatty())
    assert main(["demo", "--model", "openai:chatty", "--pace", "0"]) == 0
    out, err = capsys.readouterr()
    assert "⚙" not in out
    assert err.count("(the model chose not to call get_weather; small models often answer directly)\n") == 2


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
