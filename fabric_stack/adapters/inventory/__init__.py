"""The inventory the Pulumi stack records into: SQLite (embedded default) or PostgreSQL.

``open_store(url)`` returns an :class:`InventoryStore`; every method is one
transaction, so a failed or killed operation never leaves half a bundle of
rows behind.
"""

from __future__ import annotations

from fabric_stack.adapters.inventory.store import InventoryStore, open_store
from fabric_stack.text.redact import mask_url

__all__ = ["InventoryStore", "mask_url", "open_store"]
