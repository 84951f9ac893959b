"""The bill of materials: counts from the link list equal the sizing card, and renderings."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from rich.console import Console

from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import COMPUTE_ROLES
from fabric_stack.views.bom import bill_of_materials, bom_json, bom_markdown, bom_table
from tests.topology_fixtures import Spec, any_spec, topo, topo_for


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_spec)
def test_link_list_counts_equal_the_sizing_counts(key: Spec) -> None:
    t = topo_for(key)
    plan = t.plan
    # independent of the BOM code: count straight from devices and links
    roles = t.count_switches()
    assert (roles.get("leaf", 0), roles.get("spine", 0), roles.get("core", 0)) == (
        plan.switches.leaf,
        plan.switches.spine,
        plan.switches.core,
    )
    cables = t.count_links()
    assert [cables.get(r, 0) for r in COMPUTE_ROLES] == [
        plan.cables.node_leaf,
        plan.cables.leaf_spine,
        plan.cables.spine_core,
    ]
    # and through the BOM, optics included
    bom = bill_of_materials(t)
    c = bom.compute
    assert c.matches_sizing, (
        c.switches,
        c.sizing_switches,
        c.cables,
        c.sizing_cables,
        c.transceivers,
        c.sizing_transceivers,
    )
    assert c.transceivers == {
        "nic": plan.transceivers.nic,
        "switch": plan.transceivers.switch,
        "total": plan.transceivers.total,
    }


def test_switch_optics_are_one_per_used_cage() -> None:
    # DGX H100 on IB, 1,024 GPUs: every compute run is fibre, so the switch modules are the
    # sizing card's lit switch cages (its formula, independent of the order count) and the
    # server modules four per DGX (its OSFP cages) plus one per UFM port
    t = topo(gpus=1024, node_profile="dgx-h100")
    bom = bill_of_materials(t)
    lines = {(o.optic, o.side, o.network): o.count for o in bom.optics}
    assert lines[("MMA4Z00-NS", "switch", "compute")] == t.plan.transceivers.switch == 1536
    assert lines[("MMA4Z00-NS-FLT", "server", "compute")] == 4 * t.plan.nodes == 508
    assert lines[("MMA4Z00-NS400", "server", "compute")] == 2
    # RJ45 OOB ends take no module
    assert not any(o.network == "oob" for o in bom.optics)


def test_switches_power_and_rack_units_come_from_the_catalog() -> None:
    bom = bill_of_materials(topo())
    qm = next(s for s in bom.switches if s.model == "qm9700")
    assert (qm.count, qm.roles) == (12, {"leaf": 8, "spine": 4})
    assert qm.rack_units == 1 and qm.rack_units_total == 12
    assert qm.power_w == 747 and qm.power_w_total == 12 * 747
    models = {s.model for s in bom.switches}
    assert models == {"qm9700", "sn5600", "sn2201"}
    assert bom.totals.switch_power_w == sum(s.power_w_total or 0 for s in bom.switches)
    assert bom.totals.switches_without_power == 0
    assert bom.servers[0].profile == "hgx-8gpu" and bom.servers[0].count == 16


def test_generic_switches_have_unknown_power() -> None:
    bom = bill_of_materials(topo(gpus=256, switch="generic-32x400"))
    g = next(s for s in bom.switches if s.model == "generic-32x400")
    assert g.power_w is None and g.power_w_total is None
    assert bom.totals.switches_without_power == g.count
    assert "switches without a published figure" in bom_markdown(bom)


def test_cables_by_type_and_role_add_up() -> None:
    t = topo(gpus=1024, planes=2)
    bom = bill_of_materials(t)
    assert sum(c.links for c in bom.cables) == len(t.links) == bom.totals.links
    assert sum(c.count for c in bom.cables) == bom.totals.cables <= len(t.links)
    by_role: dict[str, int] = {}
    for c in bom.cables:
        by_role[c.role] = by_role.get(c.role, 0) + c.links
    assert by_role == t.count_links()


def test_renderings() -> None:
    bom = bill_of_materials(topo())
    data = json.loads(json.dumps(bom_json(bom)))
    assert data["compute"]["matches_sizing"] is True
    assert data["totals"]["switches"] == 16
    md = bom_markdown(bom)
    assert "| NVIDIA Quantum-2 QM9700 | 8 leaf, 4 spine | 12 | 1 | 12 | 747 * | 8,964 * |" in md
    assert "Compute counts match the sizing card: 12 switches, 386 links, 452 cages lit." in md
    console = Console(width=140, record=True, color_system=None)
    console.print(bom_table(bom))
    text = console.export_text()
    assert "Bill of materials — gpu-cluster" in text and "MMA4Z00-NS" in text


def test_bom_reads_the_plan_not_a_formula() -> None:
    # a topology with a cable removed no longer matches the sizing card
    from dataclasses import replace

    plan = size_fabric(validate_spec())
    t = topo()
    assert t.plan == plan
    broken = replace(t, links=t.links[1:])
    assert not bill_of_materials(broken).compute.matches_sizing
