"""The public surface: `adk.__all__` is complete and sorted."""

import adk


def test_all_is_sorted() -> None:
    assert adk.__all__ == sorted(adk.__all__)


def test_all_is_complete() -> None:
    public = {name for name in vars(adk) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(adk, name)).__name__ == "module"}
    assert set(adk.__all__) == public - modules


def test_every_name_in_all_exists() -> None:
    for name in adk.__all__:
        assert hasattr(adk, name), name
