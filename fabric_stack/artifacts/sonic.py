"""`render sonic`: ``sonic/<switch>/config_db.json`` and ``frr.conf`` for every leaf, spine, core.

One SONiC CONFIG_DB per switch, from the same plan as ``render frr`` and
``render cumulus`` (ports from the topology, addresses and ASNs from the underlay
plan, QoS: all from the switch's typed
:class:`~fabric_stack.intent.switch_config.SwitchConfig`; nothing recomputed).

Routing: FRR's own file, with SONiC's interface names. ``DEVICE_METADATA``
``docker_routing_config_mode: split-unified``: the bgp container loads one integrated
``/etc/sonic/frr/frr.conf`` that CONFIG_DB does not generate (``vtysh -b``). Why a file
and not CONFIG_DB BGP: the bgpcfgd tables (``BGP_NEIGHBOR`` keyed by an IP address,
sonic-bgp-neighbor.yang ``BGP_NEIGHBOR_TEMPLATE_LIST``) cannot say BGP unnumbered; the
frrcfgd tables can (``BGP_NEIGHBOR_LIST`` key ``vrf_name neighbor``, neighbor a PORT
name) but need ``unified`` mode plus ``frr_mgmt_framework_config`` and a second BGP
model (``BGP_GLOBALS``, ``BGP_NEIGHBOR_AF``, route maps) to express the multipath relax
and rail networks ``render frr`` already states. ``split`` (the old choice) is wrong:
docker_init.sh deletes ``/etc/frr/frr.conf`` in ``split`` mode and reads per-daemon
files. Sources, sonic-net/sonic-buildimage@086b03bd70f9:
``dockers/docker-fpm-frr/docker_init.sh`` (the ``split``/``split-unified`` branches),
``dockers/docker-fpm-frr/frr/supervisord/supervisord.conf.common.j2`` (``vtysh -b`` for
``split-unified``), ``src/sonic-yang-models/yang-models/sonic-bgp-neighbor.yang`` and
``sonic-device_metadata.yang`` (the four modes).
:func:`sonic_interfaces` is the one place plan/FRR names become SONiC names
(``swp33s0`` → ``Ethernet256``, ``vlan101`` → ``Vlan101``, ``lo`` → ``Loopback0``);
both CONFIG_DB and ``frr.conf`` use it.

Tables:

* ``DEVICE_METADATA``: hostname, ``bgp_asn``, platform/HwSKU, role type, routing mode,
  ``buffer_model: dynamic`` (buffermgrd sizes lossless headroom from ``CABLE_LENGTH``).
* ``BREAKOUT_CFG`` (a leaf whose uplinks run faster than its downlinks only): each cage's
  parent port and its platform.json breakout mode (dynamic port breakout), with
  ``<switch>/hwsku.json`` giving the same modes as first-boot defaults.
* ``PORT``: SONiC's own names and lanes (``Ethernet<first lane>``, the lanes per cage
  of the switch model's record, :attr:`~fabric_stack.hardware.switches.SwitchModel.sonic`,
  the same the drift reader parses), alias ``etp<cage><a|b…>``, speed, MTU, RS-FEC, admin up.
* ``LOOPBACK_INTERFACE``, ``INTERFACE`` (``ipv6_use_link_local_only`` for
  unnumbered fabric links, /31s otherwise and for ``p2p31`` host ports),
  ``VLAN``/``VLAN_MEMBER``/``VLAN_INTERFACE`` for the leaf-local rail gateway,
  ``BGP_NEIGHBOR`` for addressed fabric links.
* Lossless RoCE, ours: ``DSCP_TO_TC_MAP``, ``TC_TO_QUEUE_MAP``, ``TC_TO_PRIORITY_GROUP_MAP``,
  ``MAP_PFC_PRIORITY_TO_QUEUE`` (maps named ``ROCE``), ``PORT_QOS_MAP``, ``WRED_PROFILE``,
  ``SCHEDULER``/``QUEUE``, ``CABLE_LENGTH|AZURE`` (SONiC's own key, our lengths), and
  ``BUFFER_PG`` rows only for lossless priorities SONiC's defaults do not already make
  lossless.

Buffers and QoS are merged onto the platform's defaults instead of replacing them. The
SKU's ``buffers_dynamic.json.j2`` (``device/mellanox/x86_64-nvidia_sn5600-r0/<HwSKU>/``,
with ``buffers_defaults_objects.j2`` and ``buffers_defaults_t0/t1.j2``) gives every
pool, profile, profile list, PG and queue buffer; sonic-cfggen writes them into
CONFIG_DB at first boot. Those templates differ per SKU (V256 has a shared-headroom
``xoff``; C256S1 imports ``traffic_config.j2``), so the product does not restate them:
``config_db.json`` carries only our rows, ``sonic/<switch>/tables.json`` says which tables
are SONiC's defaults and which rows are ours, and ``config load`` merges our rows onto
the defaults already in CONFIG_DB. The one default fact the renderer depends on, the
lossless priority groups (:attr:`fabric_stack.nos.sonic.SonicDefaults.lossless_pgs`), is
recorded with its source in :mod:`fabric_stack.nos.sonic` (with the other SN5600
defaults); ``validate/sonic_defaults.py`` renders the templates from ``../shared/schemas``
and checks it and every row. The ``frr.conf`` comments are FRR's (:mod:`fabric_stack.nos.frr`).
"""

from __future__ import annotations

import json
from typing import Any

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    TargetMismatchError,
    require_routed,
)
from fabric_stack.artifacts.frr_conf import frr_conf
from fabric_stack.hardware.switches import CATALOG, SonicPlatform
from fabric_stack.intent.model import SwitchIntent
from fabric_stack.intent.switch_config import QosConfig, SwitchConfig
from fabric_stack.nos.frr import FRR
from fabric_stack.nos.sonic import (
    SONIC_DEFAULTS,
    breakout_mode,
    hwsku_json,
    sonic_parent,
    sonic_port,
)

TARGET = "sonic"
MAP = SONIC_DEFAULTS.qos_map
"""Name of every QoS map this renderer writes (beside SONiC's ``AZURE`` ones)."""

__all__ = ["README", "TARGET", "files", "render"]


def no_lane_table(ctx: RenderContext) -> str | None:
    """Why the plan's switch model has no SONiC port table (None: it has one, from its record's
    SONiC platform; what the target's applicability and :func:`require_sonic` check)."""
    plan = ctx.plan
    model = plan.switch_model
    if model.sonic is None:
        return f"no SONiC lane table for {model.name}"
    for role in ("spine", "core"):
        if plan.tier_model(role).sonic is None:
            return f"no SONiC lane table for the {role}s' {plan.tier_model(role).name}"
    if plan.mixed_leaf:
        # A mixed leaf's cages split two ways: dynamic port breakout, one platform.json mode
        # per cage (BREAKOUT_CFG); refused only when the platform has no mode for a split.
        sonic = model.sonic
        for ppc, gbps in (
            (plan.ports_per_cage, plan.link_gbps),
            (plan.leaf_up_ports_per_cage, plan.uplink_gbps),
        ):
            if breakout_mode(sonic.breakout_modes, ppc, gbps) is None:
                modes = ", ".join(sonic.breakout_modes) or "none recorded"
                return (
                    f"the leaves split cages two ways but no {model.key.upper()} breakout mode "
                    f"in {sonic.platform}/platform.json gives {ppc} × {gbps}G per cage "
                    f"(modes: {modes})"
                )
    return None


def require_sonic(ctx: RenderContext) -> SonicPlatform:
    """The SONiC platform of a routed plan's switch model, else TargetMismatchError."""
    require_routed(ctx)
    sonic = ctx.plan.switch_model.sonic
    reason = no_lane_table(ctx)
    if sonic is None or reason is not None:
        known = sorted(key for key, m in CATALOG.items() if m.sonic is not None)
        valid = (
            "SONiC port names need the platform's port_config.ini; known: " + ", ".join(known)
            if not ctx.plan.mixed_leaf
            else "render cumulus or frr, or an uplink_gbps the platform's breakout modes serve"
        )
        raise TargetMismatchError(TARGET, str(reason), valid)
    return sonic


def sonic_interfaces(ctx: RenderContext, cfg: SwitchConfig) -> dict[str, tuple[str, str, str]]:
    """Every interface name the plan and ``render frr`` use on the switch → SONiC's (name,
    lanes, alias): the one rule. Ports by the catalog's lane table (:func:`sonic_port`), the
    rail gateway ``vlan<id>`` → ``Vlan<id>`` (sonic-vlan.yang: ``Vlan`` + id), ``lo`` →
    ``Loopback0`` (where LOOPBACK_INTERFACE puts the router address). Lanes and alias are
    empty for the non-ports."""
    sonic = require_sonic(ctx)
    out = {p.name: sonic_port(sonic.lanes_per_cage, *cfg.port_layout(p)[:2]) for p in cfg.ports}
    for g in cfg.routing.gateways if cfg.routing else ():
        out[g.interface] = ("Vlan" + str(g.vlan), "", "")
    out["lo"] = ("Loopback0", "", "")
    return out


def render_frr(ctx: RenderContext, cfg: SwitchConfig) -> str:
    """The switch's FRR config (:func:`.frr_conf.frr_conf`) with every interface renamed by
    :func:`sonic_interfaces` (whole words only: a name is never part of another token)."""
    names = {plan: sonic[0] for plan, sonic in sonic_interfaces(ctx, cfg).items()}
    text = frr_conf(cfg, TARGET)
    lines = [" ".join(names.get(w, w) for w in line.split(" ")) for line in text.splitlines()]
    mode = SONIC_DEFAULTS.routing_mode
    note = FRR.comment_line(
        f"SONiC interface names (render sonic, {mode}: /etc/sonic/frr/frr.conf)"
    )
    return "\n".join([lines[0], note, *lines[1:]]) + "\n"


def render_switch(ctx: RenderContext, sw: SwitchIntent) -> dict[str, Any]:
    """The CONFIG_DB of one switch as plain data (tables in a fixed order)."""
    cfg = ctx.switch_config(sw)
    r = cfg.routing
    if r is None:
        raise ValueError(f"{sw.name}: the underlay plans no routing for it")
    sonic = require_sonic(ctx)
    names = sonic_interfaces(ctx, cfg)
    hwsku = sonic.hwsku(sw.port_gbps)
    platform, hwsku = (sonic.platform, hwsku) if hwsku is not None else ("", "")
    db: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": sw.name,
                "bgp_asn": str(r.asn),
                "type": SONIC_DEFAULTS.device_type[sw.role],
                "platform": platform,
                "hwsku": hwsku,
                "docker_routing_config_mode": SONIC_DEFAULTS.routing_mode,
                "buffer_model": SONIC_DEFAULTS.buffer_model,
            }
        },
        **_breakout(cfg, sonic),
        "PORT": {},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{r.loopback}/32": {}},
    }
    for p in cfg.ports:
        name, lanes, alias = names[p.name]  # a plan port label: always a real port
        db["PORT"][name] = {
            "alias": alias,
            "lanes": lanes,
            "speed": str(cfg.port_layout(p)[2] * 1000),
            "mtu": str(cfg.qos.mtu),
            "fec": "rs",
            "admin_status": "up",
            "description": f"{p.name} to {p.peer_device}",
        }
    db.update(_addressing(cfg, names))
    db.update(_qos(cfg, cfg.qos, names, hwsku))
    return db


def breakout_modes(cfg: SwitchConfig, sonic: SonicPlatform) -> dict[str, str]:
    """Parent port → breakout mode of every cage of a mixed leaf (empty otherwise: the
    HwSKU's uniform split holds); :func:`no_lane_table` made sure each split has a mode."""
    out = {}
    for c in cfg.cage_layouts():
        mode = breakout_mode(sonic.breakout_modes, c.ports_per_cage, c.speed_gbps)
        assert mode is not None, "no_lane_table refuses a split without a mode"
        out[sonic_parent(sonic.lanes_per_cage, c.cage)] = mode
    return out


def _breakout(cfg: SwitchConfig, sonic: SonicPlatform) -> dict[str, Any]:
    modes = breakout_modes(cfg, sonic)
    if not modes:
        return {}
    return {"BREAKOUT_CFG": {parent: {"brkout_mode": m} for parent, m in modes.items()}}


def _addressing(cfg: SwitchConfig, names: dict[str, tuple[str, str, str]]) -> dict[str, Any]:
    r = cfg.routing
    assert r is not None  # render_switch checked it
    intf: dict[str, Any] = {}
    nbrs: dict[str, Any] = {}
    for i in r.interfaces:
        name = names[i.name][0]
        if i.address is None or i.peer_address is None:  # unnumbered (the plan never mixes)
            intf[name] = {"ipv6_use_link_local_only": "enable"}
            continue
        intf[name] = {}
        intf[f"{name}|{i.address}/31"] = {}
        nbrs[i.peer_address] = {
            "asn": str(i.peer_asn),
            "name": i.peer,
            "local_addr": i.address,
            "admin_status": "up",
        }
    out: dict[str, Any] = {"INTERFACE": intf}
    vlans: dict[str, Any] = {}
    members: dict[str, Any] = {}
    vlan_intf: dict[str, Any] = {}
    for g in r.gateways:
        if r.p2p31_hosts:
            for h in g.hosts:
                intf[names[h.port][0]] = {}
                intf[f"{names[h.port][0]}|{h.gateway}/31"] = {}
            continue
        vlan = names[g.interface][0]
        vid = vlan.removeprefix("Vlan")
        vlans[vlan] = {"vlanid": vid, "mtu": str(r.mtu)}
        for h in g.hosts:
            members[f"{vlan}|{names[h.port][0]}"] = {"tagging_mode": "untagged"}
        vlan_intf[vlan] = {}
        vlan_intf[f"{vlan}|{g.gateway}/{g.prefixlen}"] = {}
    if vlans:
        out.update({"VLAN": vlans, "VLAN_MEMBER": members, "VLAN_INTERFACE": vlan_intf})
    if nbrs:
        out["BGP_NEIGHBOR"] = dict(sorted(nbrs.items()))
    return out


def _qos(
    cfg: SwitchConfig, q: QosConfig, names: dict[str, tuple[str, str, str]], hwsku: str
) -> dict[str, Any]:
    """The lossless RoCE tables: maps, per-port QoS, ECN, scheduling, dynamic buffers
    (``CABLE_LENGTH`` per port from the planned cable and ``hwsku``'s headroom table)."""
    pfc = ",".join(map(str, q.pfc_priorities))
    tc, cnp = q.roce_tc, q.cnp_tc
    dscp = {str(d): "0" for d in range(64)}
    dscp[str(q.roce_dscp)], dscp[str(q.cnp_dscp)] = str(tc), str(cnp)
    ident = {str(i): str(i) for i in range(8)}
    ports = [n for n, lanes, _ in names.values() if lanes]
    cable = {
        names[p.name][0]: f"{SONIC_DEFAULTS.cable_length(p.cable_m, hwsku)}m" for p in cfg.ports
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
                "ecn": "ecn_all" if q.ecn else "ecn_none",
                "wred_green_enable": "true",
                "green_min_threshold": str(q.ecn_min_bytes),
                "green_max_threshold": str(q.ecn_max_bytes),
                "green_drop_probability": str(q.ecn_probability),
            }
        },
        "SCHEDULER": {
            "scheduler.cnp": {"type": "STRICT"},
            "scheduler.roce": {"type": "DWRR", "weight": "50"},
            "scheduler.other": {"type": "DWRR", "weight": "50"},
        },
        "QUEUE": {},
        # SONiC's own key: buffermgrd reads CABLE_LENGTH|AZURE (buffers_config.j2 writes it).
        "CABLE_LENGTH": {"AZURE": cable},
    }
    for p in ports:
        # Queues left out keep SONiC's default scheduling; only the three classes are set.
        out["QUEUE"][f"{p}|0"] = {"scheduler": "scheduler.other"}
        out["QUEUE"][f"{p}|{tc}"] = {"scheduler": "scheduler.roce", "wred_profile": "ROCE_ECN"}
        out["QUEUE"][f"{p}|{cnp}"] = {"scheduler": "scheduler.cnp"}
    # SONiC's defaults already reserve dynamic lossless headroom for PGs 3-4 on every port;
    # only a lossless priority outside them needs a PG of ours (profile NULL = dynamic).
    extra = sorted(set(q.pfc_priorities) - set(SONIC_DEFAULTS.lossless_pgs))
    if extra:
        out["BUFFER_PG"] = {f"{p}|{prio}": {"profile": "NULL"} for p in ports for prio in extra}
    return out


def tables_json(db: dict[str, Any]) -> dict[str, Any]:
    """``tables.json`` of one switch: the platform defaults CONFIG_DB is expected to hold, and
    the rows of ours ``config_db.json`` merges onto them (what validate/sonic_defaults.py reads)."""
    meta = db["DEVICE_METADATA"]["localhost"]
    kept, generic = SONIC_DEFAULTS.default_tables, SONIC_DEFAULTS.generic_default_tables
    sku_dir = f"device/mellanox/{meta['platform']}/{meta['hwsku']}/"
    return {
        "platform": meta["platform"],
        "hwsku": meta["hwsku"],
        "sonic_defaults": {
            "tables": list(kept),
            "source": sku_dir + "buffers_dynamic.json.j2 (sonic-cfggen, first boot or "
            "`config qos reload`), sonic-net/sonic-buildimage@086b03bd70f9",
        },
        "sonic_generic_defaults": {
            "tables": list(generic),
            "source": "files/build_templates/buffers_config.j2, qos_config.j2 (not in "
            "../shared/schemas: UNVERIFIED)",
        },
        "ours": {
            table: sorted(rows) for table, rows in db.items() if table in kept or table in generic
        },
    }


README = f"""# SONiC CONFIG_DB and FRR per switch

{GENERATED_BY.format(target=TARGET)}

Per switch: `<switch>/config_db.json` (our rows only), `<switch>/frr.conf` (routing,
SONiC interface names) and `<switch>/tables.json` (which tables are SONiC's and which
rows are ours).

Apply (merges; keeps the management, buffer and every other table already in CONFIG_DB):

    sudo config load /path/<switch>/config_db.json -y   # sonic-cfggen -j … --write-to-db
    sudo cp /path/<switch>/frr.conf /etc/sonic/frr/frr.conf
    sudo systemctl restart bgp                          # docker_init.sh loads frr.conf
    sudo config save -y                                 # persist to /etc/sonic/config_db.json

Do not copy the file over `/etc/sonic/config_db.json` and `config reload`: that flushes
CONFIG_DB and loads only this file, dropping the management interface, users' tables and
SONiC's buffer defaults. If the switch ran the traditional buffer model, first run
`sudo config qos reload` with `buffer_model: dynamic` set so SONiC renders its dynamic
defaults (buffers_dynamic.json.j2); it rewrites the QoS tables, so load ours after it
(UNVERIFIED: sonic-utilities `config qos reload` is not in ../shared/schemas).

Leaves whose uplinks run faster than their downlinks (dynamic port breakout): their
config_db.json has a `BREAKOUT_CFG` row per cage (the parent port, platform.json's key, and
its mode: host cages e.g. `2x400G[200G,100G,50G,40G,25G,10G]`, uplink cages
`1x800G[400G,200G,100G,50G,40G,25G,10G]`) and PORT rows named, laned and aliased as
SONiC derives them from platform.json for that mode. On a switch booted with the HwSKU
named in DEVICE_METADATA, break out each cage whose mode differs before loading:

    sudo config interface breakout Ethernet<parent> '<mode>' -y -f   # per such cage
    sudo config load /path/<switch>/config_db.json -y

(sonic-utilities `config interface breakout` reads the current mode from BREAKOUT_CFG and
refuses a mode the cage's platform.json entry lacks; loading our BREAKOUT_CFG first would
make it see nothing to change.) Or, for the first boot, put `<switch>/hwsku.json` (each
parent port's `default_brkout_mode`; the 64 OSFP cages only, add the stock file's
Ethernet512 entry to keep the SFP28 port) in a copy of the HwSKU's folder. Whether an
SN5600 running SONiC breaks a cage out at runtime without a reboot is not confirmed from
NVIDIA's documentation (UNVERIFIED).

Routing: `docker_routing_config_mode: split-unified`: FRR loads the one integrated
`/etc/sonic/frr/frr.conf` (`vtysh -b`) and CONFIG_DB does not generate it. `split` would
delete `frr.conf` (docker-fpm-frr/docker_init.sh). BGP unnumbered cannot be written in
bgpcfgd's `BGP_NEIGHBOR` (keyed by IP address), so BGP lives in `frr.conf`;
`BGP_NEIGHBOR` lists only addressed fabric links.

Which tables are whose:
- SONiC's defaults, never restated here: BUFFER_POOL, BUFFER_PROFILE,
  BUFFER_PORT_INGRESS_PROFILE_LIST, BUFFER_PORT_EGRESS_PROFILE_LIST, BUFFER_PG,
  BUFFER_QUEUE: rendered by SONiC from
  device/mellanox/x86_64-nvidia_sn5600-r0/<HwSKU>/buffers_dynamic.json.j2. Their lossless
  PGs 3-4 (profile NULL: headroom from CABLE_LENGTH and speed) carry our PFC priority 3.
- Ours, merged onto them: BUFFER_PG rows for lossless priorities outside 3-4 (none
  by default), CABLE_LENGTH|AZURE (per port: the planned cable's length rounded up to the
  SN5600 headroom table's 5/40/300 m, pg_profile_lookup.ini; over SONiC's default 5 m), the
  `ROCE` QoS maps (beside SONiC's `AZURE` ones), PORT_QOS_MAP (per port: our maps, PFC,
  PFC watchdog), WRED_PROFILE ROCE_ECN, SCHEDULER scheduler.*, QUEUE rows 0/3/6.
  `tables.json` lists every row of ours.
- SONiC's generic QoS defaults (qos_config.j2: AZURE maps, schedulers) and
  DEFAULT_LOSSLESS_BUFFER_PARAMETER/LOSSLESS_TRAFFIC_PATTERN (buffers_config.j2) are
  not compared here: those templates are not in ../shared/schemas (UNVERIFIED).

Checked by `make validate`: every config_db.json against SONiC's own YANG models with
libyang (yanglint, family sonic-yang); every buffer/QoS row against the HwSKU's
defaults rendered from SONiC's templates (family sonic-defaults).

Sources (sonic-net/sonic-buildimage@086b03bd70f9 unless a URL):
- Tables and fields: SONiC YANG models, {sources.SONIC_YANG}
  and the Configuration wiki, {sources.SONIC_CONFIG_DB}
- SN5600 port names, lanes, aliases: {sources.SONIC_SN5600_PORTS}
- Routing modes: src/sonic-yang-models/yang-models/sonic-device_metadata.yang,
  dockers/docker-fpm-frr/docker_init.sh
- Buffer defaults: device/mellanox/x86_64-nvidia_sn5600-r0/<HwSKU>/buffers_dynamic.json.j2,
  buffers_defaults_objects.j2, buffers_defaults_t0.j2 / _t1.j2
- Dynamic buffer model: SONiC "Dynamic buffer calculation" HLD (sonic-net/SONiC,
  doc/qos/dynamically-headroom-calculation.md).
- Dynamic port breakout: device/mellanox/x86_64-nvidia_sn5600-r0/platform.json (each cage's
  `breakout_modes`, lanes, aliases), src/sonic-config-engine/portconfig.py (`BreakoutCfg`:
  the ports of a mode), sonic-utilities config/main.py (`config interface breakout`), the
  SONiC DPB HLD (sonic-net/SONiC doc/dynamic-port-breakout/sonic-dynamic-port-breakout-HLD.md).

Judgements, not documented defaults (UNVERIFIED):
- HwSKU for 800G / 200G / 100G SN5600 ports (ACS-SN5600, Mellanox-SN5600-V256,
  Mellanox-SN5600-C256S1): taken from directory names only; 400G uses
  Mellanox-SN5600-O128 whose port_config.ini was read.
- FEC `rs` on every port (PAM4 400G/200G lanes need RS-FEC; not read from a
  platform file).
- A lossless priority outside 3-4 gets a lossless PG but its egress queue keeps SONiC's
  default BUFFER_QUEUE profile.
- DEVICE_METADATA `type` (leaf ToRRouter, spine LeafRouter, core SpineRouter).
- A mixed leaf keeps the HwSKU of its host-port speed (O128 at 400G) with its other
  cages broken out; runtime breakout between those modes on an SN5600 is not confirmed
  from NVIDIA's documentation.
"""


def _breaks_out(ctx: RenderContext, name: str) -> bool:
    """True when switch ``name`` is a mixed leaf (its config_db has BREAKOUT_CFG)."""
    return ctx.plan.mixed_leaf and ctx.underlay.switches[name].role == "leaf"


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes, without rendering them."""
    require_sonic(ctx)
    per = ("config_db.json", "frr.conf", "tables.json")
    out = ["sonic/README.md"]
    for name in ctx.underlay.switches:
        out += [f"sonic/{name}/{leaf}" for leaf in per]
        if _breaks_out(ctx, name):
            out.append(f"sonic/{name}/hwsku.json")
    return out


def render(ctx: RenderContext) -> list[Artifact]:
    """``sonic/<switch>/{config_db.json,frr.conf,tables.json}`` per switch (and ``hwsku.json``
    per mixed leaf), ``sonic/README.md``."""
    require_sonic(ctx)
    by_name = {sw.name: sw for sw in ctx.compute_switches()}
    out = [Artifact(TARGET, "sonic/README.md", README)]
    for name in ctx.underlay.switches:
        db = render_switch(ctx, by_name[name])
        out.append(Artifact(TARGET, f"sonic/{name}/config_db.json", dump_config_db(db)))
        frr_text = render_frr(ctx, ctx.switch_config(by_name[name]))
        out.append(Artifact(TARGET, f"sonic/{name}/frr.conf", frr_text))
        text = json.dumps(tables_json(db), indent=2) + "\n"
        out.append(Artifact(TARGET, f"sonic/{name}/tables.json", text))
        if _breaks_out(ctx, name):
            modes = {p: row["brkout_mode"] for p, row in db["BREAKOUT_CFG"].items()}
            sku = json.dumps(hwsku_json(modes), indent=4) + "\n"
            out.append(Artifact(TARGET, f"sonic/{name}/hwsku.json", sku))
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
