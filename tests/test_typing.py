"""Run mypy on tests/typing, so that the typing checks run with the test suite."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_mypy_accepts_and_rejects_what_tests_typing_says() -> None:
    # --warn-unused-ignores again here, so that each `# type: ignore[code]` must be needed
    # whatever mypy.ini says: a line marked as rejected that mypy accepts fails the test.
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--warn-unused-ignores", "tests/typing"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in ")
