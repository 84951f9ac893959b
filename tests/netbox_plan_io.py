"""Write a whole plan into a NetBox inventory store the way `pulumi up`'s resources do,
without Pulumi: the Fabric record first, then rails, VLANs, switches, cable bundles, NIC
groups (the unit tests on the fake NetBox and the real-NetBox tests share it)."""

from __future__ import annotations

from typing import Any

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore
from fabric_stack.intent.model import FabricIntent


def intent_of(**spec: Any) -> FabricIntent:
    """The intent of ``validate_spec(**spec)``."""
    return derive_intent(build_topology(size_fabric(validate_spec(**spec))))


def bundle(cable: Any) -> str:
    """The bundle a cable's resource manages (as components.fabric.bundle_of names it)."""
    if cable.role in ("leaf_spine", "spine_core"):
        return f"{cable.a_device}/uplinks"
    return f"{cable.b_device}/downlinks"


def write_plan(store: NetBoxStore, stack: str, intent: FabricIntent) -> None:
    """Every record of ``intent`` into ``store`` under ``stack``."""
    store.put(stack, "Fabric", intent.summary.name, intent.summary.props())
    store.put_many(stack, "Rail", [(r.name, r.props()) for r in intent.rails])
    store.put_many(stack, "Vlan", [(v.name, v.props()) for v in intent.vlans])
    store.put_many(stack, "Switch", [(s.name, s.props()) for s in intent.switches])
    bundles: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for c in intent.cables:
        bundles.setdefault(bundle(c), []).append((c.name, c.props()))
    for name, cables in sorted(bundles.items()):
        store.replace_bundle(stack, "Cable", name, cables)
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for n in intent.nics:
        groups.setdefault(n.node, []).append((n.name, n.props()))
    for node, nics in sorted(groups.items()):
        store.replace_bundle(stack, "RdmaNic", f"{node}/nics", nics)
