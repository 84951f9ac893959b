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

Server ports are read as the plan's NIC names (``mlx5_3``); MLNX_OFED's ``HCA-N`` as
``mlx5_(N-1)`` (UNVERIFIED, see :func:`~fabric_stack.drift.identity.hca_to_ibdev`);
any other spelling (``ens3np0``) by its rank among the server's port names, which
the report flags as UNVERIFIED.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..site_names import SiteName, check_label
from ..topology import COMPUTE_ROLES, FabricTopology
from .identity import hca_to_ibdev, normalize_guid, switch_port_number, unquote
from .model import Snapshot
from .plan import port_schemes

CLASSES = ("server", "leaf", "spine", "core")
"""Device classes the report counts (compute fabric)."""

_MF0 = re.compile(r"^MF0;([^:]+):")
_NUM = re.compile(r"(\d+)")


@dataclass(slots=True)
class ObservedDevice:
    """A device the fabric reports: its name, kind (server/switch/''), GUIDs and MACs."""

    name: str
    kind: str = ""
    guids: list[str] = field(default_factory=list)
    macs: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Observation:
    """What a source saw, independent of the source: devices and cables (device, port)."""

    source: str
    origin: str
    devices: dict[str, ObservedDevice] = field(default_factory=dict)
    cables: list[tuple[str, str, str, str]] = field(default_factory=list)


def short_name(raw: str) -> str:
    """The host name in a raw device name: MLNX-OS NodeDesc and FQDN stripped, lower case."""
    s = unquote(raw)
    if m := _MF0.match(s):
        s = m.group(1)
    s = s.strip()
    if "." in s and not s.replace(".", "").isdigit():
        s = s.split(".", 1)[0]
    return s.lower()


def observation_from_snapshot(snap: Snapshot) -> Observation:
    """An :class:`Observation` of a drift reader's snapshot (names shortened, GUIDs kept)."""
    obs = Observation(snap.source, snap.origin)
    for raw, seen in snap.devices.items():
        name = short_name(raw)
        dev = obs.devices.setdefault(name, ObservedDevice(name))
        dev.kind = dev.kind or (seen.kind if seen.kind in ("server", "switch") else "")
        for key in ("guid", "hca_guids"):
            val = seen.attrs.get(key)
            for g in val if isinstance(val, list) else [val] if val else []:
                dev.guids.append(normalize_guid(str(g)))
        mac = seen.attrs.get("chassis_mac")
        if mac:
            dev.macs.append(str(mac))
    for link in snap.links:
        a, b = short_name(link.a.device), short_name(link.b.device)
        for name in (a, b):
            obs.devices.setdefault(name, ObservedDevice(name))
        obs.cables.append((a, unquote(link.a.port), b, unquote(link.b.port)))
    return obs


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

    def to_json(self) -> dict[str, Any]:
        """JSON-compatible report."""
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
            "mapping": [{"planned": r.planned, "actual": r.actual} for r in self.rows],
            "notes": self.notes,
        }


class _Plan:
    """The plan's compute wiring keyed by port: (planned device, port key) → peer."""

    def __init__(self, topo: FabricTopology) -> None:
        self.role = {d.planned_name: d.role for d in topo.devices}
        self.attrs = {d.planned_name: d for d in topo.devices}
        back = {d.name: d.planned_name for d in topo.devices}
        self.schemes = {back[k]: v for k, v in port_schemes(topo).items()}
        self.peer: dict[tuple[str, Any], tuple[str, Any]] = {}
        self.sig: dict[tuple[int, int], list[tuple[str, str]]] = {}
        self.nic_names: set[str] = set()
        for link in topo.links:
            if link.role not in COMPUTE_ROLES:
                continue
            a, b = back[link.a_device], back[link.b_device]
            ak: Any = link.a_port if link.role == "node_leaf" else link.a_port_number
            self.peer[(a, ak)] = (b, link.b_port_number)
            self.peer[(b, link.b_port_number)] = (a, ak)
            if link.role == "node_leaf":
                self.nic_names.add(link.a_port)
            else:
                self.sig.setdefault((link.a_port_number, link.b_port_number), []).append((a, b))
        compute = [v for k, v in self.schemes.items() if self.role.get(k) in CLASSES]
        self.ppc = max((s.ports_per_cage for s in compute), default=1)
        """Logical ports per cage of the compute switches (how their port labels count)."""


def _port_keys(obs: Observation, plan: _Plan) -> tuple[dict[tuple[str, str], Any], list[str]]:
    """Each observed (device, port) → the plan's port key: a number or a NIC name."""
    notes: list[str] = []
    servers = {n for n, d in obs.devices.items() if d.kind == "server"}
    for a, pa, b, pb in obs.cables:
        for dev, port in ((a, pa), (b, pb)):
            if obs.devices[dev].kind == "" and (port in plan.nic_names or hca_to_ibdev(port)):
                servers.add(dev)
    keys: dict[tuple[str, str], Any] = {}
    odd: dict[str, set[str]] = {}
    for a, pa, b, pb in obs.cables:
        for dev, port in ((a, pa), (b, pb)):
            if dev in servers:
                ib = port if port in plan.nic_names else hca_to_ibdev(port)
                if ib in plan.nic_names:
                    keys[(dev, port)] = ib
                else:
                    odd.setdefault(dev, set()).add(port)
            else:
                n = switch_port_number(
                    port.split("/")[-1] if port.startswith("U") else port, plan.ppc
                )
                if n is not None:
                    keys[(dev, port)] = n
    nics = sorted(plan.nic_names, key=_natural)
    ranked = 0
    for dev, ports in odd.items():
        if len(ports) <= len(nics):
            for port, nic in zip(sorted(ports, key=_natural), nics, strict=False):
                keys[(dev, port)] = nic
                ranked += 1
    if ranked:
        notes.append(
            f"{ranked} server port name(s) are not NIC names (e.g. ens3np0): read by their rank "
            "among the server's ports (UNVERIFIED: give the plan's NIC names in the source)"
        )
    if any(hca_to_ibdev(p) for (_, p) in keys if isinstance(p, str)):
        notes.append("MLNX_OFED HCA-N ports read as mlx5_(N-1) (UNVERIFIED)")
    for dev in servers:
        obs.devices[dev].kind = "server"
    return keys, notes


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in _NUM.split(text)]


_CAP = 64
"""Skip a port-pair signature shared by more planned cables than this (no information)."""

Adjacency = dict[str, list[tuple[Any, str, Any]]]


def _adjacency(obs: Observation, keys: dict[tuple[str, str], Any]) -> Adjacency:
    adj: Adjacency = {}
    for a, pa, b, pb in obs.cables:
        ka, kb = keys.get((a, pa)), keys.get((b, pb))
        if ka is None or kb is None or a == b:
            continue
        adj.setdefault(a, []).append((ka, b, kb))
        adj.setdefault(b, []).append((kb, a, ka))
    return adj


def _anchors(obs: Observation, plan: _Plan, adj: Adjacency) -> dict[str, Counter[str]]:
    """Step 1: votes of switch-to-switch cables by their pair of port numbers."""
    out: dict[str, Counter[str]] = {}
    for dev, links in adj.items():
        if obs.devices[dev].kind == "server":
            continue
        c: Counter[str] = Counter()
        for k, peer, pk in links:
            if obs.devices[peer].kind == "server" or not isinstance(k, int):
                continue
            mine = plan.sig.get((k, pk))
            if mine and len(mine) <= _CAP:
                c.update({a for a, _ in mine})
            theirs = plan.sig.get((pk, k))
            if theirs and len(theirs) <= _CAP:
                c.update({b for _, b in theirs})
        if c:
            out[dev] = c
    return out


def _votes(
    dev: str, adj: Adjacency, plan: _Plan, placed: dict[str, str], anchor: Counter[str] | None
) -> tuple[Counter[str], int]:
    """(votes per planned position, cables that voted) for an unplaced device."""
    c: Counter[str] = Counter(anchor or {})
    voters = max(anchor.values()) if anchor else 0
    for _, peer, pk in adj[dev]:
        p = placed.get(peer)
        if p is None:
            continue
        q = plan.peer.get((p, pk))
        if q is not None:
            c[q[0]] += 1
        voters += 1
    return c, voters


def _place(obs: Observation, plan: _Plan, adj: Adjacency) -> tuple[dict[str, str], dict[str, str]]:
    """Steps 2-3: propagate and place by majority. Returns (placements, why not)."""
    anchors = _anchors(obs, plan, adj)
    placed: dict[str, str] = {}
    taken: dict[str, str] = {}
    why: dict[str, str] = {}
    for _ in range(16):
        offers: list[tuple[int, str, str]] = []
        for dev in adj:
            if dev in placed:
                continue
            kind = obs.devices[dev].kind
            c, voters = _votes(dev, adj, plan, placed, anchors.get(dev))
            for cand in [x for x in c if (plan.role.get(x) == "server") != (kind == "server")]:
                del c[cand]
            best = c.most_common(2)
            if not best:
                continue
            (cand, n), second = best[0], (best[1][1] if len(best) > 1 else 0)
            if n < 2 or n * 2 < voters or n == second:
                why[dev] = (
                    f"its cables agree on no single position (best {cand}: {n} of {voters})"
                    if n == second or n * 2 < voters
                    else f"only {n} cable(s) say where it is"
                )
                continue
            offers.append((n, dev, cand))
        changed = False
        for _n, dev, cand in sorted(offers, key=lambda o: (-o[0], o[1])):
            if cand in taken:
                why[dev] = f"position {cand} is held by {taken[cand]} (more cables agree)"
                continue
            placed[dev], taken[cand] = cand, dev
            why.pop(dev, None)
            changed = True
        if not changed:
            break
    return placed, why


def adopt(topo: FabricTopology, obs: Observation) -> AdoptResult:
    """Place every observed compute device on the plan ``topo`` (see the module docstring)."""
    plan = _Plan(topo)
    keys, notes = _port_keys(obs, plan)
    adj = _adjacency(obs, keys)
    placed, why = _place(obs, plan, adj)
    res = AdoptResult(notes=notes)
    for d in topo.devices:
        if d.role in CLASSES:
            res.planned[d.role] = res.planned.get(d.role, 0) + 1
    for dev in sorted(obs.devices):
        od = obs.devices[dev]
        p = placed.get(dev)
        role = plan.role.get(p, "") if p else ("server" if od.kind == "server" else "switch")
        if p is None:
            if dev not in adj:
                reason = "no cable on a port the plan has (not a compute-fabric device?)"
            else:
                reason = why.get(dev, "no placed neighbour to place it from")
            res.unplaced.append(Unplaced(dev, role, reason))
            continue
        problem = check_label(dev)
        if problem:
            res.unplaced.append(Unplaced(dev, role, f"placed at {p} but {problem}"))
            continue
        res.placed[dev] = p
        res.counts[role] = res.counts.get(role, 0) + 1
        res.rows.append(SiteName(planned=p, actual=dev, guids=tuple(od.guids), macs=tuple(od.macs)))
    res.rows.sort(key=lambda r: _natural(r.planned))
    res.contradictions = _contradictions(plan, adj, res.placed)
    return res


def _contradictions(
    plan: _Plan, adj: Adjacency, placed: dict[str, str]
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
            rails = sorted(
                {
                    _nic_rail(plan, placed[x], pk)
                    for _, x, pk in adj[dev]
                    if x in placed and plan.role.get(placed[x]) == "server"
                }
                - {0}
            )
            if len(rails) > 1:
                out.append(
                    (
                        "leaf",
                        dev,
                        f"serves rails {', '.join(map(str, rails))} (placed as rail {d.rail}: {p})",
                    )
                )
            continue
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


def _nic_rail(plan: _Plan, server: str, port: Any) -> int:
    q = plan.peer.get((server, port))
    return plan.attrs[q[0]].rail if q else 0


__all__ = [
    "CLASSES",
    "AdoptResult",
    "Observation",
    "ObservedDevice",
    "Unplaced",
    "adopt",
    "observation_from_snapshot",
    "short_name",
]
