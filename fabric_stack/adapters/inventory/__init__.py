"""The inventory the Pulumi stack records into: SQLite (embedded default), PostgreSQL or NetBox.

``open_store(url)`` returns an :class:`InventoryStore` (the protocol every
implementation follows); every method is one transaction, so a failed or killed
operation never leaves half a bundle of rows behind. ``open_read_only(url)`` is
for commands that only look.
"""

from __future__ import annotations

from fabric_stack.adapters.inventory.connect import open_read_only, open_store
from fabric_stack.adapters.inventory.protocol import InventoryStore
from fabric_stack.text.redact import mask_url

__all__ = ["InventoryStore", "mask_url", "open_read_only", "open_store"]
