"""The ``Fabric`` component: a FabricIntent as a tree of Pulumi resources.

Tree (types in brackets)::

    gpu-cluster                      [fabric-stack:index:Fabric]
    ├─ gpu-cluster                   [dynamic/fabric:Fabric]  summary record
    ├─ networks                      [fabric-stack:index:Networks]  Rail, Vlan
    ├─ spine-layer                   [fabric-stack:index:SpineLayer] spines, cores, spine uplinks
    └─ su1 … suN                     [fabric-stack:index:ScalableUnit]
       ├─ su1-r1-leaf … su1-oob-a1   [dynamic/fabric:Switch]
       ├─ su1-r1-leaf/downlinks …    [dynamic/fabric:CableBundle]   (or one Cable each)
       └─ su1-node01/nics …          [dynamic/fabric:RdmaNicGroup]  (or one RdmaNic each)

The component only translates records into resources: it never computes a
port map and never decides anything from an Output. Granularity ("bundle",
the default, or "cable") was chosen with ``bench/bench_preview.py``; see
docs/pulumi-stack.md ("Granularity") for the figures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Literal

import pulumi

from fabric_stack.intent.model import CableIntent, FabricIntent
from fabric_stack.intent.wire import RECORD_KEY, encode_cables, encode_nics, record_text

from .providers import Cable, CableBundle, Fabric, Rail, RdmaNic, RdmaNicGroup, Switch, Vlan

Granularity = Literal["bundle", "cable"]


def bundle_of(cable: CableIntent) -> tuple[str, str]:
    """(switch, side) whose bundle manages ``cable``: a leaf's downlinks, a leaf's uplinks …"""
    if cable.role in ("leaf_spine", "spine_core"):
        return cable.a_device, "uplinks"
    return cable.b_device, "downlinks"


def renamed(opts: pulumi.ResourceOptions, name: str, old: str) -> pulumi.ResourceOptions:
    """``opts`` plus an alias to ``old`` when the site renamed the resource (same parent).

    The engine then previews a renamed device as a rename (``[urn=…]``) and keeps the
    resource's state, instead of deleting the old resource and creating a new one.
    """
    if old == name:
        return opts
    return pulumi.ResourceOptions.merge(
        opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(name=old)])
    )


class FabricComponent(pulumi.ComponentResource):
    """All resources of one fabric, recorded in the inventory at ``inventory``."""

    def __init__(
        self,
        name: str,
        intent: FabricIntent,
        inventory: pulumi.Input[str],
        granularity: Granularity = "bundle",
        opts: pulumi.ResourceOptions | None = None,
        extras: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        super().__init__("fabric-stack:index:Fabric", name, {}, opts)
        stack = pulumi.get_stack()
        # Where the records are kept. One property (not two): the engine charges per property.
        self._base: dict[str, Any] = {"inventory": {"url": inventory, "stack": stack}}
        self._me = pulumi.ResourceOptions(parent=self)
        self._planned = intent.planned
        self._sus: dict[int, pulumi.ComponentResource] = {}
        self.resources: list[pulumi.CustomResource] = []
        """Every record resource created, in creation order."""
        # Config digests and allocations per switch ("" for the Fabric record): see
        # fabric_stack.artifacts.growth.device_records.
        self._extras = extras or {}
        self.summary = Fabric(
            intent.summary.name,
            self._with_base({**intent.summary.props(), **self._extras.get("", {})}),
            self._me,
        )
        self.resources.append(self.summary)
        self._add_networks(intent)
        parent_of = self._add_switches(intent)
        if granularity == "cable":
            self._add_cables_and_nics(intent, parent_of)
        else:
            self._add_bundles_and_groups(intent, parent_of)
        self.register_outputs({})

    def _with_base(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        # One property per record (see fabric_stack.intent.wire.RECORD_KEY for why).
        return {RECORD_KEY: record_text(fields), **self._base}

    def _was(self, device: str, rest: str = "") -> str:
        # The resource's name before the site renamed its device (see ``renamed``).
        return self._planned.get(device, device) + rest

    def _su_parent(self, su: int) -> pulumi.ResourceOptions:
        if su not in self._sus:
            self._sus[su] = pulumi.ComponentResource(
                "fabric-stack:index:ScalableUnit", f"su{su}", None, self._me
            )
        return pulumi.ResourceOptions(parent=self._sus[su])

    def _add_networks(self, intent: FabricIntent) -> None:
        nets = pulumi.ComponentResource("fabric-stack:index:Networks", "networks", None, self._me)
        in_nets = pulumi.ResourceOptions(parent=nets)
        for rail in intent.rails:
            self.resources.append(Rail(rail.name, self._with_base(rail.props()), in_nets))
        for vlan in intent.vlans:
            self.resources.append(Vlan(vlan.name, self._with_base(vlan.props()), in_nets))

    def _add_switches(self, intent: FabricIntent) -> dict[str, pulumi.ResourceOptions]:
        layer = pulumi.ComponentResource(
            "fabric-stack:index:SpineLayer", "spine-layer", None, self._me
        )
        in_layer = pulumi.ResourceOptions(parent=layer)
        parent_of: dict[str, pulumi.ResourceOptions] = {}
        for sw in intent.switches:
            opts_ = in_layer if sw.role in ("spine", "core") else self._su_parent(sw.su)
            parent_of[sw.name] = opts_
            fields = self._with_base({**sw.props(), **self._extras.get(sw.name, {})})
            self.resources.append(
                Switch(sw.name, fields, renamed(opts_, sw.name, self._was(sw.name)))
            )
        return parent_of

    def _add_cables_and_nics(
        self, intent: FabricIntent, parent_of: dict[str, pulumi.ResourceOptions]
    ) -> None:
        for cable in intent.cables:
            device, _ = bundle_of(cable)
            old = self._was(cable.a_device, cable.name[len(cable.a_device) :])
            opts_ = renamed(parent_of.get(device, self._me), cable.name, old)
            self.resources.append(Cable(cable.name, self._with_base(cable.props()), opts_))
        for nic in intent.nics:
            old = self._was(nic.node, nic.name[len(nic.node) :])
            opts_ = renamed(self._su_parent(nic.su), nic.name, old)
            self.resources.append(RdmaNic(nic.name, self._with_base(nic.props()), opts_))

    def _add_bundles_and_groups(
        self, intent: FabricIntent, parent_of: dict[str, pulumi.ResourceOptions]
    ) -> None:
        bundles: dict[tuple[str, str], list[CableIntent]] = defaultdict(list)
        for cable in intent.cables:
            bundles[bundle_of(cable)].append(cable)
        for (device, side), cables in bundles.items():
            bname = f"{device}/{side}"
            fields = {
                "name": bname,
                "device": device,
                "side": side,
                "role": cables[0].role,
                "count": len(cables),
                **encode_cables([c.props() for c in cables]),
            }
            opts_ = renamed(parent_of.get(device, self._me), bname, self._was(device, f"/{side}"))
            self.resources.append(CableBundle(bname, self._with_base(fields), opts_))
        groups: dict[str, list[Any]] = defaultdict(list)
        su_of: dict[str, int] = {}
        for nic in intent.nics:
            groups[nic.node].append(nic)
            su_of[nic.node] = nic.su
        for node, nics in groups.items():
            gname = f"{node}/nics"
            fields = {
                "name": gname,
                "node": node,
                "count": len(nics),
                **encode_nics([n.props() for n in nics]),
            }
            opts_ = renamed(self._su_parent(su_of[node]), gname, self._was(node, "/nics"))
            self.resources.append(RdmaNicGroup(gname, self._with_base(fields), opts_))
