"""The inventory the Pulumi stack writes (SQLite or PostgreSQL), through its store API.

``store.list_records("Cable")`` gives dicts with the CableIntent fields plus
``status``; ``"Switch"`` gives SwitchIntent fields plus ``status``. Cables
may also come grouped (a record with a ``cables`` list), as the stack may
group them per leaf. Every planned cable and switch is in scope; attribute
edits (status, optics, medium, speeds) become findings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from fabric_stack.drift.model import CABLE_ATTRS, DeviceSeen, Endpoint, ObservedLink, Snapshot
from fabric_stack.errors import InventoryError
from fabric_stack.text.redact import mask_url, mask_urls

SWITCH_ATTRS = ("role", "model", "rail", "su", "plane", "status")
"""Switch record fields compared with the plan."""


class RecordStore(Protocol):
    """What the reader needs of an inventory store."""

    def list_records(self, kind: str) -> list[dict[str, Any]]:
        """Every record of ``kind`` ("Cable", "Switch", …) as a dict."""
        ...


class InventoryReader:
    """Read cables and switches from an inventory store (or a URL opened with ``open_store``).

    ``stack`` keeps the records of one Pulumi stack when the store holds several
    (matched exactly or as the last part of ``org/project/stack``).
    """

    source = "inventory"

    def __init__(self, store: RecordStore | str, stack: str | None = None) -> None:
        self.store = store
        self.stack = stack
        self.origin = mask_url(store) if isinstance(store, str) else type(store).__name__

    def _stack_filter(
        self, cables: list[dict[str, Any]], switches: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        stacks = sorted({str(r["stack"]) for r in (*cables, *switches) if r.get("stack")})
        if self.stack is None:
            if len(stacks) > 1:
                raise InventoryError(
                    f"{self.origin}: the inventory holds several stacks ({', '.join(stacks)}); "
                    "choose one with --stack"
                )
            return cables, switches
        want = self.stack

        def keep(r: dict[str, Any]) -> bool:
            st = str(r.get("stack") or "")
            return not st or st == want or st.endswith("/" + want)

        cables = [r for r in cables if keep(r)]
        switches = [r for r in switches if keep(r)]
        if stacks and not cables and not switches:
            raise InventoryError(
                f"{self.origin}: no records of stack {want!r} (it holds {', '.join(stacks)})"
            )
        return cables, switches

    def _open(self) -> RecordStore:
        if not isinstance(self.store, str):
            return self.store
        try:
            from fabric_stack.adapters.inventory.connect import open_read_only
        except ImportError:
            raise InventoryError(
                f"{self.store}: the inventory store (fabric_stack.adapters.inventory) "
                "is not available"
            ) from None
        store: RecordStore = open_read_only(self.store)
        return store

    def load(self) -> Snapshot:
        """Read every Cable and Switch record; a record without its endpoints raises."""
        store = self._open()
        snap = Snapshot(source=self.source, origin=str(self.origin), physical=False)
        try:
            cables = list(store.list_records("Cable"))
            switches = list(store.list_records("Switch"))
        except InventoryError:
            raise
        except Exception as exc:  # the store's driver errors (sqlite3, psycopg) vary
            raise InventoryError(
                f"{self.origin}: cannot read the inventory: {mask_urls(str(exc))}"
            ) from None
        cables, switches = self._stack_filter(cables, switches)
        flat: list[tuple[str, Mapping[str, Any]]] = []
        for i, rec in enumerate(cables):
            if isinstance(rec.get("cables"), list):
                flat.extend((f"Cable[{i}].cables[{j}]", c) for j, c in enumerate(rec["cables"]))
            else:
                flat.append((f"Cable[{i}]", rec))
        for where, cable in flat:
            missing = [k for k in ("a_device", "a_port", "b_device", "b_port") if not cable.get(k)]
            if missing:
                raise InventoryError(
                    f"{self.origin}: {where} ({cable.get('name', '?')}) has no {missing[0]}"
                )
            a = Endpoint(str(cable["a_device"]), str(cable["a_port"]))
            b = Endpoint(str(cable["b_device"]), str(cable["b_port"]))
            attrs = {k: cable[k] for k in CABLE_ATTRS if k in cable}
            snap.links.append(
                ObservedLink(
                    a,
                    b,
                    state=str(cable.get("status") or ""),
                    where=f"{self.origin}#{cable.get('name', where)}",
                    attrs=attrs,
                )
            )
            for d in (a.device, b.device):
                snap.devices.setdefault(
                    d, DeviceSeen(d, where=f"{self.origin}#{cable.get('name', where)}")
                )
        for i, rec in enumerate(switches):
            name = rec.get("name")
            if not name:
                raise InventoryError(f"{self.origin}: Switch[{i}] has no name")
            snap.devices[str(name)] = DeviceSeen(
                str(name),
                "switch",
                f"{self.origin}#Switch/{name}",
                attrs={k: rec[k] for k in SWITCH_ATTRS if k in rec and rec[k] not in (None, "")},
            )
        return snap
