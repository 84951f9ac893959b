"""Bill of materials (`fabric-stack bom`): what to order, counted from the link list.

Every count here is taken from :class:`~fabric_stack.topology.build.FabricTopology`
— devices and cables — never from a formula, so the BOM cannot disagree with
the cabling plan. The compute-fabric part is reported next to the sizing
card's figures (:attr:`Bom.compute`) and a test asserts they match.

Counting rules
--------------
* **Switches** by model: count, rack units and power (catalog ``power_w``,
  optics excluded; unknown for generic switches).
* **Cables and optics** are read from :func:`fabric_stack.plant.order.order_of`, the one
  count the order list, the report and ``layout`` read too: cables as installed (a 1:2
  splitter or a twin-port cable once, carrying two links; a link whose catalog family needs
  two straight fibres, an unsplit 800G twin-port OSFP port, twice), one module per *cage* with a
  lit port at both ends, of the part that end's hardware takes (see
  :mod:`fabric_stack.hardware.optics`). DAC, ACC and RJ45 ends take no module.
* **Power**: ``power_w`` is the switches' catalog power plus every module's.
* **The sizing card check** (:attr:`Bom.compute`) compares the compute switches, the
  compute *links* and the compute cages lit (a module or a copper plug each) with the
  sizing card's formulas.
* **Cost** (``--prices``): switches by catalog key, cables and optics by part number,
  priced by :func:`fabric_stack.views.costs.cost_of`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fabric_stack.files.prices import PriceList
from fabric_stack.hardware.switches import CATALOG, SwitchModel, lookup_switch
from fabric_stack.plant.ends import lit_compute_cages
from fabric_stack.plant.order import Order, order_of
from fabric_stack.sizing.build_out import build_out_line
from fabric_stack.sizing.model import BuildOut
from fabric_stack.topology.build import COMPUTE_ROLES, HOST_ROLES, FabricTopology
from fabric_stack.views.bom_parts import PartsList, parts_list, parts_markdown, parts_table
from fabric_stack.views.costs import Cost, cost_line, cost_markdown, cost_of

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

    cable_type: str = Field(
        description="What the cable is: medium, twin-port or 1:2 splitter, SKU stem, e.g. "
        "'MPO-12/APC OM4 multimode fibre (MFP7E10-N)'."
    )
    role: str = Field(description="node_leaf, leaf_spine, spine_core, storage, inband or oob.")
    speed_gbps: int = Field(description="Link speed.")
    count: int = Field(
        description="Cables (a splitter or twin-port cable once; two straight fibres per "
        "unsplit 800G twin-port OSFP link)."
    )
    links: int = Field(description="Links these cables carry.")


class OpticLine(_Model):
    """Pluggable modules of one part number at one kind of end."""

    optic: str = Field(description="Module part number, e.g. 'MMA4Z00-NS'.")
    form_factor: str = Field(description="What cage it fits, e.g. 'OSFP twin-port flat-top'.")
    side: str = Field(description="'server' or 'switch': one module per cage with a lit port.")
    network: str = Field(description="Network the modules serve (compute, storage, ...).")
    count: int = Field(description="Modules.")
    power_w: float = Field(description="Power of one module, W.")
    verified: bool = Field(description="False when the SKU or power is UNVERIFIED.")
    source: str = Field(description="Where the part and its power come from.")


class ServerLine(_Model):
    """Servers of one profile."""

    profile: str = Field(description="Node profile name.")
    count: int = Field(description="Servers.")
    gpus: int = Field(description="GPUs in all of them.")
    rack_units_total: int = Field(description="Rack units of all of them.")


class ComputeCounts(_Model):
    """Compute-fabric counts from the link list, beside the sizing card's (they must agree)."""

    switches: dict[str, int] = Field(description="Compute switches per tier (leaf/spine/core).")
    cables: dict[str, int] = Field(
        description="Compute links per role (node_leaf/...): one cable each if all were "
        "single-link, as the sizing card counts them."
    )
    transceivers: dict[str, int] = Field(
        description="Compute cages lit (nic, switch, total): a module or a copper plug each, "
        "as the sizing card counts transceivers."
    )
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
    cables: int = Field(
        description="All cables (as installed: a splitter once, an 800G twin-port link's two "
        "fibres twice); the order list's total."
    )
    links: int = Field(description="All links (a splitter's or twin-port cable's legs each).")
    optics: int = Field(description="All pluggable modules.")
    optics_power_w: float = Field(description="Power of all modules, W.")
    power_w: float = Field(description="switch_power_w + optics_power_w, W.")
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
    cost: Cost | None = Field(
        default=None, description="What the order costs at the --prices file's prices."
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


def bill_of_materials(topo: FabricTopology, prices: PriceList | None = None) -> Bom:
    """Count switches, cables, optics and servers of ``topo`` (see the module docstring);
    with ``prices``, what they cost.

    The steps: :func:`_switch_lines` (switches by model), the topology's order
    (:func:`~fabric_stack.plant.order.order_of`: cables and modules, counted once) read into
    :func:`_cable_lines` and :func:`_optic_lines`, :func:`_compute_counts` (next to the
    sizing card's), :func:`_totals` and, with prices, :func:`_cost`.
    """
    plan = topo.plan
    order = order_of(topo)
    switch_lines = _switch_lines(topo)
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
    parts = parts_list(order)
    return Bom(
        name=plan.spec.name,
        switches=switch_lines,
        cables=_cable_lines(order),
        optics=_optic_lines(order),
        servers=servers,
        compute=_compute_counts(topo),
        totals=_totals(topo, switch_lines, order),
        parts=parts,
        cost=None if prices is None else _cost(switch_lines, parts, prices),
        build_out=plan.build_out,
        build_out_note=build_out_line(plan),
    )


def _cable_lines(order: Order) -> tuple[CableLine, ...]:
    """Cables by description × role × speed, compute roles first (a link whose family needs
    two fibres counts two cables: the order counts them so)."""
    per: dict[tuple[str, str, int], list[int]] = {}
    for c in order.cables:
        got = per.setdefault((c.description, c.role, c.speed_gbps), [0, 0])
        got[0] += c.cables
        got[1] += c.links
    return tuple(
        CableLine(cable_type=t, role=r, speed_gbps=sp, count=n, links=k)
        for (t, r, sp), (n, k) in sorted(per.items(), key=lambda kv: (_role_order(kv[0][1]), kv[0]))
    )


def _cost(switches: tuple[SwitchLine, ...], parts: PartsList, prices: PriceList) -> Cost:
    """Switches by catalog key, cables and optics by part number, at ``prices``."""
    return cost_of(
        [(s.model, s.count) for s in switches]
        + [(c.part_number, c.count) for c in parts.cables]
        + [(o.part_number, o.count) for o in parts.optics],
        prices,
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


def _optic_lines(order: Order) -> tuple[OpticLine, ...]:
    """Server optics, then switch optics, each by network then part number."""
    lines = sorted(
        order.modules,
        key=lambda m: (m.end != "server", _net_order(m.network), m.part_number),
    )
    per: dict[tuple[str, str, str, str], OpticLine] = {}
    for m in lines:
        # One SKU in two kinds of cage (an NDR module in a QM9700 and in a Q3400) stays two
        # lines: each carries its own source and UNVERIFIED mark.
        key = (m.part_number, m.end, m.network, m.form_factor)
        prev = per.get(key)
        per[key] = OpticLine(
            optic=m.part_number,
            form_factor=m.form_factor,
            side=m.end,
            network=m.network,
            count=m.count + (prev.count if prev else 0),
            power_w=m.power_w,
            verified=m.verified,
            source=m.source,
        )
    return tuple(per.values())


def _compute_counts(topo: FabricTopology) -> ComputeCounts:
    """Compute-fabric switches, links and lit cages counted here, next to the sizing card's."""
    plan = topo.plan
    sw_counts = {r: sum(1 for d in topo.devices if d.role == r) for r in ("leaf", "spine", "core")}
    sw_counts["total"] = sum(sw_counts.values())
    cab_counts = {r: 0 for r in COMPUTE_ROLES}
    cab_counts["manager_leaf"] = 0
    for k in topo.links:
        if k.role in cab_counts:
            cab_counts[k.role] += 1
    cab_counts["total"] = sum(cab_counts.values())
    nic, sw = lit_compute_cages(topo)
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


def _totals(topo: FabricTopology, switch_lines: tuple[SwitchLine, ...], order: Order) -> BomTotals:
    """Grand totals (switch power only over the models whose power is published; cables as
    the order counts them, a two-fibre link twice)."""
    plan = topo.plan
    known = [s for s in switch_lines if s.power_w_total is not None]
    switch_w = sum(s.power_w_total or 0 for s in known)
    optics_w = order.optics_power_w
    return BomTotals(
        switches=sum(s.count for s in switch_lines),
        switch_rack_units=sum(s.rack_units_total for s in switch_lines),
        switch_power_w=switch_w,
        switches_without_power=sum(s.count for s in switch_lines if s.power_w is None),
        cables=order.cables_total,
        links=len(topo.links),
        optics=order.modules_total,
        optics_power_w=optics_w,
        power_w=round(switch_w + optics_w, 1),
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
    for col, just in (
        ("Type", "left"),
        ("Role", "left"),
        ("Speed", "right"),
        ("Links", "right"),
        ("Cables", "right"),
    ):
        cab.add_column(col, justify=just)  # type: ignore[arg-type]
    for c in bom.cables:
        cab.add_row(c.cable_type, c.role, f"{c.speed_gbps}G", _num(c.links), _num(c.count))
    opt = Table(title="Optics (one per lit cage)", title_justify="left")
    for col, just in (
        ("Module", "left"),
        ("Fits", "left"),
        ("End", "left"),
        ("Network", "left"),
        ("Count", "right"),
        ("W each", "right"),
    ):
        opt.add_column(col, justify=just)  # type: ignore[arg-type]
    for o in bom.optics:
        opt.add_row(
            o.optic + _mark(o.verified),
            o.form_factor,
            o.side,
            o.network,
            _num(o.count),
            f"{o.power_w:g}",
        )
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
        parts_table(bom.parts, [(x.model, x.count) for x in bom.switches], bom.cost),
        *([Text(cost_line(bom.cost))] if bom.cost else []),
    )


def _mark(verified: bool) -> str:
    return "" if verified else UNVERIFIED_MARK


def _totals_line(bom: Bom) -> str:
    t = bom.totals
    unverified = any(s.power_unverified for s in bom.switches) or any(
        not o.verified for o in bom.optics
    )
    power = (
        f"{t.power_w:,.0f} W power ({t.switch_power_w:,} W switches + "
        f"{t.optics_power_w:,.0f} W optics"
    )
    power += "; UNVERIFIED *)" if unverified else ")"
    if t.switches_without_power:
        power += f", {t.switches_without_power:,} switches without a published figure"
    return (
        f"Totals: {t.switches:,} switches ({t.switch_rack_units:,} RU), {t.cables:,} cables "
        f"({t.links:,} links), {t.optics:,} optics, {t.servers:,} servers ({t.gpus:,} GPUs); "
        f"{power}."
    )


def _match_line(bom: Bom) -> str:
    c = bom.compute
    if c.matches_sizing:
        return (
            "Compute counts match the sizing card: "
            f"{c.switches['total']:,} switches, {c.cables['total']:,} links, "
            f"{c.transceivers['total']:,} cages lit."
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
    out += ["", "| Cable | Role | Speed | Links | Cables |", "|---|---|--:|--:|--:|"]
    out += [
        f"| {c.cable_type} | {c.role} | {c.speed_gbps}G | {_num(c.links)} | {_num(c.count)} |"
        for c in bom.cables
    ]
    out += ["", "| Optic | Fits | End | Network | Count | W each |", "|---|---|---|---|--:|--:|"]
    out += [
        f"| {o.optic}{_mark(o.verified)} | {o.form_factor} | {o.side} | {o.network} | "
        f"{_num(o.count)} | {o.power_w:g} |"
        for o in bom.optics
    ]
    out += ["", "| Server profile | Count | GPUs | RU total |", "|---|--:|--:|--:|"]
    out += [
        f"| {s.profile} | {_num(s.count)} | {_num(s.gpus)} | {_num(s.rack_units_total)} |"
        for s in bom.servers
    ]
    out += ["", _totals_line(bom), "", f"_{_match_line(bom)}_", ""]
    if bom.build_out_note:
        out += [f"Build-out: {bom.build_out_note}.", ""]
    out += ["#" + line if line.startswith("## ") else line for line in parts_markdown(bom.parts)]
    if bom.cost:
        out += ["", *cost_markdown(bom.cost)]
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
