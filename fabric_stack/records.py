"""Faster construction of the frozen, slotted dataclasses big plans make by the 100,000.

A frozen dataclass's generated ``__init__`` sets each field with ``object.__setattr__``,
which looks the attribute up on the type every time. A 32,768-GPU drift builds ~115k
planned links, ~200k observed endpoints and ~100k observed links, so that lookup is a
measurable part of the run (``bench/bench_drift.py``; ``bench/README.md`` has the
figures). :func:`fast_init` replaces the generated ``__init__`` with one that calls each
slot's own descriptor directly: same signature, same defaults, same frozenness (the
class's ``__setattr__`` still refuses assignment), same equality and hash.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """``cls`` (a frozen, slotted dataclass without factories or ``__post_init__``) with an
    ``__init__`` that sets its slots through their descriptors. Apply above ``@dataclass``."""
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
        raise TypeError(f"fast_init: {cls.__name__} is not a slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"fast_init: {cls.__name__} has a __post_init__")
    scope: dict[str, Any] = {}
    args: list[str] = []
    body: list[str] = []
    for f in params:
        if f.default_factory is not dataclasses.MISSING or not f.init:
            raise TypeError(f"fast_init: {cls.__name__}.{f.name} needs the generated __init__")
        scope[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        if f.default is dataclasses.MISSING:
            args.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            args.append(f"{f.name}=_default_{f.name}")
        body.append(f"    _set_{f.name}(self, {f.name})")
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body or ["    pass"])
    exec(source, scope)  # generated from the class's own field names, nothing else
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = dict(cls.__init__.__annotations__)  # the same signature shown
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


__all__ = ["fast_init"]
