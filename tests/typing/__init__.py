"""Files that mypy must accept, except the lines marked `# type: ignore[<code>]`, which it must reject.

They are type-checked (tests/test_typing.py runs mypy on them, with warn_unused_ignores, so an
ignore that is no longer needed fails), never run, and not collected by pytest.
"""
