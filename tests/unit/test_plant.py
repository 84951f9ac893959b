"""The physical plant: lengths, media, part numbers, labels, rack budgets, growth, `layout`."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric_stack.cli import main
from fabric_stack.errors import SpecError
from fabric_stack.hardware.cables import CABLE_FAMILIES, families_for
from fabric_stack.plant import check_plant, plant_of
from fabric_stack.plant.plan import cage_of
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import FabricSpec
from fabric_stack.topology.build import FabricTopology, build_topology
from fabric_stack.views.bom import bill_of_materials, bom_markdown
from fabric_stack.views.exports import CSV_COLUMNS, links_csv, links_json
from fabric_stack.views.plant import elevations_svg, run_list_csv, run_list_markdown

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def _topo(**kw: Any) -> FabricTopology:
    return build_topology(size_fabric(FabricSpec(**kw)))


@pytest.fixture(scope="module")
def seed() -> FabricTopology:
    return _topo()


@pytest.fixture(scope="module")
def dgx4() -> FabricTopology:
    """A 4-SU DGX H100 plan (the issue's second example)."""
    return _topo(gpus=1024, node_profile="dgx-h100")


@pytest.mark.parametrize("name", ["seed", "dgx4"])
def test_every_cable_has_a_length_medium_part_and_unique_labels(
    name: str, request: pytest.FixtureRequest
) -> None:
    topo: FabricTopology = request.getfixturevalue(name)
    plant = plant_of(topo)
    assert len(plant.runs) == len(topo.links)
    for run in plant.runs:
        assert run.length_m > 0 and run.part_number and run.medium
        assert run.within_reach, run
        assert run.length_m >= run.route_m - 1e-9  # rounded up, never down
    labels = [lab for r in plant.runs for lab in (r.label_a, r.label_b)]
    assert len(labels) == len(set(labels))
    check = check_plant(topo, plant)
    assert check.passed, check.problems


def test_length_rounds_up_to_the_vendor_step_and_medium_follows_reach(
    seed: FabricTopology,
) -> None:
    runs = plant_of(seed).runs
    # A split cage's legs share one family, chosen by the cage's longest leg.
    longest: dict[tuple[str, str], float] = {}
    for k, run in zip(seed.links, runs, strict=True):
        c = (k.b_device, cage_of(k.b_port))
        longest[c] = max(longest.get(c, 0.0), run.route_m)
    for k, run in zip(seed.links, runs, strict=True):
        fam = (
            next(f for f in CABLE_FAMILIES if f.key == run.family)
            if "GENERIC" not in (run.part_number)
            else None
        )
        if fam is not None:
            assert run.length_m in fam.lengths
            cheaper = [
                f for f in families_for(fam.speed_gbps, fam.a_end, "mmf") if f.reach < fam.reach
            ]
            # every cheaper medium is too short for this run's cage
            assert all(f.reach < longest[(k.b_device, cage_of(k.b_port))] for f in cheaper)


def test_short_switch_runs_take_a_dac(seed: FabricTopology) -> None:
    fams = families_for(400, "switch", "mmf")
    assert fams[0].medium == "dac" and fams[0].part(1.5) == "MCP4Y10-N01A"
    assert fams[0].part(2.0) == "MCP4Y10-N002"


def test_exports_carry_the_plant(seed: FabricTopology) -> None:
    header = links_csv(seed).splitlines()[0].split(",")
    assert header == list(CSV_COLUMNS)
    for col in ("length_m", "medium", "part_number", "label_a", "label_b"):
        assert col in header
    first = json.loads(links_json(seed))["links"][0]
    assert first["length_m"] > 0 and first["part_number"] and first["label_a"]


def test_bom_lists_parts_by_number_and_length(seed: FabricTopology, dgx4: FabricTopology) -> None:
    for topo in (seed, dgx4):
        bom = bill_of_materials(topo)
        assert bom.parts.cables_total > 0 and bom.parts.optics_total > 0
        assert sum(c.links for c in bom.parts.cables) == len(topo.links)
        assert "Cables to order (by part number and length)" in bom_markdown(bom)
        assert bom.compute.matches_sizing


def test_run_list_lists_every_cable_at_both_ends_in_install_order(seed: FabricTopology) -> None:
    rows = run_list_csv(seed).splitlines()[1:]
    assert len(rows) == 2 * len(seed.links)
    md = run_list_markdown(seed)
    assert "## su1-rack01 (R01-01)" in md
    first_rack = [r.split(",") for r in rows if r.startswith("su1-rack01,")]
    us = [int(r[5]) for r in first_rack]
    assert us == sorted(us)  # bottom RU first


def test_elevations_draw_devices_and_power(seed: FabricTopology) -> None:
    svg = elevations_svg(seed)
    assert svg.startswith("<svg") and "su1-node01" in svg and "kW" in svg


def test_a_rack_over_power_is_a_spec_error_naming_it() -> None:
    topo = _topo(gpus=128, layout={"rack_power_kw": 20})
    with pytest.raises(SpecError) as exc:
        plant_of(topo)
    assert "layout.rack_power_kw" in str(exc.value) and "rack su1-rack01" in str(exc.value)
    check = check_plant(topo, plant_of(topo, strict=False))
    assert not check.passed and any("su1-rack01" in p for p in check.problems)


def test_a_rack_over_units_is_reported() -> None:
    topo = _topo(gpus=128, layout={"servers_per_rack": 8, "rack_units": 42})
    check = check_plant(topo, plant_of(topo, strict=False))
    assert any("above the rack's 42 U" in p for p in check.problems)


def test_elevation_headers_count_the_units_devices_take_not_the_top_unit(
    seed: FabricTopology,
) -> None:
    # Read off the seed's elevation by eye: su1-net holds the 8 rail leaves at U1-U8 (1 U
    # each), the OOB switch at U33 (1 U), in-band at U34-35, storage b1 at U36-37 and a1 at
    # U38-39 (2 U each): 15 U taken, though the top device reaches U39.
    net = next(r for r in plant_of(seed).racks if r.place.name == "su1-net")
    assert (net.units_occupied, net.units_used) == (15, 39)
    assert "15/42 U" in elevations_svg(seed) and "39/42 U" not in elevations_svg(seed)


def test_devices_sharing_a_unit_are_a_problem(seed: FabricTopology) -> None:
    plant = plant_of(seed)
    assert check_plant(seed, plant).passed
    net = next(r for r in plant.racks if r.place.name == "su1-net")
    leaf = net.devices[0]
    moved = dataclasses.replace(net.devices[1], position=leaf.position)
    racks = tuple(
        dataclasses.replace(r, devices=(leaf, moved, *r.devices[2:])) if r is net else r
        for r in plant.racks
    )
    check = check_plant(seed, dataclasses.replace(plant, racks=racks))
    assert f"su1-net (R01-05): {leaf.name} and {moved.name} both take U1" in " ".join(
        check.problems
    )


def test_a_bad_label_template_names_the_field() -> None:
    with pytest.raises(SpecError, match=r"^layout\.label: "):
        plant_of(_topo(layout={"label": "{nope}"}))


def _cables(topo: FabricTopology) -> dict[tuple[str, str, str, str], tuple[float, str, str, str]]:
    plant = plant_of(topo, strict=False)
    return {
        (k.a_device, k.a_port, k.b_device, k.b_port): (
            r.length_m,
            r.part_number,
            r.label_a,
            r.label_b,
        )
        for k, r in zip(topo.links, plant.runs, strict=True)
    }


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sus=st.integers(1, 3),
    su_nodes=st.sampled_from([8, 16]),
    per_rack=st.sampled_from([2, 4]),
    where=st.sampled_from(["middle", "end"]),
    fabric=st.sampled_from(["infiniband", "roce"]),
)
def test_a_new_su_changes_no_existing_cable(
    sus: int, su_nodes: int, per_rack: int, where: str, fabric: str
) -> None:
    """Growth by one SU adds racks and cables; a cable with the same two ends keeps its
    length, part number and labels."""
    base: dict[str, Any] = {
        "su_nodes": su_nodes,
        "fabric": fabric,
        "layout": {"servers_per_rack": per_rack, "su_network_rack": where},
    }
    if fabric == "roce":
        base["switch"] = "sn5600"
    small = _cables(_topo(gpus=8 * su_nodes * sus, **base))
    big = _cables(_topo(gpus=8 * su_nodes * (sus + 1), **base))
    shared = small.keys() & big.keys()
    assert shared
    changed = [k for k in shared if small[k] != big[k]]
    assert not changed, changed[:3]


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), env=ENV)


def test_layout_check_cli() -> None:
    res = _run("layout", "--check", "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    bom = json.loads(_run("bom", "--format", "json").output)
    # The cables as ordered (a splitter once: 427 for the seed's 450 links), the BOM's total.
    assert data["passed"] and data["cables"] == bom["totals"]["cables"] == 427 and data["longest"]
    assert bom["totals"]["links"] == 450
    res = _run("layout", "--check", "--format", "markdown")
    assert res.exit_code == 0 and "### Layout check" in res.output


def test_layout_check_exits_1_on_a_problem(tmp_path: Any) -> None:
    cfg = tmp_path / "hot.yaml"
    cfg.write_text("gpus: 128\nlayout:\n  rack_power_kw: 20\n", encoding="utf-8")
    res = _run("layout", "--check", "--config", str(cfg), "--format", "markdown")
    assert res.exit_code == 1 and "over its 20 kW budget" in res.output
    res = _run("cabling", "--config", str(cfg))
    assert res.exit_code == 2 and "layout.rack_power_kw" in res.output


def test_layout_bad_format_is_exit_2() -> None:
    res = _run("layout", "--run-list", "--format", "json")
    assert res.exit_code == 2 and res.output.startswith("error: --format: ")
    assert "Examples:" in _run("layout", "--help").output


@pytest.mark.parametrize("fabric", ["infiniband", "roce"])
def test_every_leg_of_a_split_cage_takes_one_family(fabric: str) -> None:
    # A split switch cage (1/8/1 + 1/8/2, swp8s0 + swp8s1) holds one splitter cable or one
    # twin-port module: its legs cannot be half ACC and half fibre.
    extra = {"switch": "sn5600"} if fabric == "roce" else {}
    topo = _topo(gpus=256, fabric=fabric, **extra)
    families: dict[tuple[str, str], set[str]] = {}
    legs: Counter[tuple[str, str]] = Counter()
    for k, run in zip(topo.links, plant_of(topo).runs, strict=True):
        families.setdefault((k.b_device, cage_of(k.b_port)), set()).add(run.family)
        legs[(k.b_device, cage_of(k.b_port))] += 1
    mixed = {c: f for c, f in families.items() if len(f) > 1}
    assert not mixed
    assert sum(1 for n in legs.values() if n == 2) > 100  # split cages exist


def test_a_splitter_is_counted_once_per_cage(seed: FabricTopology) -> None:
    plant = plant_of(seed)
    cages = {
        (k.b_device, cage_of(k.b_port))
        for k, run in zip(seed.links, plant.runs, strict=True)
        if run.links_per_cable == 2 and run.medium == "acc"
    }
    acc = [c for c in bill_of_materials(seed).parts.cables if c.medium == "acc"]
    assert sum(c.count for c in acc) == len(cages)
    assert sum(c.links for c in acc) <= 2 * len(cages)
    # the seed's node-leaf ACCs are 1:2 splitters: their legs go to two servers
    assert all(c.part_number.startswith("MCA7J60") for c in acc)


def test_cage_of_names_the_physical_cage() -> None:
    assert cage_of("1/8/2") == "1/8" and cage_of("swp33s1") == "swp33"
    assert cage_of("swp33") == "swp33" and cage_of("mlx5_0") == "mlx5_0"
    assert cage_of("Ethernet1/1") == "Ethernet1/1"
    assert cage_of("sw8p2") == "sw8" and cage_of("sw8") == "sw8"  # NVOS (Q3400)
