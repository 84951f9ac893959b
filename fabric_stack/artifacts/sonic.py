"""`render sonic`: ``sonic/<switch>/config_db.json`` for every leaf, spine and core.

One SONiC CONFIG_DB per switch, from the same plan as ``render frr`` and
``render cumulus`` (ports from the topology, addresses and ASNs from the underlay
plan, QoS from :func:`.roce_qos.qos_values`; nothing recomputed):

* ``DEVICE_METADATA``: hostname, ``bgp_asn``, platform/HwSKU, role type, and
  ``docker_routing_config_mode: split``: FRR reads ``frr/<switch>.conf`` of
  ``render frr`` (copied to ``/etc/sonic/frr/frr.conf``) because CONFIG_DB's
  ``BGP_NEIGHBOR`` keys are IP addresses and cannot express BGP unnumbered, the
  multipath relax or the rail blocks; ``buffer_model: dynamic`` lets buffermgrd
  size the lossless headroom from ``CABLE_LENGTH`` and the port speed.
* ``PORT``: SONiC's own names and lanes (``Ethernet<first lane>``, the lanes per cage
  of the switch model's record, :attr:`~fabric_stack.hardware.switches.SwitchModel.sonic`,
  the same the drift reader parses), alias ``etp<cage><a|b…>``, speed, MTU, RS-FEC, admin up.
* ``LOOPBACK_INTERFACE``, ``INTERFACE`` (``ipv6_use_link_local_only`` for
  unnumbered fabric links, /31s otherwise and for ``p2p31`` host ports),
  ``VLAN``/``VLAN_MEMBER``/``VLAN_INTERFACE`` for the leaf-local rail gateway,
  ``BGP_NEIGHBOR`` for addressed fabric links.
* Lossless RoCE: ``DSCP_TO_TC_MAP``, ``TC_TO_QUEUE_MAP``, ``TC_TO_PRIORITY_GROUP_MAP``,
  ``MAP_PFC_PRIORITY_TO_QUEUE``, ``PORT_QOS_MAP`` (``pfc_enable``, ``pfcwd_sw_enable``),
  ``WRED_PROFILE`` (ECN marking), ``SCHEDULER``/``QUEUE``, ``BUFFER_POOL``,
  ``BUFFER_PROFILE``, ``BUFFER_PG`` (lossless PG with profile ``NULL``: computed by
  the dynamic buffer model), ``BUFFER_QUEUE`` and ``CABLE_LENGTH``.

Tables and fields follow SONiC's YANG models (``sonic-buildimage/src/sonic-yang-models``,
see :data:`.sources.SONIC_YANG`); the tests check every table against the field
list cited there. Where a value is a judgement rather than a documented default it
says so in ``sonic/README.md`` (written with the files).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import GENERATED_BY, Artifact, RenderContext, TargetMismatchError
from fabric_stack.artifacts.cumulus_underlay import CABLE_LENGTH_M
from fabric_stack.artifacts.frr import rail_interface, require_routed
from fabric_stack.artifacts.roce_qos import qos_values
from fabric_stack.hardware.switches import CATALOG, SonicPlatform
from fabric_stack.intent.model import SwitchIntent
from fabric_stack.naming.devices import cage_of
from fabric_stack.topology.build import Link

TARGET = "sonic"
MAP = "ROCE"
"""Name of every QoS map this renderer writes."""

DEVICE_TYPE = {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}
"""Fabric role → DEVICE_METADATA type (SONiC's T0/T1/T2 names: the server-facing tier is 'ToR')."""


def no_lane_table(ctx: RenderContext) -> str | None:
    """Why the plan's switch model has no SONiC port table (None: it has one, from its record's
    SONiC platform; what the target's applicability and :func:`require_sonic` check)."""
    model = ctx.plan.switch_model
    return None if model.sonic is not None else f"no SONiC lane table for {model.name}"


def require_sonic(ctx: RenderContext) -> SonicPlatform:
    """The SONiC platform of a routed plan's switch model, else TargetMismatchError."""
    require_routed(ctx)
    sonic = ctx.plan.switch_model.sonic
    if sonic is None:
        known = sorted(key for key, m in CATALOG.items() if m.sonic is not None)
        raise TargetMismatchError(
            TARGET,
            str(no_lane_table(ctx)),
            "SONiC port names need the platform's port_config.ini; known: " + ", ".join(known),
        )
    return sonic


@lru_cache(maxsize=4096)  # a few hundred distinct ports, asked for once per switch
def sonic_port(per_cage: int, number: int, ppc: int) -> tuple[str, str, str]:
    """(name, lanes, alias) of logical port ``number``: ``Ethernet<first lane>``, ``etp<cage><x>``,
    on a platform with ``per_cage`` SerDes lanes per cage and ``ppc`` ports per cage.

    The inverse of the drift reader's SONiC parsing (:mod:`fabric_stack.drift.ports`).
    """
    cage, lane = cage_of(number, ppc)
    width = per_cage // ppc
    first = (cage - 1) * per_cage + (lane - 1) * width
    alias = f"etp{cage}" + (chr(ord("a") + lane - 1) if ppc > 1 else "")
    return f"Ethernet{first}", ",".join(str(first + i) for i in range(width)), alias


def _ports(ctx: RenderContext, sw: SwitchIntent) -> list[tuple[Link, str, int]]:
    """(link, local port label, local port number) of every compute port of ``sw``."""
    return ctx.compute_links.get(sw.name, [])


def render_switch(ctx: RenderContext, sw: SwitchIntent) -> dict[str, Any]:
    """The CONFIG_DB of one switch as plain data (tables in a fixed order)."""
    u = ctx.underlay
    s = u.switches[sw.name]
    q = qos_values(ctx, sw)
    sonic, ppc = require_sonic(ctx), ctx.plan.ports_per_cage
    names = {label: sonic_port(sonic.lanes_per_cage, num, ppc) for _, label, num in _ports(ctx, sw)}
    hwsku = sonic.hwsku(sw.port_gbps)
    platform, hwsku = (sonic.platform, hwsku) if hwsku is not None else ("", "")
    db: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": sw.name,
                "bgp_asn": str(s.asn),
                "type": DEVICE_TYPE[sw.role],
                "platform": platform,
                "hwsku": hwsku,
                "docker_routing_config_mode": "split",
                "buffer_model": "dynamic",
            }
        },
        "PORT": {},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{s.loopback}/32": {}},
    }
    for link, label, _ in _ports(ctx, sw):
        name, lanes, alias = names[label]
        peer = link.a_device if link.b_device == sw.name else link.b_device
        db["PORT"][name] = {
            "alias": alias,
            "lanes": lanes,
            "speed": str(sw.port_gbps * 1000),
            "mtu": str(q["mtu"]),
            "fec": "rs",
            "admin_status": "up",
            "description": f"{label} to {peer}",
        }
    db.update(_addressing(ctx, sw, names))
    db.update(_qos(ctx, sw, q, names))
    return db


def _addressing(
    ctx: RenderContext, sw: SwitchIntent, names: dict[str, tuple[str, str, str]]
) -> dict[str, Any]:
    u = ctx.underlay
    intf: dict[str, Any] = {}
    nbrs: dict[str, Any] = {}
    for port, link in u.links_of(sw.name):
        name = names[port][0]
        mine, peer = (link.a_address, link.b_address)
        peer_dev = link.b_device
        if link.a_device != sw.name:
            mine, peer, peer_dev = peer, mine, link.a_device
        if mine is None or peer is None:  # both ends unnumbered (the plan never mixes them)
            intf[name] = {"ipv6_use_link_local_only": "enable"}
            continue
        intf[name] = {}
        intf[f"{name}|{mine}/31"] = {}
        nbrs[peer] = {
            "asn": str(u.switches[peer_dev].asn),
            "name": peer_dev,
            "local_addr": mine,
            "admin_status": "up",
        }
    out: dict[str, Any] = {"INTERFACE": intf}
    vlans: dict[str, Any] = {}
    members: dict[str, Any] = {}
    vlan_intf: dict[str, Any] = {}
    for block in u.blocks_of(sw.name):
        hosts = [h for h in u.hosts_of(sw.name) if h.rail == block.rail]
        if u.settings.host_addressing == "p2p31":
            for h in hosts:
                intf[names[h.leaf_port][0]] = {}
                intf[f"{names[h.leaf_port][0]}|{h.gateway}/31"] = {}
            continue
        vid = rail_interface(ctx, block).removeprefix("vlan")
        vlan = f"Vlan{vid}"
        vlans[vlan] = {"vlanid": vid, "mtu": str(u.mtu)}
        for h in hosts:
            members[f"{vlan}|{names[h.leaf_port][0]}"] = {"tagging_mode": "untagged"}
        vlan_intf[vlan] = {}
        vlan_intf[f"{vlan}|{block.gateway}/{block.subnet.split('/')[1]}"] = {}
    if vlans:
        out.update({"VLAN": vlans, "VLAN_MEMBER": members, "VLAN_INTERFACE": vlan_intf})
    if nbrs:
        out["BGP_NEIGHBOR"] = dict(sorted(nbrs.items()))
    return out


def _qos(
    ctx: RenderContext, sw: SwitchIntent, q: dict[str, Any], names: dict[str, tuple[str, str, str]]
) -> dict[str, Any]:
    """The lossless RoCE tables: maps, per-port QoS, ECN, scheduling, dynamic buffers."""
    pfc = ",".join(map(str, q["pfc_priorities"]))
    tc, cnp = q["roce_tc"], q["cnp_tc"]
    dscp = {str(d): "0" for d in range(64)}
    dscp[str(q["roce_dscp"])], dscp[str(q["cnp_dscp"])] = str(tc), str(cnp)
    ident = {str(i): str(i) for i in range(8)}
    ports = [n for n, _, _ in names.values()]
    cable = {
        names[label][0]: f"{CABLE_LENGTH_M.get(link.medium, 50)}m"
        for link, label, _ in _ports(ctx, sw)
    }
    out: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {MAP: dscp},
        "TC_TO_QUEUE_MAP": {MAP: ident},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: {str(i): str(tc) if i == tc else "0" for i in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: ident},
        "PORT_QOS_MAP": {
            p: {
                "dscp_to_tc_map": MAP,
                "tc_to_queue_map": MAP,
                "tc_to_pg_map": MAP,
                "pfc_to_queue_map": MAP,
                "pfc_enable": pfc,
                "pfcwd_sw_enable": pfc,
            }
            for p in ports
        },
        "WRED_PROFILE": {
            "ROCE_ECN": {
                "ecn": "ecn_all" if q["ecn"] else "ecn_none",
                "wred_green_enable": "true",
                "green_min_threshold": str(q["ecn_min_bytes"]),
                "green_max_threshold": str(q["ecn_max_bytes"]),
                "green_drop_probability": str(q["ecn_probability"]),
            }
        },
        "SCHEDULER": {
            "scheduler.cnp": {"type": "STRICT"},
            "scheduler.roce": {"type": "DWRR", "weight": "50"},
            "scheduler.other": {"type": "DWRR", "weight": "50"},
        },
        "QUEUE": {},
        "CABLE_LENGTH": {MAP: cable},
        "BUFFER_POOL": {
            "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
            "egress_lossless_pool": {"type": "egress", "mode": "dynamic"},
            "egress_lossy_pool": {"type": "egress", "mode": "dynamic"},
        },
        "BUFFER_PROFILE": {
            "ingress_lossy_profile": {
                "pool": "ingress_lossless_pool",
                "size": "0",
                "dynamic_th": "3",
            },
            "egress_lossless_profile": {
                "pool": "egress_lossless_pool",
                "size": "0",
                "dynamic_th": "7",
            },
            "egress_lossy_profile": {
                "pool": "egress_lossy_pool",
                "size": "9216",
                "dynamic_th": "7",
            },
        },
        "BUFFER_PG": {},
        "BUFFER_QUEUE": {},
    }
    lossless = set(q["pfc_priorities"])
    pgs = [(f"|{prio}", {"profile": "NULL"}) for prio in sorted(lossless)]  # dynamic headroom
    queues = [
        (f"|{lo}" + (f"-{hi}" if hi > lo else ""), {"profile": _EGRESS[is_lossless]})
        for lo, hi, is_lossless in _runs(lossless)
    ]  # the same for every port: worked out once per switch
    for p in ports:
        # Queues left out keep SONiC's default scheduling; only the three classes are set.
        out["QUEUE"][f"{p}|0"] = {"scheduler": "scheduler.other"}
        out["QUEUE"][f"{p}|{tc}"] = {"scheduler": "scheduler.roce", "wred_profile": "ROCE_ECN"}
        out["QUEUE"][f"{p}|{cnp}"] = {"scheduler": "scheduler.cnp"}
        out["BUFFER_PG"][f"{p}|0"] = {"profile": "ingress_lossy_profile"}
        for suffix, row in pgs:
            out["BUFFER_PG"][p + suffix] = row
        for suffix, row in queues:
            out["BUFFER_QUEUE"][p + suffix] = row
    return out


_EGRESS = {True: "egress_lossless_profile", False: "egress_lossy_profile"}


def _runs(lossless: set[int]) -> list[tuple[int, int, bool]]:
    """Queues 0-7 as maximal runs of the same kind: (first, last, lossless), e.g. 0-2, 3, 4-7."""
    runs: list[tuple[int, int, bool]] = []
    for queue in range(8):
        kind = queue in lossless
        if runs and runs[-1][2] == kind:
            runs[-1] = (runs[-1][0], queue, kind)
        else:
            runs.append((queue, queue, kind))
    return runs


README = f"""# SONiC CONFIG_DB per switch

{GENERATED_BY.format(target=TARGET)}

Load on a switch with `sudo config load /path/to/config_db.json -y` (or copy to
`/etc/sonic/config_db.json` and `sudo config reload -y`). Routing runs in FRR split
mode (`docker_routing_config_mode: split`): copy `frr/<switch>.conf` from
`fabric-stack render frr` to `/etc/sonic/frr/frr.conf` (BGP unnumbered, AS-path
multipath relax and the rail blocks live there; CONFIG_DB `BGP_NEIGHBOR` is keyed by
IP address and lists only addressed fabric links).

Sources:
- Tables and fields: SONiC YANG models, {sources.SONIC_YANG}
  and the Configuration wiki, {sources.SONIC_CONFIG_DB}
- SN5600 port names, lanes, aliases: {sources.SONIC_SN5600_PORTS}
- Dynamic buffer model (BUFFER_PG profile "NULL" = headroom computed from
  CABLE_LENGTH and speed): SONiC "Dynamic buffer calculation" HLD (sonic-net/SONiC,
  doc/qos/dynamically-headroom-calculation.md).

Judgements, not documented defaults (UNVERIFIED):
- HwSKU for 800G / 200G / 100G SN5600 ports (ACS-SN5600, Mellanox-SN5600-V256,
  Mellanox-SN5600-C256S1): taken from directory names only; 400G uses
  Mellanox-SN5600-O128 whose port_config.ini was read.
- FEC `rs` on every port (PAM4 400G/200G lanes need RS-FEC; not read from a
  platform file).
- BUFFER_POOL without `size` and BUFFER_PROFILE thresholds: the dynamic model sizes
  pools; the lossy/egress profile values are NVIDIA-style defaults, review against
  the platform's buffers_defaults_*.j2.
- CABLE_LENGTH per port class (copper 5 m, SR multimode 50 m, DR single-mode
  500 m): conservative optic-class reach, edit down to measured runs.
- DEVICE_METADATA `type` (leaf ToRRouter, spine LeafRouter, core SpineRouter).
"""


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes, without rendering them."""
    require_sonic(ctx)
    return ["sonic/README.md"] + [f"sonic/{name}/config_db.json" for name in ctx.underlay.switches]


def render(ctx: RenderContext) -> list[Artifact]:
    """``sonic/<switch>/config_db.json`` per fabric switch, plus ``sonic/README.md``."""
    require_sonic(ctx)
    by_name = {sw.name: sw for sw in ctx.compute_switches()}
    out = [Artifact(TARGET, "sonic/README.md", README)]
    for name in ctx.underlay.switches:
        text = dump_config_db(render_switch(ctx, by_name[name]))
        out.append(Artifact(TARGET, f"sonic/{name}/config_db.json", text))
    return out


def dump_config_db(db: dict[str, Any]) -> str:
    """JSON with one line per table row: diffable per port, a fraction of ``indent=4``'s size.

    Each table is encoded by one ``json.dumps`` call (C encoder) and split after every
    row: rows are flat string maps, so ``}, "`` only occurs between two rows (inside a
    JSON string a quote is escaped, and a value's closing quote follows any ``}``).
    """
    tables = []
    for table, rows in db.items():
        inner = json.dumps(rows)[1:-1]
        body = "        " + inner.replace('}, "', '},\n        "') if inner else ""
        tables.append(f"    {json.dumps(table)}: {{\n{body}\n    }}")
    return "{\n" + ",\n".join(tables) + "\n}\n"
