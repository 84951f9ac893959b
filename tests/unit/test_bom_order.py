"""The order a buyer places (issue 44): a module per lit cage with the part each end's
hardware takes, installable cables only, one set of totals in every view, costs, power."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from fabric_stack.cli import main
from fabric_stack.hardware.cables import CABLE_FAMILIES
from fabric_stack.hardware.optics import MODULES
from fabric_stack.plant import plant_of
from fabric_stack.plant.ends import switch_cage
from fabric_stack.topology.build import FabricTopology
from fabric_stack.views.bom import OpticLine, bill_of_materials, bom_json, bom_markdown
from tests.topology_fixtures import Spec, any_spec, topo, topo_for

_SPLITTERS = {f.stem for f in CABLE_FAMILIES if f.splitter}

# (profile, switch, nic_gbps): every built-in server profile on a switch it can serve
MATRIX = [
    ("hgx-8gpu", "qm9700", 400),
    ("dgx-h100", "qm9700", 400),
    ("dgx-h100", "sn5600", 400),
    ("dgx-b200", "qm9700", 400),
    ("hgx-b300", "q3400", 800),
    ("gb200-nvl72-tray", "qm9700", 400),
]


def _topo(profile: str, switch: str, nic: int) -> FabricTopology:
    fabric = "roce" if switch == "sn5600" else "infiniband"
    gpus = 256 if profile != "gb200-nvl72-tray" else 128
    return topo(gpus=gpus, node_profile=profile, switch=switch, nic_gbps=nic, fabric=fabric)


@pytest.mark.parametrize(("profile", "switch", "nic"), MATRIX)
def test_modules_equal_the_populated_cages_at_each_end(profile: str, switch: str, nic: int) -> None:
    t = _topo(profile, switch, nic)
    prof = t.plan.spec.node_profile
    runs = plant_of(t).runs
    # the cages holding a module, straight from the link list and the profile's cage map
    server: set[tuple[str, str]] = set()
    switch_side: set[tuple[str, str]] = set()
    for k, run in zip(t.links, runs, strict=True):
        if run.a_optic:
            d = t.device(k.a_device)
            if d.role in ("server", "manager"):
                cage = prof.cage_of(k.a_port) if k.network == "compute" else ""
                server.add((k.a_device, cage or k.a_port))
            else:
                switch_side.add((k.a_device, switch_cage(k.a_port)))
        if run.b_optic:
            switch_side.add((k.b_device, switch_cage(k.b_port)))
    bom = bill_of_materials(t)
    assert sum(o.count for o in bom.optics if o.side == "server") == len(server)
    assert sum(o.count for o in bom.optics if o.side == "switch") == len(switch_side)
    if prof.compute_ports and prof.ports_per_cage(prof.compute_ports[0].rdma) == 2:
        # a twin-port cage carries two rails to two leaves: fibre only, four modules a server
        compute = [o for o in bom.optics if o.side == "server" and o.network == "compute"]
        assert compute[0].count == t.plan.nodes * prof.rdma_nics // 2


@pytest.mark.parametrize(("profile", "switch", "nic"), MATRIX)
def test_no_cable_end_spans_two_servers_unless_it_is_a_splitter(
    profile: str, switch: str, nic: int
) -> None:
    t = _topo(profile, switch, nic)
    legs: dict[tuple[str, str, str], set[tuple[str, str]]] = defaultdict(set)
    for k, run in zip(t.links, plant_of(t).runs, strict=True):
        if run.links_per_cable == 2:
            legs[(run.part_number, k.b_device, switch_cage(k.b_port))].add(
                (k.a_device, switch_cage(k.a_port))
            )
    for (part, dev, cage), ends in legs.items():
        if len(ends) > 1:
            assert any(part.startswith(s) for s in _SPLITTERS), (part, dev, cage, ends)
    bom = bill_of_materials(t)
    for c in bom.cables:
        if c.links > c.count:
            assert "splitter" in c.cable_type or "twin-port" in c.cable_type


def test_the_dgx_end_takes_a_flat_top_part_and_the_switch_end_a_finned_one() -> None:
    bom = bill_of_materials(topo(gpus=256, node_profile="dgx-h100"))

    def most(side: str) -> OpticLine:  # the servers' line, not the two UFM ports'
        return max(
            (o for o in bom.optics if (o.side, o.network) == (side, "compute")),
            key=lambda o: o.count,
        )

    dgx, sw = most("server"), most("switch")
    assert dgx.optic == "MMA4Z00-NS-FLT" and "flat-top" in dgx.form_factor
    assert sw.optic == "MMA4Z00-NS" and "finned" in sw.form_factor
    assert "UNVERIFIED" in dgx.source and not dgx.verified
    # and no straight twin-port cable joins one DGX cage to two leaves
    assert not any(c.part_number.startswith(("MCP4Y10", "MCA4J80")) for c in bom.parts.cables)


@pytest.mark.parametrize(
    ("profile", "form"),
    [
        ("hgx-8gpu", "OSFP single-port flat-top"),
        ("dgx-h100", "QSFP112"),
        ("dgx-h200", "QSFP112"),
        ("dgx-b200", "QSFP112"),
        ("gb200-nvl72-tray", "QSFP112"),
    ],
)
def test_storage_and_inband_form_factor_per_profile(profile: str, form: str) -> None:
    gpus = 128 if profile == "gb200-nvl72-tray" else 256
    bom = bill_of_materials(topo(gpus=gpus, node_profile=profile))
    storage = [o for o in bom.optics if o.side == "server" and o.network == "storage"]
    inband = [o for o in bom.optics if o.side == "server" and o.network == "inband"]
    assert storage and inband  # in-band optics are on the order too
    assert {o.form_factor for o in storage} == {form}
    assert all(o.form_factor.startswith(form[:4]) for o in inband)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_spec)
def test_every_view_of_the_bom_has_the_same_totals(key: Spec) -> None:
    t = topo_for(key)
    bom = bill_of_materials(t)
    tot = bom.totals
    assert tot.cables == bom.parts.cables_total == sum(c.count for c in bom.cables)
    assert tot.optics == bom.parts.optics_total == sum(o.count for o in bom.optics)
    assert tot.links == sum(c.links for c in bom.cables) == len(t.links)
    data = json.loads(json.dumps(bom_json(bom)))
    assert data["totals"]["cables"] == sum(c["count"] for c in data["parts"]["cables"])
    assert data["totals"]["optics"] == sum(o["count"] for o in data["parts"]["optics"])
    md = bom_markdown(bom)
    assert f"{tot.cables:,} cables ({tot.links:,} links), {tot.optics:,} optics" in md
    assert f"Totals: {tot.cables:,} cables (" in md  # the order list's line
    assert tot.optics_power_w == pytest.approx(sum(o.count * o.power_w for o in bom.optics))
    assert tot.power_w == pytest.approx(tot.switch_power_w + tot.optics_power_w)


def test_the_issue_1024_gpu_dgx_h100_figures_agree() -> None:
    bom = bill_of_materials(topo(gpus=1024, node_profile="dgx-h100"))
    assert (bom.totals.cables, bom.totals.optics) == (
        bom.parts.cables_total,
        bom.parts.optics_total,
    )
    assert bom.parts.optics_total == 2523  # 508 + 2 + 254 + 127 server, 1,536 + 64 + 32 switch


def test_optics_power_is_in_the_total_and_the_rack_budget() -> None:
    t = topo(gpus=1024, node_profile="dgx-h100")
    bom = bill_of_materials(t)
    assert bom.totals.optics_power_w > 20_000  # tens of kW
    assert bom.totals.power_w == bom.totals.switch_power_w + bom.totals.optics_power_w
    spine_rack = plant_of(t).rack("spine-rack01")
    spines = [d for d in spine_rack.devices if d.role == "spine"]
    # a spine's 64 ports lit on 32 twin-port cages: its catalog figure + 32 × 15 W
    assert all(d.power.watts == 747 + 32 * MODULES["MMA4Z00-NS"].power_w for d in spines)


def test_labels_carry_the_rear_panel_cage_beside_the_os_name() -> None:
    t = topo(gpus=128, node_profile="dgx-h100")
    runs = plant_of(t).runs
    first = next(r for k, r in zip(t.links, runs, strict=True) if k.a_port == "mlx5_0")
    assert first.label_a.endswith("mlx5_0 (OSFP4 P2)")
    stor = next(r for k, r in zip(t.links, runs, strict=True) if k.role == "storage")
    assert stor.label_a.endswith("(slot1 P1)") or stor.label_a.endswith("(slot2 P1)")


def _bom_cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["bom", *args])
    return r.exit_code, r.output


def test_prices_add_up_and_unpriced_parts_are_listed(tmp_path: Path) -> None:
    p = tmp_path / "prices.csv"
    p.write_text(
        "part_number,unit_price,currency\nqm9700,30000.50,USD\nMMA4Z00-NS,999.99,USD\n",
        encoding="utf-8",
    )
    code, out = _bom_cli("--format", "json", "--prices", str(p))
    assert code == 0, out
    data = json.loads(out)
    cost = data["cost"]
    assert cost["currency"] == "USD"
    assert {c["part_number"] for c in cost["lines"]} == {"qm9700", "MMA4Z00-NS"}
    for c in cost["lines"]:
        assert c["amount"] == pytest.approx(c["count"] * c["unit_price"])
    assert cost["total"] == pytest.approx(sum(c["amount"] for c in cost["lines"]))
    every = {s["model"] for s in data["switches"]} | {
        x["part_number"] for x in (*data["parts"]["cables"], *data["parts"]["optics"])
    }
    assert set(cost["unpriced"]) == every - {"qm9700", "MMA4Z00-NS"}
    code, md = _bom_cli("--format", "markdown", "--prices", str(p))
    assert code == 0 and f"**{cost['total']:,.2f}**" in md and "not priced there" in md


def test_a_bad_price_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    p = tmp_path / "prices.csv"
    p.write_text("part_number,unit_price,currency\nA,1,USD\nB,2,EUR\n", encoding="utf-8")
    code, out = _bom_cli("--prices", str(p))
    assert code == 2
    assert out.strip().count("\n") == 0 and "one currency per file" in out


# The sizing scenarios (tests/scenarios/sizing) and the issue's 2,304-GPU B300 SuperPOD.
PUBLISHED = [
    ["--gpus", "2304", "--nic-gbps", "800", "--switch", "q3400", "--node-profile", "hgx-b300"],
    [
        "--gpus",
        "8192",
        "--nic-gbps",
        "800",
        "--planes",
        "2",
        "--switch",
        "q3400",
        "--node-profile",
        "hgx-b300",
    ],
    ["--gpus", "8192"],
    ["--gpus", "4096", "--fabric", "roce", "--switch", "sn5600"],
    ["--gpus", "2048"],
    ["--gpus", "512", "--oversubscription", "2:1"],
    ["--gpus", "136"],
    [],
]


@pytest.mark.parametrize("args", PUBLISHED, ids=lambda a: "-".join(a[1:2] + a[-1:]) or "seed")
def test_published_designs_pass_cabling_and_layout_check_on_the_defaults(args: list[str]) -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["layout", "--check", *args])
    assert r.exit_code == 0, r.output
    if args[:2] == ["--gpus", "2304"]:  # the issue's case: refused before, 110 kW of spines
        c = runner.invoke(main, ["cabling", "--format", "json", *args])
        assert c.exit_code == 0, c.output
        racks = {x["b_rack"] for x in json.loads(c.output)["links"]}
        assert "spine-rack02" in racks and "su1-net2" in racks
