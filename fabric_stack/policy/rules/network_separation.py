"""``network-separation``.

Compute, storage, in-band and OOB networks kept apart (switches, VLANs, ports).

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter

from fabric_stack.intent.model import FabricIntent, SwitchIntent, VlanIntent
from fabric_stack.policy._common import (
    NETWORK_ORDER,
    cfg_or_default,
    is_compute_switch,
    level_of,
    plural,
    some,
)
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import EVERY_FABRIC, Rule

RULE_ID = "network-separation"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class NetworkSeparationConfig(RuleConfig):
    """Settings of ``network-separation`` (level only)."""


def _vlan_field(network: str) -> str:
    return "networks.compute.rail_vlans" if network == "compute" else f"networks.{network}.vlan"


@dataclass
class _Scope:
    """What the five separation checks share about one intent."""

    intent: FabricIntent
    lvl: ViolationLevel
    switches: dict[str, SwitchIntent]
    compute_list: list[str]
    """Compute switches in report order."""
    compute_sw: set[str]
    order: dict[str, int]
    vlan_net: dict[int, str] = field(default_factory=dict)
    """Owner network of each VLAN id (filled by :func:`_shared_vlan_ids`)."""
    reported: dict[str, set[str]] = field(default_factory=dict)
    """Networks already reported per compute switch (by :func:`_access_vlans_on_compute`)."""


def check_network_separation(
    intent: FabricIntent, config: NetworkSeparationConfig | None = None
) -> Iterator[Violation]:
    """Compute, storage, in-band and OOB kept apart: own VLAN ids, nothing but compute on
    compute switches, compute NICs only on compute leaves.

    The checks, in order: :func:`_shared_vlan_ids`, :func:`_access_vlans_on_compute`,
    :func:`_foreign_networks_on_compute`, :func:`_access_ports_on_compute`,
    :func:`_nics_off_compute_leaves`.
    """
    cfg = cfg_or_default(config, NetworkSeparationConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None:
        return
    # A list for report order, a set for lookups.
    compute_list = [sw.name for sw in intent.switches if is_compute_switch(sw)]
    scope = _Scope(
        intent=intent,
        lvl=lvl,
        switches={sw.name: sw for sw in intent.switches},
        compute_list=compute_list,
        compute_sw=set(compute_list),
        order={n: i for i, n in enumerate(NETWORK_ORDER)},
    )
    yield from _shared_vlan_ids(scope)
    yield from _access_vlans_on_compute(scope)
    yield from _foreign_networks_on_compute(scope)
    yield from _access_ports_on_compute(scope)
    yield from _nics_off_compute_leaves(scope)


def _shared_vlan_ids(scope: _Scope) -> Iterator[Violation]:
    """1. A VLAN id belongs to one network."""
    intent, lvl, rid, order, vlan_net = (
        scope.intent,
        scope.lvl,
        RULE_ID,
        scope.order,
        scope.vlan_net,
    )
    by_id: dict[int, list[VlanIntent]] = {}
    for v in intent.vlans:
        if v.vlan:
            by_id.setdefault(v.vlan, []).append(v)
    used = set(by_id)
    for vid, recs in by_id.items():
        recs = sorted(recs, key=lambda r: order.get(r.network, 99))
        owner = recs[0]
        vlan_net[vid] = owner.network
        for rec in recs[1:]:
            if rec.network == owner.network:
                continue
            free = next((x for x in range(vid + 1, 4095) if x not in used), 0)
            yield Violation(
                rule=rid,
                level=lvl,
                kind="Vlan",
                resource=rec.name,
                measured=f"VLAN {vid} on {owner.network} and {rec.network}",
                allowed="one network per VLAN id",
                message=(
                    f"{rec.name}: VLAN {vid} is also {owner.network}'s VLAN ({owner.name}); "
                    f"every network needs its own VLAN id — change {_vlan_field(rec.network)} "
                    f"or {_vlan_field(owner.network)} (e.g. {free} is free)"
                ),
                fix=f"set {_vlan_field(rec.network)} to an id no other network uses, e.g. {free}",
            )


def _access_vlans_on_compute(scope: _Scope) -> Iterator[Violation]:
    """2. No storage/management VLAN carried by compute switches (one violation per VLAN)."""
    intent, lvl, rid, compute_sw, reported = (
        scope.intent,
        scope.lvl,
        RULE_ID,
        scope.compute_sw,
        scope.reported,
    )
    for v in intent.vlans:
        if v.network == "compute":
            continue
        on = [name for name in v.carriers if name in compute_sw]
        if not on:
            continue
        for name in on:
            reported.setdefault(name, set()).add(v.network)
        yield Violation(
            rule=rid,
            level=lvl,
            kind="Vlan",
            resource=v.name,
            measured=f"on {plural(len(on), 'compute switch', 'compute switches')}",
            allowed="dedicated (non-compute) switches",
            message=(
                f"{v.name}: {v.network} VLAN {v.vlan} is carried by "
                f"{plural(len(on), 'compute-fabric switch', 'compute-fabric switches')} "
                f"({some(on)}); compute switches carry only compute traffic — set "
                f"networks.{v.network}.attach: dedicated"
            ),
            fix=(
                f"give {v.network} its own switches (networks.{v.network}.attach: dedicated) "
                "so it cannot starve the collectives"
            ),
        )


def _foreign_networks_on_compute(scope: _Scope) -> Iterator[Violation]:
    """3. Per compute switch: any other network configured on it."""
    lvl, rid, switches, order = scope.lvl, RULE_ID, scope.switches, scope.order
    compute_list, vlan_net, reported = scope.compute_list, scope.vlan_net, scope.reported
    for name in compute_list:
        sw = switches[name]
        foreign = {n for n in sw.networks_carried if n != "compute"}
        foreign |= {vlan_net[vid] for vid in sw.vlans if vlan_net.get(vid, "compute") != "compute"}
        foreign -= reported.get(name, set())
        if not foreign:
            continue
        nets = sorted(foreign, key=lambda n: order.get(n, 99))
        yield Violation(
            rule=rid,
            level=lvl,
            kind="Switch",
            resource=name,
            measured=f"carries compute + {' + '.join(nets)}",
            allowed="compute only",
            message=(
                f"{name}: carries {', '.join(nets)} on a compute-fabric {sw.role}; compute "
                f"switches carry only compute traffic — move {', '.join(nets)} to "
                f"{'its' if len(nets) == 1 else 'their'} own switches"
            ),
            fix=f"set networks.{nets[0]}.attach: dedicated and remove its VLAN from {name}",
        )


def _access_ports_on_compute(scope: _Scope) -> Iterator[Violation]:
    """4. No storage/management port on a compute switch."""
    intent, lvl, rid, compute_sw = scope.intent, scope.lvl, RULE_ID, scope.compute_sw
    for c in intent.cables:
        if c.network == "compute":
            continue
        hit = (
            c.b_device
            if c.b_device in compute_sw
            else c.a_device
            if c.a_device in compute_sw
            else ""
        )
        if not hit:
            continue
        port = c.b_port if hit == c.b_device else c.a_port
        yield Violation(
            rule=rid,
            level=lvl,
            kind="Cable",
            resource=c.name,
            measured=f"{c.network} cable on {hit} {port}",
            allowed="compute cables only",
            message=(
                f"{c.name}: {c.network} port cabled to compute-fabric switch {hit} port {port}; "
                f"compute switches carry only compute traffic — move it to a {c.network} switch"
            ),
            fix=f"re-cable {c.a_device} {c.a_port} to the SU's {c.network} access switch",
        )


def _nics_off_compute_leaves(scope: _Scope) -> Iterator[Violation]:
    """5. Compute NICs only on compute leaves."""
    intent, lvl, rid, switches = scope.intent, scope.lvl, RULE_ID, scope.switches
    # Judged per distinct leaf name, the NICs walked only when one is off (~524k NICs on
    # 4,096 leaves at 131k GPUs with four planes, #43).
    off = {n for n in set(map(_LEAF, intent.nics)) if not _is_compute_leaf(switches.get(n))}
    if not off:
        return
    for nic in intent.nics:
        if nic.leaf not in off:
            continue
        leaf = switches.get(nic.leaf)
        what = (
            f"a {leaf.network} {leaf.role} switch"
            if leaf is not None
            else "no switch of this fabric"
        )
        yield Violation(
            rule=rid,
            level=lvl,
            kind="RdmaNic",
            resource=nic.name,
            measured=f"cabled to {nic.leaf}",
            allowed="a compute-fabric leaf",
            message=(
                f"{nic.name}: compute NIC cabled to {nic.leaf}, {what}; compute NICs land on "
                f"compute leaves only — move it to its SU's rail-{nic.rail} leaf"
            ),
            fix=f"cable {nic.node} {nic.nic} to its SU's rail-{nic.rail} leaf",
        )


_LEAF = attrgetter("leaf")


def _is_compute_leaf(sw: SwitchIntent | None) -> bool:
    """True for a leaf of the compute fabric (where a compute NIC belongs)."""
    return sw is not None and sw.network == "compute" and sw.role == "leaf"


RULE = Rule(
    id=RULE_ID,
    title="Separate compute, storage and management networks",
    description=(
        "Compute, storage, in-band and OOB use distinct switches or VLANs; no VLAN id is "
        "shared between networks; compute switches carry no storage or management VLAN "
        "or port; compute NICs land only on compute leaves."
    ),
    default_level="mandatory",
    remediation="Give each network its own VLAN id and storage/management their own "
    "switches (networks.<name>.attach: dedicated).",
    config_model=NetworkSeparationConfig,
    applies=EVERY_FABRIC,
    check_cross=check_network_separation,
    config_field="network_separation",
    config_description="Compute, storage, in-band and OOB kept apart.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
