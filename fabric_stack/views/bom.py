"""Bill of materials (`fabric-stack bom`): what to order, counted from the link list.

Every count here is taken from :class:`~fabric_stack.topology.build.FabricTopology`
— devices and cables — never from a formula, so the BOM cannot disagree with
the cabling plan. The compute-fabric part is reported next to the sizing
card's figures (:attr:`Bom.compute`) and a test asserts they match.

Counting rules
--------------
* **Switches** by model: count, rack units and power (catalog ``power_w``,
  optics excluded; unknown for generic switches).
* **Cables** by cable type × role (one cable per link).
* **Optics**: a server end takes one module per cable, or per *cage* when the
  server profile puts rails on shared cages (a DGX H100's four twin-port OSFPs
  serve its eight rails); a switch takes one module per *cage* with at least one
  used port (a twin-port OSFP serves both logical ports of its cage). Compute
  switches use the plan's ports per cage; access switches their own model's at
  the port speed. RJ45 copper ends take no module and are not counted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fabric_stack.hardware.switches import CATALOG, SwitchModel, lookup_switch, port_mode
from fabric_stack.naming.devices import cage_of
from fabric_stack.sizing.build_out import build_out_line
from fabric_stack.sizing.model import BuildOut
from fabric_stack.topology.build import COMPUTE_ROLES, HOST_ROLES, FabricTopology
from fabric_stack.views.bom_parts import PartsList, parts_list, parts_markdown

NO_OPTIC = "RJ45 (no optic)"
"""Optic name of copper RJ45 ends: no module to order."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SwitchLine(_Model):
    """Switches of one model."""

    model: str = Field(description="Catalog key, e.g. 'qm9700'.")
    name: str = Field(description="Model name.")
    count: int = Field(description="Switches of this model.")
    roles: dict[str, int] = Field(description="Count per role (leaf, spine, core, storage, ...).")
    rack_units: int = Field(description="Height of one switch in rack units.")
    rack_units_total: int = Field(description="Rack units of all of them.")
    power_w: int | None = Field(description="Power of one switch in W (catalog), None if unknown.")
    power_w_total: int | None = Field(description="Power of all of them in W, None if unknown.")
    power_basis: str = Field(description="What the power figure means (typical/max).")

    @property
    def power_unverified(self) -> bool:
        """True when the catalog marks the power figure UNVERIFIED (not read from a datasheet)."""
        return self.power_w is not None and "UNVERIFIED" in self.power_basis


UNVERIFIED_MARK = " *"
"""Follows a power figure the catalog marks UNVERIFIED, in every format that prints it."""

UNVERIFIED_NOTE = (
    "* UNVERIFIED: catalog power figure not confirmed against the datasheet "
    "(power_basis in --format json says what it is)"
)
"""The footnote under a table that shows :data:`UNVERIFIED_MARK`."""


def power_cell(watts: int | None, unverified: bool) -> str:
    """A power figure as printed: ``747 *`` when UNVERIFIED, ``—`` when unknown."""
    return _num(watts) + (UNVERIFIED_MARK if unverified and watts is not None else "")


class CableLine(_Model):
    """Cables of one type in one role."""

    cable_type: str = Field(description="Cable type, e.g. 'MPO-12/APC OM4 multimode fiber'.")
    role: str = Field(description="node_leaf, leaf_spine, spine_core, storage, inband or oob.")
    speed_gbps: int = Field(description="Link speed.")
    count: int = Field(description="Cables.")


class OpticLine(_Model):
    """Pluggable modules of one type at one kind of end."""

    optic: str = Field(description="Module type, e.g. 'OSFP 2×400G SR twin-port'.")
    side: str = Field(description="'server' (one per cable end) or 'switch' (one per used cage).")
    network: str = Field(description="Network the modules serve (compute, storage, ...).")
    count: int = Field(description="Modules.")


class ServerLine(_Model):
    """Servers of one profile."""

    profile: str = Field(description="Node profile name.")
    count: int = Field(description="Servers.")
    gpus: int = Field(description="GPUs in all of them.")
    rack_units_total: int = Field(description="Rack units of all of them.")


class ComputeCounts(_Model):
    """Compute-fabric counts from the link list, beside the sizing card's (they must agree)."""

    switches: dict[str, int] = Field(description="Compute switches per tier (leaf/spine/core).")
    cables: dict[str, int] = Field(description="Compute cables per role (node_leaf/...).")
    transceivers: dict[str, int] = Field(description="Compute optics: nic, switch, total.")
    sizing_switches: dict[str, int] = Field(description="The sizing card's switch counts.")
    sizing_cables: dict[str, int] = Field(description="The sizing card's cable counts.")
    sizing_transceivers: dict[str, int] = Field(description="The sizing card's optics counts.")
    matches_sizing: bool = Field(description="True when every count equals the sizing card's.")


class BomTotals(_Model):
    """Totals over the whole bill."""

    switches: int = Field(description="All switches, every network.")
    switch_rack_units: int = Field(description="Rack units of all switches.")
    switch_power_w: int = Field(description="Power of switches with a known figure, W.")
    switches_without_power: int = Field(description="Switches whose model has no power figure.")
    cables: int = Field(description="All cables.")
    optics: int = Field(description="All pluggable modules.")
    servers: int = Field(description="Servers.")
    gpus: int = Field(description="GPUs.")


class Bom(_Model):
    """The bill of materials of one fabric."""

    name: str = Field(description="Cluster name.")
    switches: tuple[SwitchLine, ...] = Field(description="Switches by model.")
    cables: tuple[CableLine, ...] = Field(description="Cables by type and role.")
    optics: tuple[OpticLine, ...] = Field(description="Optics by type.")
    servers: tuple[ServerLine, ...] = Field(description="Servers by profile.")
    compute: ComputeCounts = Field(description="Compute counts next to the sizing card's.")
    totals: BomTotals = Field(description="Totals.")
    parts: PartsList = Field(
        description="Cables and optics to order by part number and length (physical plant)."
    )
    build_out: BuildOut | None = Field(
        default=None,
        description="A build-out phase: spines/cores bought now for the final size (#43).",
    )
    build_out_note: str = Field(default="", description="The cost of building out, in words.")

    @model_serializer(mode="wrap")
    def _omit_no_build_out(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Without a build-out the BOM dumps as before (goldens).
        data = handler(self)
        if isinstance(data, dict) and self.build_out is None:
            data.pop("build_out", None)
            data.pop("build_out_note", None)
        return data


def _model_of(key: str) -> SwitchModel:
    if key in CATALOG:
        return CATALOG[key]
    return lookup_switch(key)


def _role_order(role: str) -> int:
    """Compute tiers first, then the access networks; switch and cable roles alike."""
    order = (
        "leaf",
        "node_leaf",
        "spine",
        "leaf_spine",
        "core",
        "spine_core",
        "manager_leaf",
        "storage",
        "inband",
        "oob",
    )
    return order.index(role) if role in order else len(order)


def bill_of_materials(topo: FabricTopology) -> Bom:
    """Count switches, cables, optics and servers of ``topo`` (see the module docstring).

    The steps: :func:`_switch_lines` (switches by model), :func:`_count_links` (cables by
    type × role, optics per server port and per lit switch cage), :func:`_optic_lines`,
    :func:`_compute_counts` (next to the sizing card's) and :func:`_totals`.
    """
    plan = topo.plan
    switch_lines = _switch_lines(topo)
    links = _count_links(topo)
    cable_lines = tuple(
        CableLine(cable_type=t, role=r, speed_gbps=s, count=n)
        for (t, r, s), n in sorted(
            links.cables.items(), key=lambda kv: (_role_order(kv[0][1]), kv[0])
        )
    )
    optic_lines = _optic_lines(links)
    prof = plan.spec.node_profile
    servers: tuple[ServerLine, ...] = (
        ServerLine(
            profile=prof.name,
            count=plan.nodes,
            gpus=plan.gpus,
            rack_units_total=prof.rack_units * plan.nodes,
        ),
    )
    managers = [d for d in topo.devices if d.role == "manager"]
    if managers:
        # Fabric-manager hosts (UFM appliances / OpenSM hosts): 1U each is an assumption
        # (UNVERIFIED for a given appliance model); no GPUs.
        servers += (
            ServerLine(
                profile=managers[0].model,
                count=len(managers),
                gpus=0,
                rack_units_total=len(managers),
            ),
        )
    return Bom(
        name=plan.spec.name,
        switches=switch_lines,
        cables=cable_lines,
        optics=optic_lines,
        servers=servers,
        compute=_compute_counts(topo, links),
        totals=_totals(topo, switch_lines, optic_lines),
        parts=parts_list(topo),
        build_out=plan.build_out,
        build_out_note=build_out_line(plan),
    )


def _switch_lines(topo: FabricTopology) -> tuple[SwitchLine, ...]:
    """Switches by model with their roles, rack units and power, leaf models first."""
    plan = topo.plan
    per_model: dict[str, Counter[str]] = defaultdict(Counter)
    for d in topo.devices:
        if d.role not in HOST_ROLES:
            per_model[d.model][d.role] += 1
    switch_lines = []
    for key, roles in per_model.items():
        m = plan.switch_model if key == plan.switch_model.key else _model_of(key)
        n = sum(roles.values())
        switch_lines.append(
            SwitchLine(
                model=key,
                name=m.name,
                count=n,
                roles=dict(sorted(roles.items(), key=lambda kv: _role_order(kv[0]))),
                rack_units=m.rack_units,
                rack_units_total=m.rack_units * n,
                power_w=m.power_w,
                power_w_total=None if m.power_w is None else m.power_w * n,
                power_basis=m.power_basis,
            )
        )
    switch_lines.sort(key=lambda s: (min(_role_order(r) for r in s.roles), s.model))
    return tuple(switch_lines)


@dataclass
class _LinkCounts:
    cables: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    """Cables by (type, role, speed)."""
    server_optics: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Server-side modules by (optic, network)."""
    switch_optics: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Switch modules by (optic, network): one per used cage."""


def _count_links(topo: FabricTopology) -> _LinkCounts:
    """Cables by type × role, server optics per port, switch optics per used cage."""
    plan = topo.plan
    by_name = {d.name: d for d in topo.devices}
    counts = _LinkCounts()
    # (switch, cage) -> (lowest used port, its optic, network): one module per used cage.
    cages: dict[tuple[str, int], tuple[int, str, str]] = {}
    ppc_cache: dict[tuple[str, int], int] = {}
    prof = plan.spec.node_profile
    server_cages: set[tuple[str, str]] = set()

    def ports_per_cage(dev_name: str, speed: int) -> int:
        d = by_name[dev_name]
        if d.network == "compute":  # each tier's model at its speed (a leaf: its downlinks')
            return plan.tier_ports_per_cage(d.role)
        key = (d.model, speed)
        if key not in ppc_cache:
            ppc_cache[key] = port_mode(_model_of(d.model), speed).ports_per_cage
        return ppc_cache[key]

    for k in topo.links:
        counts.cables[(k.cable_type, k.role, k.speed_gbps)] += 1
        for dev, port, number, optic in (
            (k.a_device, k.a_port, k.a_port_number, k.a_optic),
            (k.b_device, k.b_port, k.b_port_number, k.b_optic),
        ):
            if optic == NO_OPTIC or not optic:
                continue
            if by_name[dev].role in HOST_ROLES:
                # One module per server cage: the profile's twin-port OSFP serves two rails.
                # (A fabric manager's port takes its own module.)
                scage = prof.cage_of(port) if k.role == "node_leaf" else ""
                if scage and (dev, scage) in server_cages:
                    continue
                server_cages.add((dev, scage))
                counts.server_optics[(optic, k.network)] += 1
                continue
            cage = cage_of(number, ports_per_cage(dev, k.speed_gbps))[0]
            # A cage whose two ports carry different optics (rare: a down/up boundary inside
            # a cage) takes the module of its lowest used port.
            prev = cages.get((dev, cage))
            if prev is None or number < prev[0]:
                cages[(dev, cage)] = (number, optic, by_name[dev].network)
    for _, optic, net in cages.values():
        counts.switch_optics[(optic, net)] += 1
    return counts


def _optic_lines(links: _LinkCounts) -> tuple[OpticLine, ...]:
    """Server optics, then switch optics, each by network then module."""
    return tuple(
        [
            OpticLine(optic=o, side="server", network=net, count=n)
            for (o, net), n in sorted(
                links.server_optics.items(), key=lambda kv: (_net_order(kv[0][1]), kv[0][0])
            )
        ]
        + [
            OpticLine(optic=o, side="switch", network=net, count=n)
            for (o, net), n in sorted(
                links.switch_optics.items(), key=lambda kv: (_net_order(kv[0][1]), kv[0][0])
            )
        ]
    )


def _compute_counts(topo: FabricTopology, links: _LinkCounts) -> ComputeCounts:
    """Compute-fabric switches, cables and optics counted here, next to the sizing card's."""
    plan = topo.plan
    sw_counts = {r: sum(1 for d in topo.devices if d.role == r) for r in ("leaf", "spine", "core")}
    sw_counts["total"] = sum(sw_counts.values())
    cab_counts = {r: 0 for r in COMPUTE_ROLES}
    cab_counts["manager_leaf"] = 0
    for (_, r, _), n in links.cables.items():
        if r in cab_counts:
            cab_counts[r] += n
    cab_counts["total"] = sum(cab_counts.values())
    nic = sum(n for (_, net), n in links.server_optics.items() if net == "compute")
    sw = sum(n for (_, net), n in links.switch_optics.items() if net == "compute")
    tr_counts = {"nic": nic, "switch": sw, "total": nic + sw}
    sizing_sw = plan.switches.model_dump()
    sizing_cab = plan.cables.model_dump()
    sizing_tr = plan.transceivers.model_dump()
    return ComputeCounts(
        switches=sw_counts,
        cables=cab_counts,
        transceivers=tr_counts,
        sizing_switches=sizing_sw,
        sizing_cables=sizing_cab,
        sizing_transceivers=sizing_tr,
        matches_sizing=(
            sw_counts == sizing_sw and cab_counts == sizing_cab and tr_counts == sizing_tr
        ),
    )


def _totals(
    topo: FabricTopology, switch_lines: tuple[SwitchLine, ...], optic_lines: tuple[OpticLine, ...]
) -> BomTotals:
    """Grand totals (power only over the models whose power is published)."""
    plan = topo.plan
    known = [s for s in switch_lines if s.power_w_total is not None]
    return BomTotals(
        switches=sum(s.count for s in switch_lines),
        switch_rack_units=sum(s.rack_units_total for s in switch_lines),
        switch_power_w=sum(s.power_w_total or 0 for s in known),
        switches_without_power=sum(s.count for s in switch_lines if s.power_w is None),
        cables=len(topo.links),
        optics=sum(o.count for o in optic_lines),
        servers=plan.nodes,
        gpus=plan.gpus,
    )


def _net_order(net: str) -> int:
    order = ("compute", "storage", "inband", "oob")
    return order.index(net) if net in order else len(order)


# --------------------------------------------------------------------------- renderings


def _num(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def _roles_text(roles: dict[str, int]) -> str:
    return ", ".join(f"{n:,} {r}" for r, n in roles.items())


def bom_json(bom: Bom) -> dict[str, Any]:
    """The BOM as JSON-ready data (the pydantic model's dump)."""
    return bom.model_dump(mode="json")


def bom_table(bom: Bom) -> RenderableType:
    """Rich tables: switches, cables, optics, servers and totals."""
    sw = Table(title="Switches", title_justify="left")
    for col, just in (
        ("Model", "left"),
        ("Roles", "left"),
        ("Count", "right"),
        ("RU each", "right"),
        ("RU total", "right"),
        ("W each", "right"),
        ("W total", "right"),
    ):
        sw.add_column(col, justify=just)  # type: ignore[arg-type]
    for s in bom.switches:
        sw.add_row(
            s.name,
            _roles_text(s.roles),
            _num(s.count),
            _num(s.rack_units),
            _num(s.rack_units_total),
            power_cell(s.power_w, s.power_unverified),
            power_cell(s.power_w_total, s.power_unverified),
        )
    cab = Table(title="Cables", title_justify="left")
    for col, just in (("Type", "left"), ("Role", "left"), ("Speed", "right"), ("Count", "right")):
        cab.add_column(col, justify=just)  # type: ignore[arg-type]
    for c in bom.cables:
        cab.add_row(c.cable_type, c.role, f"{c.speed_gbps}G", _num(c.count))
    opt = Table(title="Optics", title_justify="left")
    for col, just in (("Module", "left"), ("End", "left"), ("Network", "left"), ("Count", "right")):
        opt.add_column(col, justify=just)  # type: ignore[arg-type]
    for o in bom.optics:
        opt.add_row(o.optic, o.side, o.network, _num(o.count))
    srv = Table(title="Servers", title_justify="left")
    for col, just in (
        ("Profile", "left"),
        ("Count", "right"),
        ("GPUs", "right"),
        ("RU total", "right"),
    ):
        srv.add_column(col, justify=just)  # type: ignore[arg-type]
    for s2 in bom.servers:
        srv.add_row(s2.profile, _num(s2.count), _num(s2.gpus), _num(s2.rack_units_total))
    unverified = any(s.power_unverified for s in bom.switches)
    return Group(
        Text(f"Bill of materials — {bom.name}", style="bold"),
        sw,
        *([Text(UNVERIFIED_NOTE, style="dim")] if unverified else []),
        cab,
        opt,
        srv,
        Text(_totals_line(bom)),
        Text(_match_line(bom), style="dim"),
        *([Text("Build-out: " + bom.build_out_note)] if bom.build_out_note else []),
        _parts_table(bom.parts),
    )


def _parts_table(parts: PartsList) -> RenderableType:
    """The order list (cables by part and length, optics by part) as one rich table."""
    t = Table(title="To order (by part number and length)", title_justify="left")
    for col, just in (("Part", "left"), ("Medium", "left"), ("Length", "right"), ("Qty", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for c in parts.cables:
        mark = "" if c.verified else UNVERIFIED_MARK
        t.add_row(c.part_number + mark, c.medium, f"{c.length_m:g} m", _num(c.count))
    for o in parts.optics:
        t.add_row(
            o.part_number + ("" if o.verified else UNVERIFIED_MARK), "optic", "", _num(o.count)
        )
    return t


def _totals_line(bom: Bom) -> str:
    t = bom.totals
    unverified = any(s.power_unverified for s in bom.switches)
    power = f"{t.switch_power_w:,} W switch power (optics excluded"
    power += "; UNVERIFIED *)" if unverified else ")"
    if t.switches_without_power:
        power += f", {t.switches_without_power:,} switches without a published figure"
    return (
        f"Totals: {t.switches:,} switches ({t.switch_rack_units:,} RU), {t.cables:,} cables, "
        f"{t.optics:,} optics, {t.servers:,} servers ({t.gpus:,} GPUs); {power}."
    )


def _match_line(bom: Bom) -> str:
    c = bom.compute
    if c.matches_sizing:
        return (
            "Compute counts match the sizing card: "
            f"{c.switches['total']:,} switches, {c.cables['total']:,} cables, "
            f"{c.transceivers['total']:,} transceivers."
        )
    return (
        f"Compute counts DIFFER from the sizing card: link list {c.switches}, {c.cables}, "
        f"{c.transceivers}; sizing {c.sizing_switches}, {c.sizing_cables}, "
        f"{c.sizing_transceivers}."
    )


def bom_markdown(bom: Bom) -> str:
    """The BOM as Markdown tables (for a pull request or an order)."""
    out = [
        f"### Bill of materials — {bom.name}",
        "",
        "| Switch | Roles | Count | RU each | RU total | W each | W total |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    out += [
        f"| {s.name} | {_roles_text(s.roles)} | {_num(s.count)} | {_num(s.rack_units)} | "
        f"{_num(s.rack_units_total)} | {power_cell(s.power_w, s.power_unverified)} | "
        f"{power_cell(s.power_w_total, s.power_unverified)} |"
        for s in bom.switches
    ]
    if any(s.power_unverified for s in bom.switches):
        out += ["", f"\\{UNVERIFIED_NOTE}"]  # escaped: a leading * is a Markdown list
    out += ["", "| Cable | Role | Speed | Count |", "|---|---|--:|--:|"]
    out += [
        f"| {c.cable_type} | {c.role} | {c.speed_gbps}G | {_num(c.count)} |" for c in bom.cables
    ]
    out += ["", "| Optic | End | Network | Count |", "|---|---|---|--:|"]
    out += [f"| {o.optic} | {o.side} | {o.network} | {_num(o.count)} |" for o in bom.optics]
    out += ["", "| Server profile | Count | GPUs | RU total |", "|---|--:|--:|--:|"]
    out += [
        f"| {s.profile} | {_num(s.count)} | {_num(s.gpus)} | {_num(s.rack_units_total)} |"
        for s in bom.servers
    ]
    out += ["", _totals_line(bom), "", f"_{_match_line(bom)}_", ""]
    if bom.build_out_note:
        out += [f"Build-out: {bom.build_out_note}.", ""]
    out += ["#" + line if line.startswith("## ") else line for line in parts_markdown(bom.parts)]
    return "\n".join(out) + "\n"


__all__ = [
    "UNVERIFIED_MARK",
    "UNVERIFIED_NOTE",
    "Bom",
    "BomTotals",
    "CableLine",
    "ComputeCounts",
    "OpticLine",
    "ServerLine",
    "SwitchLine",
    "bill_of_materials",
    "bom_json",
    "bom_markdown",
    "bom_table",
    "power_cell",
]
