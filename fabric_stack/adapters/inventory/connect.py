"""Open the inventory a URL names: the one place that knows every store implementation.

``netbox+http(s)://…`` is a :class:`~fabric_stack.adapters.inventory.netbox.store.NetBoxStore`;
``sqlite:///…``, ``postgresql://…`` (or a bare ``*.db`` path) an
:class:`~fabric_stack.adapters.inventory.sql.store.SqlStore`, read-only when the command
only looks. Anything else is one InventoryError line naming the URLs that work.
"""

from __future__ import annotations

from fabric_stack.adapters.inventory.protocol import InventoryStore
from fabric_stack.adapters.inventory.readonly import ReadOnlyStore
from fabric_stack.adapters.inventory.sql.store import SqlStore, check_sql_url

NETBOX_SCHEME = "netbox+"
"""URL prefix of a NetBox inventory (``netbox+https://HOST``)."""


def _netbox(url: str, read_only: bool = False) -> InventoryStore:
    # Imported on use: a stack on SQLite never loads the NetBox client.
    from fabric_stack.adapters.inventory.netbox.store import open_netbox

    return open_netbox(url, read_only=read_only)


def open_store(url: str) -> InventoryStore:
    """Open the inventory at ``url`` (``sqlite:///path.db``, ``postgresql://…`` or ``netbox+https://…``)."""
    if url.startswith(NETBOX_SCHEME):
        return _netbox(url)
    check_sql_url(url)
    return SqlStore(url)


def open_read_only(url: str) -> InventoryStore:
    """Open the inventory at ``url`` for reading only (same URLs and messages as ``open_store``).

    SQL databases are opened read-only (:class:`ReadOnlyStore`); a NetBox store is the
    ordinary one, as reads never write to NetBox (nor create the branch it names).
    """
    if url.startswith(NETBOX_SCHEME):
        return _netbox(url, read_only=True)
    check_sql_url(url)
    return ReadOnlyStore(url)


__all__ = ["NETBOX_SCHEME", "open_read_only", "open_store"]
