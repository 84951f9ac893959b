"""Fibres per link in the order (#43): what a buyer orders for 800G links.

* An unsplit 800G port of a 100G-PAM4 twin-port OSFP cage (SN5600) runs over TWO straight
  MPO-12/APC fibres, one per 400G half (docs.nvidia.com/networking/display/MMA4Z00NS400T/
  Connectivity+Scenarios, case 1 "Switch-to-switch at 800Gb/s": "two, straight fiber
  cables (MFP7E10)"; MMS4X00-NS-T overview: "Twin-Port transceivers require ordering two
  fibers"): the BOM, its order list, the cabling export and the pull list say so alike.
* An 800G port of a Quantum-X800 Q3400 cage is one 4-channel 200G-PAM4 half of an XDR
  twin-port module, single-mode only (docs.nvidia.com/networking/display/800g200gpam4list,
  "Important notes"): one straight single-mode MFP7E30 per link, never OM4.
* A ConnectX-8 800G OSFP end takes a named RHS single-mode module marked UNVERIFIED.
* The default seed design's order is unchanged (one cable per one-link part).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric_stack.hardware.cables import (
    CABLE_FAMILIES,
    CX8_OSFP_800,
    XDR_CABLE_FAMILIES,
    CableFamily,
    cables_per_link,
    families_for,
    family_for_cages,
)
from fabric_stack.hardware.optics import MODULES
from fabric_stack.plant.check import check_plant
from fabric_stack.plant.order import count_cables, link_parts, order_of
from fabric_stack.plant.plan import plant_of
from fabric_stack.topology.build import FabricTopology
from fabric_stack.views.bom import Bom, bill_of_materials, bom_markdown
from fabric_stack.views.exports import CSV_COLUMNS, link_rows
from fabric_stack.views.plant import RUN_COLUMNS, run_rows
from tests.topology_fixtures import spec_key, topo_for

ROCE_800 = {"gpus": 1024, "fabric": "roce", "switch": "sn5600", "uplink_gbps": 800}
"""validate/matrix.py's roce-800g-uplinks."""
XDR_800 = {"gpus": 256, "switch": "q3400", "nic_gbps": 800}
"""An all-Quantum-X800 fabric of ConnectX-8 servers at XDR 800G."""


@pytest.fixture(scope="module")
def roce800() -> tuple[FabricTopology, Bom]:
    t = topo_for(spec_key(**ROCE_800))
    return t, bill_of_materials(t)


@pytest.fixture(scope="module")
def xdr800() -> tuple[FabricTopology, Bom]:
    t = topo_for(spec_key(**XDR_800))
    return t, bill_of_materials(t)


def _twin_800_links(t: FabricTopology) -> int:
    """800G links between two SN5600 (100G-PAM4 twin-port OSFP) cages, from the link list."""
    model = {d.name: d.model for d in t.devices}
    return sum(
        1
        for k in t.links
        if k.speed_gbps == 800 and model[k.a_device] == model[k.b_device] == "sn5600"
    )


def test_an_800g_twin_port_link_orders_two_straight_fibres(
    roce800: tuple[FabricTopology, Bom],
) -> None:
    t, bom = roce800
    n = _twin_800_links(t)
    assert n == 512  # 1,024 GPUs: 32 leaves x 16 x 800G up (docs/sizing.md)
    (line,) = [c for c in bom.cables if c.speed_gbps == 800]
    assert (line.role, line.links, line.count) == ("leaf_spine", n, 2 * n)
    assert "MFP7E10-N" in line.cable_type and "2 x straight" in line.cable_type
    assert "GENERIC" not in line.cable_type
    runs = plant_of(t).runs
    fibre = [r for k, r in zip(t.links, runs, strict=True) if k.speed_gbps == 800]
    assert {r.family for r in fibre} <= {"mmf-800-switch", "smf-800-switch"}
    assert {(r.a_optic, r.b_optic) for r in fibre} <= {
        ("MMA4Z00-NS", "MMA4Z00-NS"),
        ("MMS4X00-NS", "MMS4X00-NS"),
    }


def test_the_boms_totals_agree_in_its_two_views(roce800: tuple[FabricTopology, Bom]) -> None:
    """Summary lines, order list and totals count the same cables (two per 800G link), and
    the order list's MFP7E10 count is the 400G host legs plus two per 800G link."""
    t, bom = roce800
    assert sum(c.count for c in bom.cables) == bom.parts.cables_total == bom.totals.cables
    order = order_of(t)
    assert bom.totals.cables == order.cables_total
    spine = [c for c in order.cables if c.role == "leaf_spine"]
    assert sum(c.cables for c in spine) == 2 * sum(c.links for c in spine) == 2 * _twin_800_links(t)
    e10 = sum(c.count for c in bom.parts.cables if c.part_number.startswith("MFP7E10-N"))
    host = sum(c.count for c in bom.cables if "(MFP7E10-N)" in c.cable_type and c.speed_gbps == 400)
    assert e10 == host + 2 * _twin_800_links(t)
    assert f"{bom.totals.cables:,} cables" in bom_markdown(bom)


def test_export_and_pull_list_say_two_fibres(roce800: tuple[FabricTopology, Bom]) -> None:
    """The cabling export's cable type and the layout run list's part cell of each 800G
    link name the two fibres, so no view counts one where the BOM orders two."""
    t, _ = roce800
    ct, pn = CSV_COLUMNS.index("cable_type"), CSV_COLUMNS.index("part_number")
    rows = [r for r in link_rows(t) if r[1] == "leaf_spine"]
    assert len(rows) == _twin_800_links(t)
    assert all("2 x straight" in r[ct] and r[pn].startswith("MFP7E") for r in rows)
    part, cid = RUN_COLUMNS.index("part_number"), RUN_COLUMNS.index("cable_id")
    speed = {k.id: k.speed_gbps for k in t.links}
    pulls = list(run_rows(t))
    assert len(pulls) == 2 * len(t.links)  # each run where it leaves and where it arrives
    for r in pulls:
        assert str(r[part]).startswith("2x MFP7E") == (speed[r[cid]] == 800), r


def test_q3400_800g_links_are_single_mode_one_fibre_each(
    xdr800: tuple[FabricTopology, Bom],
) -> None:
    t, bom = xdr800
    model = {d.name: d.model for d in t.devices}
    runs = plant_of(t).runs
    xdr = [(k, r) for k, r in zip(t.links, runs, strict=True) if k.speed_gbps == 800]
    assert xdr and all(model[k.b_device] == "q3400" for k, _ in xdr)
    assert {r.medium for _, r in xdr} == {"smf"}
    assert {r.part_number.rsplit("N", 1)[0] for _, r in xdr} == {"MFP7E30-"}
    assert {r.family for _, r in xdr} == {f.key for f in XDR_CABLE_FAMILIES}
    lines = [c for c in bom.cables if c.speed_gbps == 800]
    assert lines and all("OM4" not in c.cable_type and "OS2" in c.cable_type for c in lines)
    assert all(c.count == c.links for c in lines)  # one fibre per XDR 800G link
    assert not [
        p
        for p in bom.parts.cables
        if p.part_number.startswith("GENERIC-MPO12-OM4") and p.medium == "smf"
    ]


def test_a_connectx8_800g_end_names_its_osfp_module_unverified(
    xdr800: tuple[FabricTopology, Bom],
) -> None:
    t, bom = xdr800
    (line,) = [o for o in bom.optics if o.side == "server" and o.network == "compute"]
    assert line.optic == CX8_OSFP_800 and not line.verified
    assert "ConnectX-8" in line.form_factor and "RHS" in line.form_factor
    assert "UNVERIFIED" in line.source and "800g200gpam4list" in line.source
    assert line.count == sum(1 for k in t.links if k.role == "node_leaf") + sum(
        1 for k in t.links if k.role == "manager_leaf"
    )


def test_the_seed_order_is_unchanged() -> None:
    """No seed link uses a two-fibre family: the BOM's cables are the order's."""
    t = topo_for(spec_key())
    bom = bill_of_materials(t)
    assert bom.totals.cables == order_of(t).cables_total
    assert all(cables_per_link(r.family) == 1 for r in plant_of(t).runs)


def test_the_catalog_800g_families_carry_their_fibres_and_sources() -> None:
    sw = families_for(800, "switch", "mmf")
    assert [(f.key, f.stem, f.cables_per_link) for f in sw] == [
        ("mmf-800-switch", "MFP7E10-N", 2),
        ("smf-800-switch", "MFP7E30-N", 2),
    ]
    assert "Switch-to-switch at 800Gb/s" in sw[0].source
    assert "require ordering two" in sw[1].source
    for f in XDR_CABLE_FAMILIES:
        assert (f.medium, f.cables_per_link, f.stem) == ("smf", 1, "MFP7E30-N")
        assert "800g200gpam4list" in f.source and "UNVERIFIED" in f.source
    assert MODULES[CX8_OSFP_800].verified is False


@given(
    fam=st.sampled_from(CABLE_FAMILIES),
    a=st.sampled_from(("", "sn5600", "qm9700", "q3400", "generic-64x800")),
    b=st.sampled_from(("sn5600", "qm9700", "q3400", "generic-64x800")),
)
def test_only_800g_fibre_changes_family_by_its_cages(fam: CableFamily, a: str, b: str) -> None:
    """Invariant: only 800G fibre changes family: to the XDR single-mode family with a
    Q3400 end, to the generic UNVERIFIED fibre when a two-fibre family meets a cage the
    catalog does not know; speed and a-end kind are kept."""
    got = family_for_cages(fam, (a, b))
    fibre800 = fam.speed_gbps == 800 and fam.medium in ("mmf", "smf")
    xdr = fibre800 and "q3400" in (a, b)
    unknown = fibre800 and fam.cables_per_link > 1 and not {a, b} <= {"sn5600", "qm9700"}
    assert (got is not fam) == (xdr or unknown)
    assert (got.speed_gbps, got.a_end) == (fam.speed_gbps, fam.a_end)
    if xdr:
        assert got.medium == "smf" and got.cables_per_link == 1 and "OS2" in got.description
    elif unknown:
        assert got.stem.startswith("GENERIC") and not got.verified
    else:
        assert got is fam


def test_every_view_counts_the_orders_cables(roce800: tuple[FabricTopology, Bom]) -> None:
    """`layout --check`, `plan`'s change tables (count_cables over link_parts) and the BOM
    read one count: two fibres per 800G twin-port link everywhere, a splitter once."""
    t, bom = roce800
    check = check_plant(t, plant_of(t))
    assert check.cables == bom.totals.cables == sum(check.media.values())
    assert count_cables(link_parts(t).values()) == bom.totals.cables
    assert check.unverified_parts <= check.cables
