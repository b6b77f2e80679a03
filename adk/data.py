"""`Data`: pydantic's model methods on slotted dataclasses, for events and requests alike.

Validation and JSON stand at the boundaries (a stored row, a request), never inside a turn; each
class's `TypeAdapter` is built on first use, so importing adk loads no pydantic.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["Data", "made_on_read"]

_ADAPTERS: dict[type, Any] = {}


class Data:
    """pydantic's model methods on a dataclass: validation and JSON at the boundaries.

    The `TypeAdapter` of each class is built on first use, so importing adk loads no pydantic.
    """

    __slots__ = ()
    __pydantic_config__: ClassVar[Mapping[str, Any]] = {"extra": "forbid"}

    @classmethod
    def adapter(cls) -> TypeAdapter[Self]:
        """The class's pydantic `TypeAdapter` (built once)."""
        adapter = _ADAPTERS.get(cls)
        if adapter is None:
            from pydantic import TypeAdapter

            adapter = _ADAPTERS[cls] = TypeAdapter(cls)
        return adapter

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        """`obj` (a dict, as from JSON) checked and converted; `pydantic.ValidationError` if wrong."""
        return cls.adapter().validate_python(obj)

    @classmethod
    def model_validate_json(cls, data: str | bytes) -> Self:
        """JSON text checked and converted; `pydantic.ValidationError` if wrong."""
        return cls.adapter().validate_json(data)

    def model_dump(self, **options: Any) -> dict[str, Any]:
        """A dict of the fields, nested parts as dicts (pydantic's options: `mode`, `include`, ...)."""
        return self.adapter().dump_python(self, **options)  # type: ignore[no-any-return]

    def model_dump_json(self, **options: Any) -> str:
        """The JSON text (pydantic's options: `indent`, `include`, `exclude`, ...)."""
        return self.adapter().dump_json(self, **options).decode()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with the fields in `update` changed (not validated); deep copies nested parts."""
        made: Any = copy.deepcopy(self) if deep else self
        return dataclasses.replace(made, **(update or {}))  # type: ignore[no-any-return]


def made_on_read(cls: type, name: str, alias: str, make: Callable[[], object]) -> None:
    """Make `cls`'s field `name` on its first read (by `make`), when its slot holds None.

    An object that most instances would hold empty is then never made for them, and so never
    walked by the cyclic collector; reading gives each instance a value of its own, which a
    writer may change in place. The slot stays readable and settable as `alias`, at a plain
    slot's cost: code that sets None there, or reads it without making the value, names it.
    """
    slot = cls.__dict__[name]
    read, write = operator.attrgetter(alias), slot.__set__

    def made(instance: object) -> Any:
        value = read(instance)
        if value is None:
            value = make()
            write(instance, value)
        return value

    setattr(cls, alias, slot)
    setattr(cls, name, property(made, write, slot.__delete__))
