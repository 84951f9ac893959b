"""Everything that talks to something outside the process: Pulumi, inventories, discovery.

``pulumi`` (engine, backends, previews), ``inventory`` (SQLite, PostgreSQL, NetBox),
``discovery`` (the drift sources' readers). Layer 4; adapters do not import each other
except where ``tests/unit/test_layers.py`` says why."""
