"""The Pulumi providers' CRUD against a real PostgreSQL inventory.

The SQLite half and the helpers are in ``tests/unit/test_inventory_providers.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from fabric_stack.adapters.inventory import open_store
from tests.unit.test_inventory_providers import _crud
from tests.unit.test_inventory_providers import intent as intent  # the fixture


@pytest.mark.postgres
def test_provider_crud_postgresql(pg_url: str, intent: Any) -> None:
    _crud(pg_url, intent)
    store = open_store(pg_url)
    assert store.counts(stack="test") == {}
