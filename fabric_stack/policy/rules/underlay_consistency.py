"""``underlay-consistency``.

The routed underlay of a RoCE/Ethernet fabric holds together. Checks, over an
:class:`~fabric_stack.underlay.plan.UnderlayPlan`:

* every fabric link has both ends addressed (/31, in one /31) or both unnumbered;
* no address is used twice (loopbacks, link ends, gateways, host ports), no
  router-id twice;
* ASNs follow the plan: every leaf its own ASN, spines of one pod/plane one,
  cores of a plane one, all within the private 4-byte range from ``asn_base``;
* every rail block is originated by exactly one leaf;
* every host address lies in its leaf's block.

:func:`check_underlay` is pure over a plan (the negative tests hand it broken
plans); the rule's cross check derives the plan from the intent's spec (the
same pipeline `check` and the pack run) and judges it, first by its address
extents (:func:`proved_consistent`) and only when they leave doubt address by
address.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from ipaddress import IPv4Address, IPv4Network, ip_interface
from socket import AF_INET, inet_pton

from fabric_stack.intent.model import FabricIntent
from fabric_stack.pipeline import topology_of
from fabric_stack.policy._common import cfg_or_default, level_of
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import Rule, on_fabrics
from fabric_stack.spec.underlay import PRIVATE_ASN_LAST
from fabric_stack.topology.build import FabricTopology
from fabric_stack.underlay.extents import UnderlayExtents, spans_disjoint, underlay_extents
from fabric_stack.underlay.plan import UnderlayPlan, plan_underlay

RULE_ID = "underlay-consistency"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class UnderlayConsistencyConfig(RuleConfig):
    """Settings of ``underlay-consistency`` (only the enforcement level)."""


APPLIES = on_fabrics("roce", "ethernet", otherwise="the compute fabric is {fabric}: no IP underlay")
"""Only IP fabrics have an underlay."""


def _v(lvl: ViolationLevel, kind: str, res: str, measured: str, allowed: str) -> Violation:
    fix = "re-plan the underlay from the spec (fabric-stack render frr) instead of editing it"
    return Violation(
        rule=RULE_ID, level=lvl, kind=kind, resource=res, measured=measured, allowed=allowed,
        message=f"{res}: {measured} (allowed: {allowed}) — {fix}", fix=fix,
    )  # fmt: skip


def _links(plan: UnderlayPlan, lvl: ViolationLevel) -> Iterator[Violation]:
    for lk in plan.links:
        a, b = lk.a_address, lk.b_address
        if (a is None) != (b is None):
            yield _v(lvl, "Cable", lk.link_id, "one end unnumbered, one addressed",
                     "both ends unnumbered or both in one /31")  # fmt: skip
        elif a and b and ip_interface(f"{a}/31").network != ip_interface(f"{b}/31").network:
            yield _v(lvl, "Cable", lk.link_id, f"ends {a} and {b} in different /31s", "one /31")


def _addresses(plan: UnderlayPlan) -> Iterator[tuple[str, str, str, str]]:
    """Every address of the plan with its owner's name in three parts, in plan order:
    (address, device, separator, what): ``leaf1 loopback``, ``node1:eth0``."""
    for s in plan.switches.values():
        yield s.loopback, s.name, " ", "loopback"
    for lk in plan.links:
        if lk.a_address:
            yield lk.a_address, lk.a_device, " ", lk.link_id
        if lk.b_address:
            yield lk.b_address, lk.b_device, " ", lk.link_id
    for h in plan.hosts:
        yield h.address, h.server, ":", h.nic


def _duplicates(plan: UnderlayPlan, lvl: ViolationLevel) -> Iterator[Violation]:
    # Counted first, owners named only for the addresses used twice: naming every owner
    # of ~1.5M addresses at 131k GPUs cost seconds (#43).
    used = Counter(a for a, _, _, _ in _addresses(plan))
    owners: dict[str, list[str]] = {a: [] for a, n in used.items() if n > 1}
    if owners:
        for addr, dev, sep, what in _addresses(plan):
            if addr in owners:
                owners[addr].append(f"{dev}{sep}{what}")
    for addr, who in owners.items():
        used_by = f"address {addr} used by {', '.join(who[:4])}"
        yield _v(lvl, "Switch", who[0].split()[0], used_by, "one owner per address")
    rids = Counter(s.router_id for s in plan.switches.values())
    for s in plan.switches.values():
        if rids[s.router_id] > 1:
            yield _v(lvl, "Switch", s.name, f"router-id {s.router_id} shared", "unique router-ids")


def _asns(plan: UnderlayPlan, lvl: ViolationLevel) -> Iterator[Violation]:
    leaves = Counter(s.asn for s in plan.switches.values() if s.role == "leaf")
    upper = {s.asn for s in plan.switches.values() if s.role != "leaf"}
    lo = plan.settings.asn_base
    for s in plan.switches.values():
        if not lo <= s.asn <= PRIVATE_ASN_LAST:
            yield _v(lvl, "Switch", s.name, f"ASN {s.asn}", f"{lo}-{PRIVATE_ASN_LAST}")
        elif s.role == "leaf" and (leaves[s.asn] > 1 or s.asn in upper):
            yield _v(lvl, "Switch", s.name, f"leaf ASN {s.asn} shared", "a unique ASN per leaf")


def _ip_int(address: str) -> int:
    """``int(IPv4Address(address))``, through the C parser (a million host addresses at
    131k GPUs); anything it refuses goes to IPv4Address, which raises as before."""
    try:
        return int.from_bytes(inet_pton(AF_INET, address), "big")
    except OSError:
        return int(IPv4Address(address))


def _blocks(plan: UnderlayPlan, lvl: ViolationLevel) -> Iterator[Violation]:
    origin = Counter(b.subnet for b in plan.blocks)
    for b in plan.blocks:
        if origin[b.subnet] > 1:
            yield _v(lvl, "Switch", b.leaf, f"rail block {b.subnet} originated "
                     f"{origin[b.subnet]} times", "exactly one leaf per block")  # fmt: skip
    if not plan.hosts:
        return
    # Each leaf's blocks as (first, last) address integers, grouped in one pass (a scan of
    # every block per block was quadratic: 4,096 leaves at 131k GPUs, #43).
    nets: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for x in plan.blocks:
        n = IPv4Network(x.subnet)
        nets[x.leaf].append((int(n.network_address), int(n.broadcast_address)))
    for h in plan.hosts:
        ip = _ip_int(h.address)
        ranges = nets.get(h.leaf, [])
        if len(ranges) == 1:  # the common case, without a generator per host
            inside = ranges[0][0] <= ip <= ranges[0][1]
        else:
            inside = any(lo <= ip <= hi for lo, hi in ranges)
        if not inside:
            yield _v(lvl, "RdmaNic", f"{h.server}:{h.nic}", f"{h.address} outside {h.leaf}'s "
                     "rail block", "an address in its leaf's block")  # fmt: skip


def check_underlay(plan: UnderlayPlan, lvl: ViolationLevel = "mandatory") -> Iterator[Violation]:
    """Every inconsistency of one underlay plan."""
    yield from _links(plan, lvl)
    yield from _duplicates(plan, lvl)
    yield from _asns(plan, lvl)
    yield from _blocks(plan, lvl)


def check_underlay_consistency(
    intent: FabricIntent, config: UnderlayConsistencyConfig | None = None
) -> Iterator[Violation]:
    """The rule's cross check: plan the underlay from the intent's spec and judge it."""
    cfg = cfg_or_default(config, UnderlayConsistencyConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None or APPLIES(intent):
        return
    yield from judge_topology(topology_of(intent.spec), lvl)


def judge_topology(topo: FabricTopology, lvl: ViolationLevel) -> Iterator[Violation]:
    """:func:`check_underlay` of ``plan_underlay(topo)``, without planning every address
    when the address extents prove there is nothing to report (the clean case, #43)."""
    if proved_consistent(underlay_extents(topo)):
        return
    yield from check_underlay(plan_underlay(topo), lvl)


def proved_consistent(ext: UnderlayExtents) -> bool:
    """True only when :func:`check_underlay` of the full plan is bound to find nothing.

    Switches and blocks (a few thousand) are judged as records, exactly; the ~1M host
    addresses and link ends by their spans (:mod:`fabric_stack.underlay.extents`): spans
    pairwise disjoint, each without a repeat and inside its block, /31 pairs aligned. Any
    doubt answers False and the caller judges the full plan, so a fault is reported with
    the same violations either way.
    """
    records = UnderlayPlan(ext.settings, ext.switches, (), ext.blocks, (), 0)
    if next(check_underlay(records), None) is not None:
        return False
    return ext.p2p_aligned and spans_disjoint(ext.spans)


RULE = Rule(
    id=RULE_ID,
    title="Routed underlay consistency",
    description=(
        "RoCE/Ethernet: fabric links both ends addressed or unnumbered, no duplicate address or "
        "router-id, ASNs per the RFC 7938 plan, each rail block originated once, host addresses "
        "in their leaf's block."
    ),
    default_level="mandatory",
    remediation="Re-plan the underlay from the spec (underlay.* pools) instead of editing it.",
    config_model=UnderlayConsistencyConfig,
    applies=APPLIES,
    check_cross=check_underlay_consistency,
    reads=("Fabric",),
    config_field="underlay",
    config_description="Routed underlay: addressing, router-ids, ASNs, rail blocks consistent.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
