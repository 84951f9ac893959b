"""``fast_init``: the faster constructor behaves exactly as the dataclass's own."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from fabric_stack.drift.model import Endpoint, ObservedLink
from fabric_stack.records import fast_init
from fabric_stack.topology.model import Device, Link, Nic


@dataclass(frozen=True, slots=True)
class _Plain:
    a: str
    b: int = 3
    c: tuple[int, ...] = ()


@fast_init
@dataclass(frozen=True, slots=True)
class _Fast:
    a: str
    b: int = 3
    c: tuple[int, ...] = ()


def test_same_signature_defaults_and_values() -> None:
    assert str(inspect.signature(_Fast)) == str(inspect.signature(_Plain))
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        (("x",), {}),
        (("x", 5), {}),
        (("x",), {"c": (1,)}),
        ((), {"a": "y"}),
    ]
    for args, kwargs in cases:
        fast, plain = _Fast(*args, **kwargs), _Plain(*args, **kwargs)
        assert dataclasses.astuple(fast) == dataclasses.astuple(plain)
        assert repr(fast).replace("_Fast", "_Plain") == repr(plain)


def test_still_frozen_hashable_picklable_replaceable() -> None:
    x = _Fast("x", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.a = "y"  # type: ignore[misc]
    assert x == _Fast("x", 1) and hash(x) == hash(_Fast("x", 1)) and x != _Fast("x", 2)
    assert pickle.loads(pickle.dumps(x)) == x
    assert dataclasses.replace(x, b=9) == _Fast("x", 9)


def test_wrong_arguments_fail_as_before() -> None:
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        _Fast()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        _Fast("x", z=1)  # type: ignore[call-arg]


def test_refuses_classes_it_cannot_speed_up() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: str

    @dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    for cls in (NoSlots, Factory):
        with pytest.raises(TypeError, match="fast_init"):
            fast_init(cls)


@pytest.mark.parametrize("cls", [Endpoint, ObservedLink, Device, Nic, Link])
def test_hot_records_use_it_with_their_declared_fields(cls: Any) -> None:
    """The records big plans and snapshots make by the 100k keep their field order."""
    names = [f.name for f in dataclasses.fields(cls)]
    assert list(inspect.signature(cls).parameters) == names
    init: Any = cls.__dict__["__init__"]
    assert init.__qualname__ == f"{cls.__qualname__}.__init__"
    assert init.__code__.co_names[0].startswith("_set_")
