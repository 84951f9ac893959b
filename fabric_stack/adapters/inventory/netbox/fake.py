"""An in-memory NetBox with the client's interface (:class:`~.client.NetBoxApi`), for fast
unit tests; the tests against a real NetBox (``-m netbox``) are the proof."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import Query


class FakeNetBox:
    """In-memory NetBox for unit tests: ids, ``name``/``slug``/``id``/``cf_*`` filters, bulk ops."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[int, dict[str, Any]]] = {}
        self._next = 1
        self.requests = 0

    def _table(self, endpoint: str) -> dict[int, dict[str, Any]]:
        return self.tables.setdefault(endpoint.strip("/"), {})

    @staticmethod
    def _matches(obj: Mapping[str, Any], key: str, want: list[str]) -> bool:
        if key.startswith("cf_"):
            value = (obj.get("custom_fields") or {}).get(key[3:])
        elif key.endswith("_id") and key not in obj:  # assigned_object_id is a field
            ref = obj.get(key[:-3])
            value = ref.get("id") if isinstance(ref, Mapping) else ref
        else:
            value = obj.get(key)
        return str(value) in want

    def select(self, endpoint: str, query: Query | None = None) -> list[dict[str, Any]]:
        """Objects matching every filter of ``query`` (a list value matches any of its items)."""
        self.requests += 1
        filters = {
            k: [str(x) for x in (v if isinstance(v, list | tuple) else [v])]
            for k, v in (query or {}).items()
            if k not in ("limit", "brief", "fields")
        }
        return [
            json.loads(json.dumps(o))
            for o in self._table(endpoint).values()
            if all(self._matches(o, k, w) for k, w in filters.items())
        ]

    def count(self, endpoint: str, query: Query | None = None) -> int:
        """How many objects match."""
        return len(self.select(endpoint, query))

    def create(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Store copies with fresh ids."""
        self.requests += 1
        out = []
        for obj in objs:
            stored = {**json.loads(json.dumps(obj)), "id": self._next}
            self._next += 1
            self._table(endpoint)[stored["id"]] = stored
            out.append(stored)
        return out

    def update(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Merge fields into stored objects (custom fields merge key by key, as NetBox does)."""
        self.requests += 1
        table = self._table(endpoint)
        for obj in objs:
            cur = table[int(obj["id"])]
            for k, v in obj.items():
                if k == "custom_fields":
                    cur["custom_fields"] = {**(cur.get("custom_fields") or {}), **v}
                else:
                    cur[k] = json.loads(json.dumps(v))
        return [table[int(o["id"])] for o in objs]

    def delete(self, endpoint: str, ids: Iterable[int]) -> None:
        """Drop objects (missing ids ignored)."""
        self.requests += 1
        table = self._table(endpoint)
        for n in ids:
            table.pop(int(n), None)


__all__ = ["FakeNetBox"]
