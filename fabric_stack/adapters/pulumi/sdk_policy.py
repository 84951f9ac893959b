"""pulumi-policy internals: the unknown-checking proxies around resource props.

The policy SDK hands a policy its resource props wrapped in ``_DictProxy`` /
``_ListProxy``, which raise ``UnknownValueError`` on every access to a value unknown
during preview. Walking a large record through them costs a check per value, so the
pack unwraps them once: it relies on the proxies' classes and on ``proxy["__target"]``
returning the wrapped container (pulumi-policy 1.x, ``pulumi_policy/proxy.py``).
``tests/unit/test_compat.py`` checks both.
"""

from __future__ import annotations

from typing import Any

from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
    _DictProxy,
    _ListProxy,
)

__all__ = ["UNKNOWN_VALUES", "DictProxy", "ListProxy", "UnknownValueError", "target"]

DictProxy: type = _DictProxy
"""The SDK's dict proxy class (compare with ``type(v) is DictProxy``: it runs per value)."""

ListProxy: type = _ListProxy
"""The SDK's list proxy class."""

UNKNOWN_VALUES: frozenset[str] = frozenset(
    {
        UNKNOWN_ARCHIVE_VALUE,
        UNKNOWN_ARRAY_VALUE,
        UNKNOWN_ASSET_VALUE,
        UNKNOWN_BOOLEAN_VALUE,
        UNKNOWN_NUMBER_VALUE,
        UNKNOWN_OBJECT_VALUE,
        UNKNOWN_STRING_VALUE,
    }
)
"""The sentinel strings the engine sends for values unknown during preview."""


def target(proxy: Any) -> Any:
    """The container a proxy wraps, without per-value unknown checks."""
    return proxy["__target"]
