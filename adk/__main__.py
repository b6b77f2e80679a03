"""`python -m adk` and the `adk` console script."""

from adk.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
