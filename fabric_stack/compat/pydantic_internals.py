"""pydantic v2 internals: build a model instance from trusted values without validation.

``model_construct`` is public but costs ~10× more than setting the instance's slots
directly, which matters for ~100k cable records built from an already-validated plan.
This relies on a :class:`~pydantic.BaseModel` instance being exactly the four slots in
:data:`INSTANCE_SLOTS` (pydantic 2.x); ``tests/unit/test_compat.py`` checks that, and that a
trusted instance equals a validated one.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

INSTANCE_SLOTS: tuple[str, ...] = (
    "__dict__",
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
)
"""What a pydantic model instance holds (``BaseModel.__slots__``)."""

_DEFAULTS: dict[type, tuple[dict[str, Any], set[str]]] = {}
"""Per model class: its default field values and the names of all fields."""


def trusted_instance(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values`` (plus defaults), not validated.

    Defaults come from a per-class cache and the fields-set is shared between
    instances (it is never mutated: the records are frozen).
    """
    cache = _DEFAULTS.get(cls)
    if cache is None:
        defaults = {
            name: f.get_default(call_default_factory=True)
            for name, f in cls.model_fields.items()
            if not f.is_required()
        }
        cache = _DEFAULTS[cls] = (defaults, set(cls.model_fields))
    defaults, fields = cache
    obj = cls.__new__(cls)
    data = {**defaults, **values} if len(values) < len(fields) else values
    object.__setattr__(obj, "__dict__", data)
    object.__setattr__(obj, "__pydantic_fields_set__", fields)
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj
