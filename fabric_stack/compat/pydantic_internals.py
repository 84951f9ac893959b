"""pydantic v2 internals: build a model instance from trusted values without validation.

``model_construct`` is public but costs ~10× more than setting the instance's slots
directly, which matters for ~100k cable records built from an already-validated plan.
This relies on a :class:`~pydantic.BaseModel` instance being exactly the four slots in
:data:`INSTANCE_SLOTS` (pydantic 2.x), whose descriptors ``BaseModel`` itself defines
(:func:`trusted_bulk` calls them directly); ``tests/unit/test_compat.py`` checks that, and
that a trusted instance equals a validated one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any, TypeVar, cast

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

INSTANCE_SLOTS: tuple[str, ...] = (
    "__dict__",
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
)
"""What a pydantic model instance holds (``BaseModel.__slots__``)."""

_SLOT_SETTERS = tuple(BaseModel.__dict__[slot].__set__ for slot in INSTANCE_SLOTS)
"""Each slot's own descriptor setter, in :data:`INSTANCE_SLOTS` order: called directly, it
skips the attribute lookup on the type that ``object.__setattr__`` does per call."""

_DEFAULTS: dict[type, tuple[dict[str, Any], set[str]]] = {}
"""Per model class: its default field values and the names of all fields."""


def _defaults_of(cls: type[BaseModel]) -> tuple[dict[str, Any], set[str]]:
    """(default values, all field names) of ``cls``, worked out once per class."""
    cache = _DEFAULTS.get(cls)
    if cache is None:
        defaults = {
            name: f.get_default(call_default_factory=True)
            for name, f in cls.model_fields.items()
            if not f.is_required()
        }
        cache = _DEFAULTS[cls] = (defaults, set(cls.model_fields))
    return cache


def trusted_instance(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values`` (plus defaults), not validated.

    Defaults come from a per-class cache and the fields-set is shared between
    instances (it is never mutated: the records are frozen).
    """
    return trusted_instances(cls, (values,))[0]


def trusted_instances(cls: type[M], rows: Iterable[dict[str, Any]]) -> list[M]:
    """:func:`trusted_instance` of each of ``rows``, in one loop (the class's defaults
    looked up once: ~1M cable records at 131k GPUs, #43)."""
    defaults, fields = _defaults_of(cls)
    n_fields = len(fields)
    new, put = cls.__new__, object.__setattr__
    out: list[M] = []
    append = out.append
    for values in rows:
        obj = new(cls)
        put(obj, "__dict__", {**defaults, **values} if len(values) < n_fields else values)
        put(obj, "__pydantic_fields_set__", fields)
        put(obj, "__pydantic_extra__", None)
        put(obj, "__pydantic_private__", None)
        append(obj)
    return out


def trusted_bulk(cls: type[M], field_dicts: Sequence[dict[str, Any]]) -> tuple[M, ...]:
    """An instance of ``cls`` per dict of ``field_dicts``, each holding that very dict as
    its ``__dict__`` (not copied, not validated).

    Each dict must hold every field of ``cls`` (no defaults are filled in; the first dict's
    keys are checked). For record counts in the millions (#43): one slot at a time over
    all instances through ``map``, so the loop runs in C, ~2x cheaper than
    :func:`trusted_instances`' Python loop.
    """
    fields = _defaults_of(cls)[1]
    if field_dicts and field_dicts[0].keys() != fields:
        raise ValueError(f"trusted_bulk: {cls.__name__} rows must hold exactly its fields")
    out = cast(tuple[M, ...], tuple(map(object.__new__, repeat(cls, len(field_dicts)))))
    set_dict, set_fields_set, set_extra, set_private = _SLOT_SETTERS
    deque(map(set_dict, out, field_dicts), maxlen=0)
    deque(map(set_fields_set, out, repeat(fields)), maxlen=0)
    deque(map(set_extra, out, repeat(None)), maxlen=0)
    deque(map(set_private, out, repeat(None)), maxlen=0)
    return out
