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
the default, or "cable") was chosen with ``bench/bench_preview.py``; see the
README for the figures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Literal

import pulumi

from fabric_stack.intent import CableIntent, FabricIntent
from fabric_stack.wire import RECORD_KEY, encode_cables, encode_nics, record_text

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
    ) -> None:
        super().__init__("fabric-stack:index:Fabric", name, {}, opts)
        stack = pulumi.get_stack()
        # Where the records are kept. One property (not two): the engine charges per property.
        base: dict[str, Any] = {"inventory": {"url": inventory, "stack": stack}}

        def with_base(fields: Mapping[str, Any]) -> dict[str, Any]:
            # One property per record (see fabric_stack.wire.RECORD_KEY for why).
            return {RECORD_KEY: record_text(fields), **base}

        me = pulumi.ResourceOptions(parent=self)
        planned = intent.planned

        def was(device: str, rest: str = "") -> str:
            # The resource's name before the site renamed its device (see ``renamed``).
            return planned.get(device, device) + rest

        self.resources: list[pulumi.CustomResource] = []
        """Every record resource created, in creation order."""
        self.summary = Fabric(intent.summary.name, with_base(intent.summary.props()), me)
        self.resources.append(self.summary)

        nets = pulumi.ComponentResource("fabric-stack:index:Networks", "networks", None, me)
        in_nets = pulumi.ResourceOptions(parent=nets)
        for rail in intent.rails:
            self.resources.append(Rail(rail.name, with_base(rail.props()), in_nets))
        for vlan in intent.vlans:
            self.resources.append(Vlan(vlan.name, with_base(vlan.props()), in_nets))

        layer = pulumi.ComponentResource("fabric-stack:index:SpineLayer", "spine-layer", None, me)
        in_layer = pulumi.ResourceOptions(parent=layer)
        sus: dict[int, pulumi.ComponentResource] = {}

        def su_parent(su: int) -> pulumi.ResourceOptions:
            if su not in sus:
                sus[su] = pulumi.ComponentResource(
                    "fabric-stack:index:ScalableUnit", f"su{su}", None, me
                )
            return pulumi.ResourceOptions(parent=sus[su])

        parent_of: dict[str, pulumi.ResourceOptions] = {}
        for sw in intent.switches:
            opts_ = in_layer if sw.role in ("spine", "core") else su_parent(sw.su)
            parent_of[sw.name] = opts_
            self.resources.append(
                Switch(sw.name, with_base(sw.props()), renamed(opts_, sw.name, was(sw.name)))
            )

        if granularity == "cable":
            for cable in intent.cables:
                device, _ = bundle_of(cable)
                old = was(cable.a_device, cable.name[len(cable.a_device) :])
                opts_ = renamed(parent_of.get(device, me), cable.name, old)
                self.resources.append(Cable(cable.name, with_base(cable.props()), opts_))
            for nic in intent.nics:
                old = was(nic.node, nic.name[len(nic.node) :])
                opts_ = renamed(su_parent(nic.su), nic.name, old)
                self.resources.append(RdmaNic(nic.name, with_base(nic.props()), opts_))
        else:
            bundles: dict[tuple[str, str], list[CableIntent]] = defaultdict(list)
            for cable in intent.cables:
                bundles[bundle_of(cable)].append(cable)
            for (device, side), cables in bundles.items():
                bname = f"{device}/{side}"
                bundle = CableBundle(
                    bname,
                    with_base(
                        {
                            "name": bname,
                            "device": device,
                            "side": side,
                            "role": cables[0].role,
                            "count": len(cables),
                            **encode_cables([c.props() for c in cables]),
                        }
                    ),
                    renamed(parent_of.get(device, me), bname, was(device, f"/{side}")),
                )
                self.resources.append(bundle)
            groups: dict[str, list[Any]] = defaultdict(list)
            su_of: dict[str, int] = {}
            for nic in intent.nics:
                groups[nic.node].append(nic)
                su_of[nic.node] = nic.su
            for node, nics in groups.items():
                gname = f"{node}/nics"
                group = RdmaNicGroup(
                    gname,
                    with_base(
                        {
                            "name": gname,
                            "node": node,
                            "count": len(nics),
                            **encode_nics([n.props() for n in nics]),
                        }
                    ),
                    renamed(su_parent(su_of[node]), gname, was(node, "/nics")),
                )
                self.resources.append(group)

        self.register_outputs({})
