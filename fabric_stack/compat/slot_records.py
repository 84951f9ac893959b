"""CPython's ``__class__`` assignment: build a frozen, slotted dataclass ~5× faster.

A frozen dataclass cannot set its own fields with plain attribute stores (its
``__setattr__`` refuses), so even :func:`fabric_stack.records.fast_init` pays a descriptor
call per field: ~1.5 µs for an 18-field :class:`~fabric_stack.topology.model.Link`, over a
second for the ~900k cables of a 131,072-GPU, four-plane plan (#43). :func:`positional_maker`
builds each instance as a *staging* class with the very same slots, which plain stores fill
at interpreter speed, and then assigns ``__class__`` to the real class. The result is an
ordinary instance of the class: same type, fields, equality, hash, repr and frozenness.

What this relies on (the language reference, "Data model: ``__class__`` assignment"; CPython
``object_set_class``): an object's class may be changed to another heap type of the same
layout, which two classes with the same ``__slots__`` on ``object`` have. :func:`positional_maker`
checks that once, when it is made, so a layout CPython does not accept fails there by name;
``tests/unit/test_compat_slot_records.py`` checks the result equals the class's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def positional_maker(cls: type[T]) -> Callable[..., T]:
    """A constructor of ``cls`` (a slotted dataclass on ``object`` without ``__post_init__``)
    taking every field positionally, in declaration order, defaults included: no keywords,
    no defaults, no checks beyond the argument count (for trusted hot loops only)."""
    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
        raise TypeError(f"positional_maker: {cls.__name__} is not a slotted dataclass")
    if hasattr(cls, "__post_init__") or cls.__bases__ != (object,):
        raise TypeError(f"positional_maker: {cls.__name__} has a __post_init__ or a base class")
    names = [f.name for f in dataclasses.fields(cls)]
    if tuple(names) != tuple(cls.__dict__["__slots__"]):
        raise TypeError(f"positional_maker: {cls.__name__}'s slots are not exactly its fields")
    source = (
        f"def __init__(self, {', '.join(names)}):\n"
        + "".join(f"    self.{n} = {n}\n" for n in names)
        + "    self.__class__ = _cls\n"
    )
    scope: dict[str, Any] = {"_cls": cls}
    exec(source, scope)  # generated from the class's own field names, nothing else
    staging = type(
        f"_Staging{cls.__name__}",
        (),
        {"__slots__": tuple(names), "__init__": scope["__init__"], "__module__": cls.__module__},
    )
    probe: Any = object.__new__(staging)
    probe.__class__ = cls  # raises TypeError here, once, if CPython refuses the layout
    return staging  # calling it returns an instance of ``cls``: __init__ swaps the class


__all__ = ["positional_maker"]
