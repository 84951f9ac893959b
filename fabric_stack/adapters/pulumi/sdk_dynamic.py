"""Pulumi dynamic-provider internals: provider serialization and the resource type token.

fabric-stack's dynamic resources serialize each provider class once (not once per
resource, as :class:`pulumi.dynamic.Resource` does) and register the resource directly.
That relies on three things the SDK does not publish (pulumi 3.x,
``pulumi/dynamic/dynamic.py``), all checked by ``tests/unit/test_compat.py``:

* :data:`PROVIDER_KEY` — the input that carries the serialized provider (``__provider``);
* :func:`serialize_provider` — the SDK's own (dill) serializer;
* ``_resource_type_name`` — what ``Resource.__init_subclass__(module=…, name=…)`` sets;
  the type token ``pulumi-python:dynamic/<module>:<name>`` is part of every URN, so a
  change here would replace every resource of every stack.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi import dynamic
from pulumi.dynamic.dynamic import PROVIDER_KEY, serialize_provider

__all__ = ["PROVIDER_KEY", "register_dynamic", "serialized_provider", "type_token"]

_SERIALIZED: dict[str, str] = {}


def serialized_provider(provider_cls: type[dynamic.ResourceProvider]) -> str:
    """The SDK's serialization of a fresh ``provider_cls()``, cached per class.

    Providers are stateless, so one serialization serves every resource; the SDK would
    otherwise dill-pickle the provider again for each.
    """
    key = f"{provider_cls.__module__}.{provider_cls.__qualname__}"
    if key not in _SERIALIZED:
        _SERIALIZED[key] = str(serialize_provider(provider_cls()))
    return _SERIALIZED[key]


def type_token(resource_cls: type[dynamic.Resource]) -> str:
    """``pulumi-python:dynamic/<module>:<name>``: the type token (and URN part) of a class."""
    return f"pulumi-python:{resource_cls._resource_type_name}"


def register_dynamic(
    resource: dynamic.Resource,
    provider_cls: type[dynamic.ResourceProvider],
    name: str,
    props: dict[str, Any],
    opts: pulumi.ResourceOptions | None,
) -> None:
    """Register ``resource`` as :class:`pulumi.dynamic.Resource` would, with a cached provider."""
    props = {**props, PROVIDER_KEY: serialized_provider(provider_cls)}
    pulumi.CustomResource.__init__(resource, type_token(type(resource)), name, props, opts)
