"""The inventory store API, whichever system keeps the records.

Its users are the Pulumi dynamic providers (``components/providers.py``: put, get,
delete, the bundle calls), the inventory's drift reader and ``fabric-stack
inventory`` (``list_records``), and ``inventory upgrade`` (``counts``). Two
implementations, neither importing the other:

* :class:`~fabric_stack.adapters.inventory.sql.store.SqlStore`, SQLite or PostgreSQL
  (:class:`~fabric_stack.adapters.inventory.readonly.ReadOnlyStore` for commands that
  only look);
* :class:`~fabric_stack.adapters.inventory.netbox.store.NetBoxStore`, real NetBox objects.

:mod:`fabric_stack.adapters.inventory.connect` picks one by URL. Row-level export and
import (:mod:`~fabric_stack.adapters.inventory.sql.transfer`) are SQL-only and take a
``SqlStore``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol


class InventoryStore(Protocol):
    """Records of one or more stacks, keyed by (stack, kind, name); each call one transaction.

    ``kind`` is the intent record kind (Switch, Cable, RdmaNic, Rail, Vlan, Fabric);
    ``bundle`` names the resource that manages a group of records (a leaf's cables).
    An implementation may subclass this protocol and share its ``__init__``.
    """

    url: str
    """Where the records are (``sqlite:///…``, ``postgresql://…``, ``netbox+https://…``);
    may hold a password or token: mask it before printing."""
    dialect: str
    """``sqlite``, ``postgresql`` or ``netbox``."""

    def __init__(self, url: str) -> None:
        self.url = url

    def put(
        self,
        stack: str,
        kind: str,
        name: str,
        props: Mapping[str, Any],
        *,
        bundle: str = "",
        status: str = "planned",
    ) -> None:
        """Insert or replace one record."""
        ...

    def put_many(
        self,
        stack: str,
        kind: str,
        records: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        bundle: str = "",
        status: str = "planned",
    ) -> None:
        """Insert or replace many records (others of the bundle untouched)."""
        ...

    def replace_bundle(
        self,
        stack: str,
        kind: str,
        bundle: str,
        records: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        status: str = "planned",
    ) -> None:
        """Make ``bundle`` hold exactly ``records``: upsert them, delete the bundle's others."""
        ...

    def delete(self, stack: str, kind: str, name: str, *, unbundled_only: bool = False) -> None:
        """Remove one record (no error when it is already gone); ``unbundled_only``: leave it
        when a bundle now holds it."""
        ...

    def delete_bundle(self, stack: str, kind: str, bundle: str) -> None:
        """Remove every record of a bundle."""
        ...

    def get(self, stack: str, kind: str, name: str) -> dict[str, Any] | None:
        """One record's props (with ``status``), or None when absent."""
        ...

    def get_bundle(self, stack: str, kind: str, bundle: str) -> list[dict[str, Any]]:
        """Records of a bundle, ordered by name, each with ``name`` and ``status``."""
        ...

    def list_records(self, kind: str, stack: str | None = None) -> list[dict[str, Any]]:
        """All records of ``kind`` (optionally of one stack), with name, status, stack, bundle."""
        ...

    def counts(self, stack: str | None = None) -> dict[str, int]:
        """Records per kind."""
        ...


__all__ = ["InventoryStore"]
