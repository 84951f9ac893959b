"""Cabling exports: the link list as files technicians and NVIDIA's tools read.

Every export reads :attr:`FabricTopology.links` (one record per cable, a-end
on the lower tier) and writes **one row per cable, never both directions**,
except the ``.topo`` file, whose format lists each system's own ports (so a
cable appears in the sections of both systems it joins, as ``ibdiagnet -w``
writes it).

Formats
-------
``links_csv``   every column of the link record plus rack and position of both
                ends (from the devices); the technician's pull list.
``links_json``  ``{"links": [...]}``; each link has at least ``a_device,
                a_port, b_device, b_port, speed_gbps, role`` — a stable
                contract other tools may rely on — plus the other columns.
``topo_file``   ibdiagnet / ibdm topology file for ``ibdiagnet -t FILE``
                (InfiniBand compute links only). One section per system::

                    MQM9700 su1-r1-leaf
                        P1 -4x-100G-> HCA_mlx5_7 su1-node01 mlx5_0/P1

                    HCA_mlx5_7 su1-node01
                        mlx5_0/P1 -4x-100G-> MQM9700 su1-r1-leaf P1

                A blank line ends a section. Switch ports are logical port
                numbers ``P<n>`` (what ibnetdiscover prints). A server is one
                system named after its host name; each HCA is a node named by
                its RDMA device, so its port is ``mlx5_N/P1`` — the node
                description convention ``"<hostname> mlx5_N"``. System names
                hold no ``/`` or blanks (the ibdm parser splits on them).
``ufm_p2p``     UFM Cable Validation Tool point-to-point sheet: ``A-Node Name,
                A-Type, A-Port, Z-Node Name, Z-Type, Z-Port``. Hosts give the
                HCA interface number (1 → mlx5_0, the tool's default HCA map);
                InfiniBand switch ports are ``<cage>/<split>`` or ``<cage>``.
``avd_csv``     Arista AVD-style topology CSV (``Node Type,Node,...``), one
                row per cable, with each cable's length, medium, part number and
                end labels (what avd#7075 asks for).

``links_csv``, ``links_json`` and ``avd_csv`` carry the physical plant (length, medium,
part number, TIA-606-style labels); the ``.topo`` and UFM P2P formats are fixed by the
tools that read them and stay as they are. The csv and json rows are written by
:mod:`fabric_stack.views.cable_rows`; their public names are re-exported here.
"""

from __future__ import annotations

from collections import defaultdict

from fabric_stack.errors import FabricStackError
from fabric_stack.hardware.switches import SwitchModel, lookup_switch, port_mode
from fabric_stack.nos import for_family
from fabric_stack.sizing.size import SizingPlan
from fabric_stack.sizing.tiers import uplink_layout_number
from fabric_stack.topology.build import FABRIC_ROLES, HOST_ROLES, Device, FabricTopology
from fabric_stack.views.cable_rows import (  # noqa: F401
    CSV_COLUMNS,
    ROLE_FILTERS,
    _csv,
    _with_runs,
    link_rows,
    links_csv,
    links_csv_lines,
    links_json,
    links_json_lines,
    physical,
    select_links,
)
from fabric_stack.views.ib_naming import (
    host_hcas,
    host_types,
    interface_numbers,
    port_naming_header,
)

P2P_COLUMNS: tuple[str, ...] = (
    "A-Node Name",
    "A-Type",
    "A-Port",
    "Z-Node Name",
    "Z-Type",
    "Z-Port",
)
"""Columns of the UFM cable-validation point-to-point sheet."""

AVD_COLUMNS: tuple[str, ...] = (
    "Node Type",
    "Node",
    "Serial Number",
    "Node Interface",
    "Peer Type",
    "Peer Node",
    "Peer Serial Number",
    "Peer Interface",
    "Node Interface Enabled",
    "Cable Length (m)",
    "Cable Medium",
    "Part Number",
    "Node Label",
    "Peer Label",
)
"""Columns of the Arista AVD-style topology CSV."""

_IB_LANE_GBPS: dict[str, int] = {"HDR": 50, "NDR": 100, "NDR200": 100, "XDR": 200}


def _require_ib(topo: FabricTopology, what: str) -> None:
    fabric = topo.plan.spec.fabric
    if fabric != "infiniband":
        raise FabricStackError(
            f"{what}: .topo files describe InfiniBand fabrics for ibdiagnet, but this fabric "
            f"is {fabric} (use --format csv, json or p2p)"
        )


def ib_width(topo: FabricTopology) -> str:
    """Width and lane speed of the compute links as ibdiagnet writes them, e.g. ``4x-100G``."""
    return ib_width_at(topo.plan.switch_model, topo.plan.link_gbps)


def ib_width_at(model: SwitchModel, speed: int) -> str:
    """Width and lane speed of a ``speed`` link on ``model`` (its mode's lane name)."""
    lane_name = next((m.lane_name for m in model.modes if m.speed_gbps == speed), "")
    lane = _IB_LANE_GBPS.get(lane_name, max(1, speed // 4))
    return f"{max(1, speed // lane)}x-{lane}G"


def ib_system_type(topo: FabricTopology, role: str = "leaf") -> str:
    """ibdm system type of the fabric switches of tier ``role``: the switch model record's
    ``ib_system_type`` (``MQM9700`` for a QM9700), ``SW_<radix>`` for a model without one
    (generic switches)."""
    plan = topo.plan
    radix = {"spine": plan.spine_radix, "core": plan.core_radix}.get(role, plan.radix)
    return plan.tier_model(role).ib_system_type or f"SW_{radix}"


def topo_file(topo: FabricTopology) -> str:
    """ibdiagnet topology file of the InfiniBand compute fabric (see the module docstring).

    Raises :class:`FabricStackError` for RoCE / Ethernet fabrics.
    """
    _require_ib(topo, "cabling --format topo")
    sw_type = ib_system_type(topo)
    types = host_types(topo)
    order_of = {h: {dev: i for i, dev in enumerate(devs)} for h, devs in host_hcas(topo).items()}
    arrow = f" -{ib_width(topo)}-> "
    plan = topo.plan
    # Per-tier models and speeds (issue #43): each switch its tier's type, each link its
    # speed's width; a fabric of one model at one speed writes exactly what it always did.
    sw_types = {
        d.name: ib_system_type(topo, d.role) for d in topo.switches("leaf", "spine", "core")
    }
    arrows = {
        (m, s): f" -{ib_width_at(plan.tier_model(m), s)}-> "
        for m in ("leaf", "spine")
        for s in {plan.link_gbps, plan.uplink_gbps}
        if s in plan.tier_model(m).speeds()
    }
    # Per system: (sort key, line). Hosts sort by HCA interface order, switches by port number.
    lines: dict[str, list[tuple[int, str]]] = defaultdict(list)
    per_tier, one_arrow, one_type = plan.spec.per_tier, arrow, sw_type
    for k in topo.links_of(*FABRIC_ROLES):
        if per_tier:
            tier = "leaf" if k.role in ("node_leaf", "manager_leaf") else "spine"
            arrow = arrows.get((tier, k.speed_gbps), one_arrow)
            sw_type = sw_types[k.b_device]
        b_port = f"P{k.b_port_number}"
        if k.a_device in types:
            a_port = f"{k.a_port}/P1"
            a_type = types[k.a_device]
            a_key = order_of[k.a_device][k.a_port]
        else:
            a_port = f"P{k.a_port_number}"
            a_type = sw_types[k.a_device] if per_tier else sw_type
            a_key = k.a_port_number
        lines[k.a_device].append((a_key, f"    {a_port}{arrow}{sw_type} {k.b_device} {b_port}"))
        lines[k.b_device].append(
            (k.b_port_number, f"    {b_port}{arrow}{a_type} {k.a_device} {a_port}")
        )
    out = [
        f"# ibdiagnet topology file for {plan.spec.name}: {plan.gpus:,} GPUs, "
        f"{plan.switch_model.name} at {plan.link_gbps}G, {plan.tiers} tiers"
        + (_tiers_note(plan) if per_tier else ""),
        "# Generated by fabric-stack from the port-level plan; check a live fabric with:",
        "#   ibdiagnet -t <this file> --out_ibnl_dir <dir with IBNL files for "
        f"{', '.join([*sorted(set(sw_types.values())), *sorted(set(types.values()))])}>",
        "# (render infiniband writes the HCA ones under infiniband/ibnl/).",
        "# Hosts (GPU servers, fabric managers) are systems named by host name.",
        *(f"# {line}" for line in port_naming_header(topo)),
        *(f"# {n}" for n in _profile_notes(topo)),
        "",
    ]
    order = [d for d in topo.devices if d.role in ("leaf", "spine", "core")]
    order += [d for d in topo.devices if d.role in HOST_ROLES]
    for d in order:
        ports = lines.get(d.name)
        if not ports:
            continue
        ports.sort()
        out.append(f"{types.get(d.name) or sw_types.get(d.name, one_type)} {d.name}")
        out.extend(line for _, line in ports)
        out.append("")
    return "\n".join(out)


def _tiers_note(plan: SizingPlan) -> str:
    """``; uplinks 400G, spines Q3400-RA, cores …``: the per-tier part of the header."""
    text = f"; uplinks {plan.uplink_gbps}G, spines {plan.spine_model.name}"
    return text + (f", cores {plan.core_model.name}" if plan.tiers == 3 else "")


# --------------------------------------------------------------------------- UFM P2P


def _profile_notes(topo: FabricTopology) -> list[str]:
    """``UNVERIFIED (<profile>): …`` for what the server profile could not confirm."""
    prof = topo.plan.spec.node_profile
    return [f"UNVERIFIED ({prof.name}): {note}." for note in prof.unverified_notes()]


def _p2p_port(
    dev: Device, port: str, number: int, ppc: dict[str, int], os_family: str, iface: dict[str, int]
) -> str:
    if dev.role in HOST_ROLES:
        # The host's interface number, as the CVT's hca_mapping file maps it (1-based).
        return str(iface[port]) if port in iface else port
    # The switch OS says how UFM names its port: ``<cage>/<lane>`` on InfiniBand switches,
    # the interface name the NOS prints (``swp1s0``) on Ethernet ones.
    return for_family(os_family).ufm_port(port, number, ppc.get(dev.name, 1))


def ufm_p2p(topo: FabricTopology, role: str = "compute") -> str:
    """UFM cable-validation point-to-point CSV (:data:`P2P_COLUMNS`), one row per cable."""
    by_name = {d.name: d for d in topo.devices}
    plan = topo.plan
    ppc: dict[str, int] = {}
    fam: dict[str, str] = {}
    access_cache: dict[tuple[str, int], tuple[int, str]] = {}
    ifaces = {h: interface_numbers(devs) for h, devs in host_hcas(topo).items()}
    for link in select_links(topo, role):
        for dev_name in (link.a_device, link.b_device):
            d = by_name[dev_name]
            if d.role in HOST_ROLES or dev_name in ppc:
                continue
            if d.network == "compute":
                ppc[dev_name] = plan.tier_ports_per_cage(d.role)
                fam[dev_name] = plan.tier_model(d.role).os_family
            else:
                key = (d.model, link.speed_gbps)
                if key not in access_cache:
                    m = lookup_switch(d.model, "ethernet")
                    access_cache[key] = (port_mode(m, link.speed_gbps).ports_per_cage, m.os_family)
                ppc[dev_name], fam[dev_name] = access_cache[key]

    def kind(d: Device) -> str:
        return "Host" if d.role in HOST_ROLES else "Switch"

    rows = []
    # A mixed leaf's uplink cages (issue #43) are named in the uplink layout.
    up_ppc: dict[str, int] = {}
    for k in select_links(topo, role):
        a, b = by_name[k.a_device], by_name[k.b_device]
        a_number, a_ppc = k.a_port_number, ppc
        if plan.mixed_leaf and k.role == "leaf_spine":
            up = up_ppc[a.name] = plan.leaf_up_ports_per_cage
            a_number, a_ppc = uplink_layout_number(a_number, plan.ports_per_cage, up), up_ppc
        rows.append(
            (
                k.a_device,
                kind(a),
                _p2p_port(
                    a,
                    k.a_port,
                    a_number,
                    a_ppc,
                    fam.get(a.name, ""),
                    ifaces.get(a.name, {}) if k.network == "compute" else {},
                ),
                k.b_device,
                kind(b),
                _p2p_port(b, k.b_port, k.b_port_number, ppc, fam.get(b.name, ""), {}),
            )
        )
    body = _csv(P2P_COLUMNS, rows)
    if plan.spec.fabric != "infiniband" or role not in ("compute", "all"):
        return body
    # The port-naming convention, stated where the technician reads the sheet. Whether the
    # CVT skips '#' lines in a CSV sheet is UNVERIFIED: strip them if it rejects the file.
    head = [*port_naming_header(topo), "Host interface numbers: see hca_mapping.csv."]
    return "".join(f"# {line}\n" for line in head) + body


def avd_csv(topo: FabricTopology, role: str = "all") -> str:
    """Arista AVD-style topology CSV (:data:`AVD_COLUMNS`), one row per cable, a-end first."""
    by_name = {d.name: d for d in topo.devices}
    rows = [
        (
            by_name[k.a_device].role,
            k.a_device,
            "",
            k.a_port,
            by_name[k.b_device].role,
            k.b_device,
            "",
            k.b_port,
            "True",
            f"{run.length_m:g}",
            run.medium,
            run.part_number,
            run.label_a,
            run.label_b,
        )
        for k, run in _with_runs(topo, role)
    ]
    return _csv(AVD_COLUMNS, rows)


EXPORTS = {
    "csv": links_csv,
    "json": links_json,
    "p2p": ufm_p2p,
    "avd": avd_csv,
}
"""Exports that take a role filter, by ``--format`` name (``topo`` is compute-only)."""


__all__ = [
    "AVD_COLUMNS",
    "CSV_COLUMNS",
    "P2P_COLUMNS",
    "ROLE_FILTERS",
    "avd_csv",
    "link_rows",
    "links_csv",
    "links_csv_lines",
    "links_json",
    "links_json_lines",
    "select_links",
    "topo_file",
    "ufm_p2p",
]
