"""InfiniBand twin, pure part: the ibsim net file, the adapted OpenSM config, and readers of
what OpenSM and infiniband-diags print (routing engine, SM state, links, traced paths;
the LFTs and what they route are :mod:`fabric_stack.twin.ibroutes`).

The net file format is ibsim's (``ibsim/sim_net.c``, linux-rdma/ibsim, tag
``ibsim-0.10`` = Debian 12's ``ibsim-utils``): ``switchguid=``/``caguid=`` set
the next node's GUID, ``Switch N "id" # "NodeDescription" enhanced port 0 …``
and ``Hca N "id" # "desc"`` start a node, and a port line
``[p] "remote-id"[rp] # "…" lid 0 4xHDR`` links a port; the trailing
``<width>x<speed>`` sets the port's enabled width and speed
(``parse_port_link_width_and_speed``). ibsim 0.10 knows SDR…HDR lanes only
(NDR arrived in ibsim 0.11): an NDR or XDR plan runs on HDR lanes of the planned
*width*, and the twin says so (:func:`twin_rate`), so a speed fault is still a
different width or lane than the healthy twin's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from fabric_stack.drift.compare import IB_WIDTH
from fabric_stack.drift.speeds import LANE_GBPS
from fabric_stack.naming import ib_nodes
from fabric_stack.naming.nodedesc import host_nodedesc, switch_nodedesc
from fabric_stack.twin.model import Cable, Wiring
from fabric_stack.twin.wiring import TwinError

IBSIM_LANES = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR")
"""Lane speed names ibsim 0.10's net-file parser accepts (sim_net.c, LINKSPEED_STR_*)."""

PLANNED_WIDTH = {gbps: int(width.rstrip("x")) for gbps, width in IB_WIDTH.items()}
"""Link width the plan means at each speed (the drift engine's IB_WIDTH: 2x NDR200, 4x NDR…)."""


def switch_desc(name: str, model_key: str) -> str:
    """Switch NodeDescription as MLNX-OS reports it (``MF0;su1-r1-leaf:MQM9700/U1``, the drift
    reader's documented example). ``M<MODEL>`` for models other than QM9700: unverified."""
    return switch_nodedesc(name, f"M{model_key.upper()}")


@dataclass(frozen=True, slots=True)
class Rate:
    """A link rate: width (lanes) and lane speed name; ``text`` is ibnetdiscover's spelling."""

    width: int
    lane: str

    @property
    def text(self) -> str:
        """``4xHDR``."""
        return f"{self.width}x{self.lane}"


def planned_rate(gbps: int) -> Rate:
    """The width × lane a planned speed means (400 → 4xNDR, 200 → 2xNDR, 800 → 4xXDR)."""
    width = PLANNED_WIDTH.get(gbps)
    if width is None:
        raise TwinError(f"speed: {gbps} Gb/s is not an InfiniBand link rate (100, 200, 400, 800)")
    lane_gbps = gbps / width
    lane = next((n for n, g in LANE_GBPS.items() if g == lane_gbps), None)
    if lane is None:
        raise TwinError(f"speed: no InfiniBand lane runs at {lane_gbps:g} Gb/s")
    return Rate(width, lane)


def twin_rate(planned: Rate) -> Rate:
    """The rate ibsim 0.10 can run for ``planned``: same width, HDR lanes when the lane is newer."""
    return planned if planned.lane in IBSIM_LANES else Rate(planned.width, "HDR")


def fault_rate(plan_gbps: int, gbps: int) -> Rate:
    """The twin rate of a speed fault: ``gbps`` on the plan's lane generation, any width 1/2/4."""
    lane = planned_rate(plan_gbps).lane
    options = {int(w * LANE_GBPS[lane]): Rate(w, lane) for w in (1, 2, 4)}
    if gbps not in options or gbps == plan_gbps:
        valid = ", ".join(str(g) for g in sorted(options) if g != plan_gbps)
        raise TwinError(f"speed: {gbps} Gb/s is not a fault the twin can run (try {valid})")
    return twin_rate(options[gbps])


def node_id(guid: str, switch: bool) -> str:
    """ibsim node id, spelled as ibnetdiscover names nodes: ``S-<guid>`` / ``H-<guid>``."""
    return ib_nodes.node_id(guid, "Switch" if switch else "Ca")


def _cable_rate(cable: Cable, plan_gbps: int) -> Rate:
    if cable.gbps == plan_gbps:
        return twin_rate(planned_rate(plan_gbps))
    return fault_rate(plan_gbps, cable.gbps)


def render_netfile(wiring: Wiring, guids: Mapping[str, str], plan_gbps: int, model_key: str) -> str:
    """The ibsim net file of ``wiring`` (devices that are down are left out with their cables)."""
    down = set(wiring.down)
    switches = [d for d in wiring.devices if d.kind == "switch" and d.name not in down]
    servers = [d for d in wiring.devices if d.kind == "server" and d.name not in down]
    node_of: dict[tuple[str, str], str] = {}  # (device, port label) → node id of that port
    up_switches = {d.name for d in switches}
    for d in servers:
        for h in d.hcas:
            node_of[(d.name, h)] = node_id(guids[f"{d.name} {h}"], False)
    ports: dict[str, list[tuple[int, str, int, str]]] = {}
    for c in wiring.cables:
        ends = []
        for e in (c.a, c.b):
            if e.device in up_switches:
                ends.append((node_id(guids[e.device], True), e.number))
            elif (e.device, e.port) in node_of:
                ends.append((node_of[(e.device, e.port)], 1))
        if len(ends) < 2:
            continue  # an end on a device that is down
        rate = _cable_rate(c, plan_gbps).text
        (na, pa), (nb, pb) = ends
        ports.setdefault(na, []).append((pa, nb, pb, rate))
        ports.setdefault(nb, []).append((pb, na, pa, rate))
    out = [
        "# ibsim net file rendered by `fabric-stack twin up` from the plan (do not edit).",
        "# Node ids are the GUIDs as ibnetdiscover prints them; NodeDescriptions as the gear",
        "# reports them; the trailing <width>x<lane> of each port sets its enabled rate.",
        "",
    ]
    for d in switches:
        nid = node_id(guids[d.name], True)
        desc = switch_desc(d.name, model_key)
        out.append(f"switchguid={guids[d.name]}")
        out.append(f'Switch {d.ports} "{nid}" # "{desc}" enhanced port 0 lid 0 lmc 0')
        out += [
            f'[{p}] "{r}"[{rp}] # lid 0 {rate}' for p, r, rp, rate in sorted(ports.get(nid, []))
        ]
        out.append("")
    for d in servers:
        for h in d.hcas:
            guid = guids[f"{d.name} {h}"]
            nid = node_id(guid, False)
            out.append(f"caguid={guid}")
            out.append(f'Hca 1 "{nid}" # "{host_nodedesc(d.name, h)}"')
            out += [
                f'[{p}] "{r}"[{rp}] # lid 0 lmc 0 "" lid 0 {rate}'
                for p, r, rp, rate in sorted(ports.get(nid, []))
            ]
            out.append("")
    return "\n".join(out)


def ibsim_limits(wiring: Wiring) -> list[str]:
    """``-N -S -P`` for ibsim sized to the wiring (its defaults stop at 256 switches)."""
    switches = sum(1 for d in wiring.devices if d.kind == "switch")
    hcas = sum(len(d.hcas) for d in wiring.devices)
    ports = sum(d.ports + 1 for d in wiring.devices if d.kind == "switch") + 2 * hcas
    return ["-N", str(switches + hcas + 64), "-S", str(switches + 16), "-P", str(ports + 256)]


# --------------------------------------------------------------------------- OpenSM config


UFM_OPENSM_DIR = "/opt/ufm/files/conf/opensm/"
"""UFM's OpenSM file directory (the rendered UFM configs point there)."""


def sim_port_guid(node_guid: str) -> int:
    """Port 1 GUID ibsim gives a single-port CA whose node GUID is ``node_guid``."""
    return int(node_guid, 16) + 1


def adapt_opensm_conf(rendered: str, etc_dir: str, log_file: str, dump_dir: str) -> str:
    """The rendered ``opensm-<sm>.conf`` with only its paths adapted to the twin.

    Adapted, and why: ``/etc/opensm/`` and UFM's ``/opt/ufm/files/conf/opensm/`` → the
    twin's directory (the partition, node-name-map
    and root-GUID files are the rendered ones, written there; the host's /etc is not ours);
    ``log_file`` and ``dump_files_dir`` into the twin's log directory (OpenSM defaults to
    /var/log). ``sharp_enabled`` and ``virt_enabled`` are NVIDIA OpenSM options upstream
    OpenSM 3.3.23 does not know: kept, commented, with that reason. ``guid`` becomes the
    port GUID ibsim gives that HCA (:func:`sim_port_guid`). Every other line is the
    rendered text.
    """
    lines = []
    here = etc_dir.rstrip("/") + "/"
    for line in rendered.splitlines():
        key = line.split(" ", 1)[0]
        if key in ("sharp_enabled", "virt_enabled"):
            lines.append(f"# twin: upstream OpenSM has no {key} (NVIDIA option): {line}")
            continue
        if key == "guid":
            # ibsim numbers a CA's port GUID node GUID + 1 (ibstat under ibsim shows it);
            # the rendered value is the GUID the plan knows (ConnectX: port 1 = node GUID).
            lines.append(f"guid 0x{sim_port_guid(line.split()[1]):016x}")
            continue
        lines.append(line.replace("/etc/opensm/", here).replace(UFM_OPENSM_DIR, here))
    lines += [
        "",
        "# --- added by fabric-stack twin: where this OpenSM writes (paths only) ---",
        f"log_file {log_file}",
        f"dump_files_dir {dump_dir}",
        "",
    ]
    return "\n".join(lines)


_TABLES = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured on all switches")
_FAILED = re.compile(r"^(?=.*routing engine)(?=.*(?:fail|cannot)).*$", re.I | re.M)


def routing_used(log_text: str, planned: str) -> dict[str, object]:
    """Which routing engine OpenSM's log says it used, and whether it fell back.

    OpenSM logs ``osm_ucast_mgr_process: <engine> tables configured on all switches``
    after each routing run (osm_ucast_mgr.c); when the configured engine fails it
    logs the failure and routes with the default (minhop). The last run counts.
    """
    used = _TABLES.findall(log_text)
    engine = used[-1] if used else None
    failures = [m.group(0).strip() for m in _FAILED.finditer(log_text)]
    fallback = engine is not None and engine != planned
    return {
        "planned": planned,
        "engine": engine,
        "fell_back": fallback,
        "ok": engine == planned,
        "log": failures[-3:],
    }


_SMINFO = re.compile(
    r"sminfo: sm lid (\d+) sm guid (0x[0-9a-f]+), activity count (\d+) priority (\d+) state "
    r"(\d+) (\S+)"
)


def parse_sminfo(text: str) -> dict[str, object] | None:
    """``sminfo`` output → lid, guid, priority, state name; None if it did not answer."""
    m = _SMINFO.search(text)
    if m is None:
        return None
    return {
        "lid": int(m.group(1)),
        "guid": f"0x{int(m.group(2), 16):016x}",
        "priority": int(m.group(4)),
        "state": m.group(6).removeprefix("SMINFO_"),
    }


# ------------------------------------------------------------------- ibnetdiscover, ibtracert

_DISC_NODE = re.compile(r'^(Switch|Ca)\s+\d+\s+"[SH]-([0-9a-f]+)"\s*#\s*"([^"]*)"(?:.*?lid (\d+))?')
_DISC_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[SH]-([0-9a-f]+)"\[(\d+)\]')
_CA_LID = re.compile(r"# lid (\d+) lmc")


@dataclass(frozen=True, slots=True)
class Fabric:
    """What ibnetdiscover saw: nodes by GUID and every port's peer."""

    kind: dict[str, str]  # guid → Switch/Ca
    desc: dict[str, str]  # guid → NodeDescription
    lid: dict[str, int]  # guid → LID (switch port 0, CA port 1)
    peer: dict[tuple[str, int], tuple[str, int]]  # (guid, port) → (guid, port)


def parse_discover(text: str) -> Fabric:
    """Nodes, LIDs and links of an ``ibnetdiscover`` dump (enough for an LFT walk)."""
    kind: dict[str, str] = {}
    desc: dict[str, str] = {}
    lid: dict[str, int] = {}
    peer: dict[tuple[str, int], tuple[str, int]] = {}
    cur: str | None = None
    for line in text.splitlines():
        m = _DISC_NODE.match(line)
        if m:
            cur = f"{int(m.group(2), 16):016x}"
            kind[cur], desc[cur] = m.group(1), m.group(3)
            if m.group(1) == "Switch" and m.group(4):
                lid[cur] = int(m.group(4))
            continue
        p = _DISC_PORT.match(line)
        if p and cur is not None:
            peer[(cur, int(p.group(1)))] = (f"{int(p.group(2), 16):016x}", int(p.group(3)))
            if kind[cur] == "Ca":
                c = _CA_LID.search(line)
                if c:
                    lid[cur] = int(c.group(1))
    return Fabric(kind, desc, lid, peer)


_TRACE_HOP = re.compile(r"^\[(\d+)\] -> (?:switch|ca) port \{(0x[0-9a-f]+)\}\[(\d+)\]")


def parse_tracert(text: str) -> list[tuple[str, int]]:
    """``ibtracert`` output → (switch GUID, out port) of every switch on the path.

    After the ``From ca`` line, each hop line ``[out] -> switch port {guid}[in] …`` gives
    the out port of the node before it: the first one is the source HCA's own port.
    """
    out: list[tuple[str, int]] = []
    prev: str | None = None  # None: the source HCA, not a switch
    for line in text.splitlines():
        m = _TRACE_HOP.match(line.strip())
        if not m:
            continue
        if prev is not None:
            out.append((prev, int(m.group(1))))
        prev = f"{int(m.group(2), 16):016x}"
    return out
