"""``positional_maker``: the ``__class__``-swapping constructor makes the class's own instances."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric_stack.compat.slot_records import positional_maker
from fabric_stack.topology.model import Device, Link, Nic


@dataclass(frozen=True, slots=True)
class _Rec:
    a: str
    b: int = 3
    c: tuple[int, ...] = ()


_make = positional_maker(_Rec)


@given(st.text(), st.integers(), st.tuples(st.integers()))
def test_same_instance_as_the_constructor(a: str, b: int, c: tuple[int, ...]) -> None:
    made, plain = _make(a, b, c), _Rec(a, b, c)
    assert type(made) is _Rec
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    assert dataclasses.astuple(made) == dataclasses.astuple(plain)


def test_still_frozen_picklable_replaceable() -> None:
    x = _make("x", 1, (2,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.a = "y"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(x)) == x
    assert dataclasses.replace(x, b=9) == _Rec("x", 9, (2,))
    assert x != _Rec("x", 2, (2,))


def test_takes_every_field_and_nothing_else() -> None:
    with pytest.raises(TypeError):
        _make("x", 1)  # defaults are not filled in: a hot loop passes every field
    with pytest.raises(TypeError):
        _make("x", 1, (), "extra")


def test_refuses_classes_it_cannot_build() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: str

    @dataclass(frozen=True, slots=True, weakref_slot=True)
    class WeakRef:
        a: str

    @dataclass(frozen=True, slots=True)
    class PostInit:
        a: str

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class Child(_Rec):
        d: int = 0

    for cls in (NoSlots, WeakRef, PostInit, Child):
        with pytest.raises(TypeError, match="positional_maker"):
            positional_maker(cls)


_TEXT = st.text(max_size=8)
_INT = st.integers(0, 1 << 20)
_KINDS: dict[type, Any] = {str: _TEXT, int: _INT, "str": _TEXT, "int": _INT}


@pytest.mark.parametrize("cls", [Link, Nic, Device])
@given(data=st.data())
def test_topology_records_built_fast_equal_their_own(cls: Any, data: st.DataObject) -> None:
    """The builder's hot records (``build_parts.new_link`` …) are the records readers expect."""
    values = []
    for f in dataclasses.fields(cls):
        kind = _KINDS.get(f.type)
        values.append(data.draw(kind if kind is not None else st.tuples(_INT)))
    made, plain = positional_maker(cls)(*values), cls(*values)
    assert type(made) is cls and made == plain and hash(made) == hash(plain)
    if cls is Link:
        assert made.key() == plain.key()


def test_leaves_the_class_itself_alone() -> None:
    """Making a maker neither replaces the class's ``__init__`` nor its defaults."""

    @dataclass(frozen=True, slots=True)
    class Other:
        a: list[int] = field(default_factory=list)

    before = Other.__dict__["__init__"]
    made = positional_maker(Other)([1])
    assert Other.__dict__["__init__"] is before and Other().a == [] and made == Other([1])
