"""Adopt an existing fabric: which real device sits at which planned position, from wiring alone.

Input is an :class:`Observation` (reader-agnostic: observed devices and cables; build
one from any drift reader's :class:`~fabric_stack.drift.model.Snapshot` with
:func:`observation_from_snapshot`, or from a live source later). Output is an
:class:`AdoptResult`: names-file rows (planned → actual, with GUIDs/MACs learned) and,
per device class, what was placed, what could not be and why, and what contradicts
the plan.

How (compute fabric only; the plan's links are the only model of the wiring):

1. **Anchors.** A switch-to-switch cable joins port *x* of one switch to port *y* of
   another; the plan has few cables with that pair of port numbers (one per pod in a
   two-tier fabric: leaf uplink *u* lands on spine port ``slot × stride + ℓ + 1``, which
   says the leaf's rail and SU). Every cable votes for the planned devices it could be.
2. **Propagation.** Once a device is placed, each of its cables votes for the planned
   peer at that port: a placed leaf's downlink port *j* names server *j* of its SU, a
   placed spine's port names the leaf, and so on, until nothing changes.
3. **Majority.** A device is placed at the position most of its cables agree on (at
   least two, and at least half of its compute cables), so a few miswires do not move
   it: they are left to ``drift``. Two devices claiming one position: the one more
   cables agree on keeps it.

What the wiring says beyond the port map (each in its own module):

* **Rails** (:mod:`~fabric_stack.drift.adopt_rails`): a leaf's rail is the one most of
  its server cables' NICs serve, whatever the spine ports say; a vote for another rail
  counts for the same SU's leaf on the NICs' rail, and both the overruled port map and
  the dissenting hosts are reported as contradictions.
* **Access switches**: a switch reached on servers' storage / in-band / BMC ports (the
  plan's names for them) is placed from those ports, as leaves are from rail NICs.
* **Roles** (:mod:`~fabric_stack.drift.adopt_roles`): every switch's role and host group
  by hops from the hosts, also on a fabric no planned position fits.
* **Port map** (:mod:`~fabric_stack.drift.adopt_ports`): the site's switch-to-switch
  port numbering, learned from the placed cables, for drift.

Every placement carries a confidence (``high``: three quarters of its cables agree;
``medium``: a majority, or the NICs overruled the port map, or the only free leaf of
its rail) and what placed it.

Server ports are read as the plan's NIC names (``mlx5_3``); MLNX_OFED's ``HCA-N`` as
``mlx5_(N-1)`` (UNVERIFIED, see :func:`~fabric_stack.drift.identity.hca_to_ibdev`);
any other spelling (``ens3np0``) by its rank among the server's port names, which
the report flags as UNVERIFIED.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from fabric_stack.compat.pydantic_internals import trusted_instance
from fabric_stack.drift.adopt_hcas import group_factory_hcas, hca_note
from fabric_stack.drift.adopt_others import OtherHost, other_hosts
from fabric_stack.drift.adopt_placer import (
    adjacency,
    any_port_hosts,
    downlink_map,
    place,
    tiers,
)
from fabric_stack.drift.adopt_plan import (
    ACCESS_ROLES,
    TIER,
    PlanPorts,
    natural_key,
    port_keys,
)
from fabric_stack.drift.adopt_ports import PortMap, convention_note, learn_port_map
from fabric_stack.drift.adopt_rails import Adjacency, RailVote, nic_rails, rail_note
from fabric_stack.drift.adopt_roles import (
    Role,
    infer_roles,
    natural,
    wiring,
)
from fabric_stack.drift.adopt_shape import shape_note, site_shape
from fabric_stack.drift.observation import (
    Observation,
    ObservedDevice,
    observation_from_snapshot,
    short_name,
)
from fabric_stack.drift.shape_file import SiteShape
from fabric_stack.naming.site import SiteName, check_label
from fabric_stack.topology.build import FabricTopology

CLASSES = ("server", "manager", "leaf", "spine", "core", *ACCESS_ROLES)
"""Device classes the report counts (compute fabric, then the access switches)."""


@dataclass
class Unplaced:
    """A device that could not be placed, and why."""

    device: str
    role: str
    why: str


@dataclass
class AdoptResult:
    """Placements, names-file rows and the per-class report of one adopt run."""

    placed: dict[str, str] = field(default_factory=dict)
    """Observed device → planned name."""
    rows: list[SiteName] = field(default_factory=list)
    unplaced: list[Unplaced] = field(default_factory=list)
    contradictions: list[tuple[str, str, str]] = field(default_factory=list)
    """(class, device, what disagrees with the plan)."""
    planned: dict[str, int] = field(default_factory=dict)
    """Planned devices per class."""
    counts: dict[str, int] = field(default_factory=dict)
    """Placed devices per class."""
    notes: list[str] = field(default_factory=list)
    confidence: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Placed device → (high / medium / low, what placed it)."""
    roles: dict[str, Role] = field(default_factory=dict)
    """Every observed switch → its role from the wiring (placed or not)."""
    port_map: PortMap = field(default_factory=dict)
    """(site device, site port) → the plan's port number, where the site numbers otherwise."""
    others: list[OtherHost] = field(default_factory=list)
    """Login / controller / storage hosts on the compute fabric: known, not placed."""
    shape: SiteShape | None = None
    """The shape the wiring shows (rails, spines, cables per pair), with its evidence."""

    def to_json(self) -> dict[str, Any]:
        """JSON-compatible report."""
        seen = {p: d for d, p in self.placed.items()}
        return {
            "classes": {
                c: {
                    "planned": self.planned.get(c, 0),
                    "placed": self.counts.get(c, 0),
                    "unplaced": [
                        {"device": u.device, "why": u.why} for u in self.unplaced if u.role == c
                    ],
                    "contradictions": [
                        {"device": d, "what": w} for k, d, w in self.contradictions if k == c
                    ],
                }
                for c in CLASSES
            },
            "unplaced_other": [
                {"device": u.device, "why": u.why} for u in self.unplaced if u.role not in CLASSES
            ],
            "mapping": [
                {
                    "planned": r.planned,
                    "actual": r.actual,
                    "confidence": self.confidence.get(seen.get(r.planned, ""), ("", ""))[0],
                    "basis": self.confidence.get(seen.get(r.planned, ""), ("", ""))[1],
                }
                for r in self.rows
            ],
            "roles": [
                {
                    "device": r.device,
                    "role": r.role,
                    "rail": r.rail,
                    "group": r.group,
                    "basis": r.basis,
                }
                for r in sorted(self.roles.values(), key=lambda r: natural(r.device))
            ],
            "port_map": [
                {"device": d, "port": p, "planned_port": n}
                for (d, p), n in sorted(self.port_map.items())
            ],
            "other_hosts": [
                {"device": o.device, "leaf": o.leaf, "port": o.port, "why": o.why}
                for o in self.others
            ],
            "shape": None if self.shape is None else self.shape.model_dump(mode="json"),
            "notes": self.notes,
        }


def adopt(topo: FabricTopology, obs: Observation) -> AdoptResult:
    """Place every observed compute device on the plan ``topo`` (see the module docstring)."""
    plan = PlanPorts(topo)
    hcas = group_factory_hcas(obs)
    obs = hcas.obs
    keys, notes, adj = _keyed(obs, plan)
    if hcas.grouped:
        notes.append(hca_note(hcas))
    placer = place(obs, plan, adj)
    placed, why = placer.placed, placer.why
    res = AdoptResult(notes=notes)
    hosts = placer.servers | {n for n, d in obs.devices.items() if d.kind == "server"}
    # A fabric manager's (UFM / OpenSM host's) NIC is no rail: its cables cast no rail vote
    # in the report (they did not decide a rail either: one cable per plane).
    managers = {d for d, p in placed.items() if plan.role.get(p) == "manager"}
    rails = placer.rails
    if managers:
        leaves = {d for d, t in placer.tier.items() if t == 1}
        rails = nic_rails(adj, placer.servers - managers, plan.nic_rail, leaves, obs.inferred_nics)
    # Switches the plan's port names did not tier (another fabric's) are tiered by hops
    # over every cable; when there is none, the keyed wiring says it all (and is cheaper).
    tiered = placer.tier.keys() | placer.access.keys() | hosts
    whole = any(d not in tiered for d in obs.devices)
    res.roles = infer_roles(
        wiring(obs.cables) if whole else adj, hosts, placer.tier, placer.access, rails
    )
    if (shape := shape_note(plan, res.roles, obs)) is not None:
        res.notes.append(shape)
    res.shape = site_shape(plan, res.roles, obs)
    for d in topo.devices:
        if d.role in CLASSES:
            res.planned[d.role] = res.planned.get(d.role, 0) + 1
    res.others = other_hosts(obs, managers)
    others = {o.device for o in res.others}
    relabelled: list[tuple[str, str]] = []
    for dev in sorted(obs.devices.keys() - others):
        od = obs.devices[dev]
        p = placed.get(dev)
        role = (
            plan.role.get(p, "")
            if p
            else (placer.want(dev) if dev in adj else "")
            or ("server" if od.kind == "server" else "switch")
        )
        if p is None:
            said = hcas.why.get(dev) or (why.get(dev) if dev in adj else None)
            reason = _unplaced_why(dev, od.kind, said, dev in adj, topo, obs)
            known = res.roles.get(dev)
            if known is not None:
                role = role if role in CLASSES else known.role
                group = f"; hosts {known.group}" if known.group else ""
                reason = f"a {known.role} ({known.basis}{group}) but no planned position: {reason}"
            res.unplaced.append(Unplaced(dev, role, reason))
            continue
        actual, problem = site_label(dev, od.guids)
        if problem:
            res.unplaced.append(Unplaced(dev, role, f"placed at {p} but {problem}"))
            continue
        if actual != dev:
            relabelled.append((dev, actual))
        res.placed[dev] = p
        res.confidence[dev] = _with_hcas(placer.basis.get(dev, ("medium", "")), hcas.basis.get(dev))
        res.counts[role] = res.counts.get(role, 0) + 1
        # Values already checked: the name just above, GUIDs normalised by the reader.
        res.rows.append(
            trusted_instance(
                SiteName,
                {"planned": p, "actual": actual, "guids": tuple(od.guids), "macs": tuple(od.macs)},
            )
        )
    if relabelled:
        res.notes.append(
            f"{len(relabelled)} placed device(s) report no host name (e.g. {relabelled[0][0]!r}): "
            f"the names file calls them by their GUID ({relabelled[0][1]}), which drift binds"
        )
    res.rows.sort(key=lambda r: natural_key(r.planned))
    learned = learn_port_map(topo, obs, res.placed, keys, placer.tier)
    learned |= downlink_map(plan, obs, keys, res.placed, any_port_hosts(placer))
    # Drift sees a relabelled device by its names-file label (bound by its GUID).
    label = dict(relabelled)
    res.others = [replace(o, leaf=label.get(o.leaf, o.leaf)) for o in res.others]
    res.port_map = {(label.get(d, d), pt): n for (d, pt), n in learned.items()}
    if learned:
        # Judge the switches' cables in the site's numbering: what the map renumbers
        # is the site's convention, not a contradiction.
        adj = adjacency(obs, {k: learned.get(k, v) for k, v in keys.items()})
        switches = sum(1 for p in res.placed.values() if plan.role.get(p) in TIER)
        res.notes.append(convention_note(res.port_map, switches))
    res.contradictions = _contradictions(plan, adj, res.placed)
    res.contradictions += _rail_dissent(rails, res.placed, plan)
    res.contradictions += _overruled(plan, placer.overruled, res.placed)
    if placer.overruled:
        n_leaves = sum(1 for r in res.roles.values() if r.role == "leaf")
        res.notes.append(rail_note(len(placer.overruled), n_leaves))
    return res


def _keyed(obs: Observation, plan: PlanPorts) -> tuple[dict[Any, Any], list[str], Adjacency]:
    """(port keys, their notes, the keyed wiring) of ``obs``.

    Where the tiers number their ports otherwise (issue #43: per-tier models and speeds),
    each switch's labels are read again in its tier's numbering, the tiers known from the
    wiring keyed the first time."""
    keys, notes = port_keys(obs, plan)
    adj = adjacency(obs, keys)
    if len(set(plan.tier_scheme.values())) > 1:
        keys, notes = port_keys(obs, plan, tiers(obs, adj, plan.nic_names))
        adj = adjacency(obs, keys)
    return keys, notes, adj


def _unplaced_why(
    dev: str, kind: str, said: str | None, cabled: bool, topo: FabricTopology, obs: Observation
) -> str:
    """Why ``dev`` has no position: what the HCA grouping or the placer said, or none of its
    cables on a port the plan has; a fabric-manager host's beside the plan's manager seats."""
    if said:
        reason = said
    elif not cabled:
        reason = "no cable on a port the plan has (not a compute-fabric device?)"
    else:
        reason = "no placed neighbour to place it from"
    return manager_reason(dev, topo, obs, reason) if kind == "server" and "ufm" in dev else reason


def manager_reason(dev: str, topo: FabricTopology, obs: Observation, reason: str) -> str:
    """Why a host its name calls a fabric manager (``b11-p1-cufm-02``) has no manager
    position: where it is cabled against where the plan seats its managers."""
    seats = [
        f"{lk.a_device} on {lk.b_device} port {lk.b_port_number}"
        for lk in topo.links
        if lk.role == "manager_leaf"
    ]
    if not seats:
        return reason
    cabled = sorted(
        f"{b if a == dev else a} port {pb if a == dev else pa}"
        for a, pa, b, pb in obs.cables
        if dev in (a, b)
    )
    return (
        f"a fabric-manager host by its name, cabled to {', '.join(cabled) or 'nothing'}; the "
        f"plan seats its managers at {', '.join(seats)}: the wiring does not say which "
        f"position it holds ({reason})"
    )


def _overruled(
    plan: PlanPorts, overruled: dict[str, str], placed: dict[str, str]
) -> list[tuple[str, str, str]]:
    """Leaves placed on the rail their NICs say, against the plan's spine ports."""
    return [
        (
            "leaf",
            dev,
            f"the plan's spine ports say {said}, its NICs say rail "
            f"{plan.attrs[placed[dev]].rail}: placed as {placed[dev]} by its NICs",
        )
        for dev, said in sorted(overruled.items())
        if dev in placed
    ]


def _with_hcas(placed: tuple[str, str], grouped: tuple[str, str] | None) -> tuple[str, str]:
    """A placement's confidence, lowered to how its factory-named HCAs were grouped."""
    if grouped is None:
        return placed
    rank = {"low": 0, "medium": 1, "high": 2}
    level = min(placed[0], grouped[0], key=lambda c: rank.get(c, 1))
    return level, f"{placed[1]}; {grouped[1]}" if placed[1] else grouped[1]


def site_label(dev: str, guids: list[str]) -> tuple[str, str | None]:
    """(the names file's label for ``dev``, why it has none). A factory NodeDesc
    (``SwitchIB Mellanox Technologies``: unmanaged switches all say it) is no host name;
    its GUID names the device, so the label is made of it and drift binds it by the GUID."""
    problem = check_label(dev)
    if problem and guids:
        return guid_label(dev, guids[0]), None
    return dev, problem


def guid_label(name: str, guid: str) -> str:
    """A host-name label for a device that reports none: its description's first word and
    its GUID (``switchib-248a070301000001``)."""
    word = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-").split("-")[0][:20] or "ib"
    return f"{word}-{guid.lower().removeprefix('0x')}"


def _rail_dissent(
    rails: dict[str, RailVote], placed: dict[str, str], plan: PlanPorts
) -> list[tuple[str, str, str]]:
    """Leaves some of whose server cables come from another rail's NIC (majority kept)."""
    out: list[tuple[str, str, str]] = []
    for dev in sorted(rails, key=natural):
        rv = rails[dev]
        if not rv.dissent:
            continue
        where = f"placed as {placed[dev]}" if dev in placed else "not placed"
        head = f"rail {rv.rail[1]} by {rv.agree} of {rv.total} server cables"
        if not rv.strict:
            head = f"no rail has most of its {rv.total} server cables ({rv.rail[1]}: {rv.agree})"
        out.append(("leaf", dev, f"{head}; dissent: {rv.dissent_text()} ({where})"))
    return out


def _contradictions(
    plan: PlanPorts, adj: Adjacency, placed: dict[str, str]
) -> list[tuple[str, str, str]]:
    """Placed devices some of whose cables disagree with their position (left to drift)."""
    out: list[tuple[str, str, str]] = []
    for dev, p in sorted(placed.items()):
        d = plan.attrs[p]
        if d.role == "server":
            sus = sorted({plan.attrs[placed[x]].su for _, x, _ in adj[dev] if x in placed} - {0})
            if len(sus) > 1:
                out.append(
                    (
                        "server",
                        dev,
                        f"rails land on SUs {', '.join(map(str, sus))} "
                        f"(placed in SU {d.su} as {p})",
                    )
                )
            continue
        if d.role == "leaf":
            continue  # a leaf's rail dissent is read from its NICs (_rail_dissent)
        bad = sum(
            1 for k, x, pk in adj[dev] if x in placed and plan.peer.get((p, k)) != (placed[x], pk)
        )
        if bad:
            out.append(
                (
                    d.role,
                    dev,
                    f"{bad} of {len(adj[dev])} cables are not where the plan "
                    f"puts them (placed as {p})",
                )
            )
    return out


__all__ = [
    "ACCESS_ROLES",
    "CLASSES",
    "AdoptResult",
    "Observation",
    "ObservedDevice",
    "Unplaced",
    "adopt",
    "observation_from_snapshot",
    "short_name",
]
