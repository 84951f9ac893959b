"""The SQL inventory: SQLite (embedded default) or PostgreSQL, one table of fabric records.

:mod:`.store` holds :class:`~.store.SqlStore` (connections, the record calls), :mod:`.schema`
the versioned schema and its migrations, :mod:`.transfer` the row-level export and import.
The read-only variant is :class:`~fabric_stack.adapters.inventory.readonly.ReadOnlyStore`.
"""
