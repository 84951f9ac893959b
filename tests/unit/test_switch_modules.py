"""The module a switch cage takes follows the END's switch model, its split and speed (#44).

Pins :func:`fabric_stack.hardware.optics.switch_module` per (switch model, cage split,
speed, medium) with NVIDIA's source in each test's docstring, and checks that the BOM of
two per-tier designs (#43) names those modules and that ``bom``, ``compare`` and the
priced ``cost`` read one count of them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from fabric_stack.hardware.optics import MODULES, XDR_MODULES, module_for, switch_module
from fabric_stack.hardware.switches import CATALOG
from fabric_stack.plant.modules import link_cages
from fabric_stack.plant.plan import plant_of
from fabric_stack.topology.build import HOST_ROLES, FabricTopology
from tests.topology_fixtures import spec_key, topo_for


def _split(model: str, speed: int) -> int:
    return next(m.ports_per_cage for m in CATALOG[model].modes if m.speed_gbps == speed)


def test_an_unsplit_800g_spectrum4_cage_takes_the_twin_port_module() -> None:
    """SN5600 cage at 1 × 800G, switch to switch: one twin-port module per cage.

    Source: docs.nvidia.com/networking/display/400g100gpam4ovpub/transceivers-and-fiber-
    details-100g-pam4 ("Twin-port transceivers can be linked to each other forming an
    800Gb/s link"); MMA4Z00-NS400-T "Connectivity Scenarios", case 1 "Switch-to-switch at
    800Gb/s"; MMS4X50-NM "Application Overview" ("transferring 800Gb/s between two switches
    using a single transceiver in each switch").
    """
    assert _split("sn5600", 800) == 1
    mmf = switch_module("sn5600", "mmf", 800)
    smf = switch_module("sn5600", "smf", 800)
    assert mmf is MODULES["MMA4Z00-NS"] and mmf.verified
    assert smf is MODULES["MMS4X00-NS"] and smf.verified
    assert "800Gb/s link" in mmf.source
    # the same module as the cage split 2 × 400G (one module per cage either way)
    assert _split("sn5600", 400) == 2
    assert switch_module("sn5600", "mmf", 400) is mmf


def test_an_unsplit_800g_port_to_a_host_has_no_sourced_module() -> None:
    """SN5600 at 800G to a host: the LinkX pages read cover switch-to-switch 800G only
    (same sources as above), so the rule gives nothing and the family's part decides."""
    assert switch_module("sn5600", "mmf", 800, to_switch=False) is None


@pytest.mark.parametrize(
    ("model", "medium", "part"), [("qm9700", "mmf", "MMA4Z00-NS"), ("qm9700", "smf", "MMS4X00-NS")]
)
def test_a_quantum2_cage_at_2x400g_takes_the_ndr_twin_port(
    model: str, medium: str, part: str
) -> None:
    """QM9700 cage at 2 × NDR 400G: MMA4Z00-NS (multimode 2xSR4) or MMS4X00-NS (DR8).

    Source: docs.nvidia.com/networking/display/800GMMA4Z00NS/Overview and
    docs.nvidia.com/networking/display/800gmms4x00ns/overview ("only used in Quantum-2 and
    Spectrum-4 OSFP air-cooled switches")."""
    assert _split(model, 400) == 2
    found = switch_module(model, medium, 400)
    assert found is MODULES[part] and found.verified
    assert switch_module(model, medium, 800) is None  # QM9700 has no 800G mode


@pytest.mark.parametrize("medium", ["mmf", "smf"])
def test_a_q3400_cage_at_ndr_400g_takes_an_ndr_module_marked_unverified(medium: str) -> None:
    """Q3400 cage at 2 × 400G: not an XDR module, an NDR 100G-PAM4 twin-port, UNVERIFIED.

    Source: docs.nvidia.com/networking/display/800g200gpam4list, "Important notes":
    "200G-PAM4-based transceivers cannot downshift to 100G-PAM4"; IHS (finned) plugs are
    the ones for the air-cooled Q3400. NVIDIA's support of the NDR module in a Q3400 cage
    was not found: the record says UNVERIFIED and is a record of its own."""
    assert _split("q3400", 400) == 2
    found = switch_module("q3400", medium, 400)
    assert found is XDR_MODULES[(medium, 400)]
    assert not found.verified and "UNVERIFIED" in found.source
    assert "XDR cage" in found.form_factor
    qm = switch_module("qm9700", medium, 400)
    assert qm is not None and found.part == qm.part and found != qm


@pytest.mark.parametrize("medium", ["mmf", "smf"])
def test_a_q3400_cage_at_xdr_800g_takes_the_single_mode_xdr_twin_port(medium: str) -> None:
    """Q3400 cage at 2 × XDR 800G: a single-mode XDR twin-port module (no multimode XDR).

    Source: docs.nvidia.com/networking/display/800g200gpam4list ("Not used for XDR:
    Multimode transceivers"); the SKU MMS4A00-XM was not read on its own page: UNVERIFIED."""
    assert _split("q3400", 800) == 2
    found = switch_module("q3400", medium, 800)
    assert found is XDR_MODULES[("smf", 800)]
    assert found.part == "MMS4A00-XM" and not found.verified


def test_host_cages_and_non_fibre_ends_are_not_the_switch_rule() -> None:
    """A switch model only decides at a switch end, and only for fibre (DAC ends take none;
    a host's twin-port cage stays the flat-top part of ``module_for``)."""
    assert module_for("switch", "dac", 400, "", "q3400") is None
    host = module_for("osfp-twin", "mmf", 400, "MMA4Z00-NS", "q3400")
    assert host is MODULES["MMA4Z00-NS-FLT"]
    # a speed the rule leaves to the family (4 × 200G splitters) keeps the family's part
    assert module_for("switch", "mmf", 200, "MMA4Z00-NS", "sn5600") is MODULES["MMA4Z00-NS"]


# ----------------------------------------------------------------- the two designs' BOM

DESIGNS: dict[str, dict[str, Any]] = {
    "roce-800g-uplinks": {"gpus": 1024, "fabric": "roce", "switch": "sn5600", "uplink_gbps": 800},
    "ib-4planes-q3400-spines": {
        "gpus_per_node": 4,
        "gpus": 256,
        "nic_gbps": 800,
        "planes": 4,
        "spine_switch": "q3400",
        "uplink_gbps": 400,
    },
}
"""validate/matrix.py's scenarios of the same names."""


def _flags(spec: dict[str, Any]) -> list[str]:
    return [a for k, v in spec.items() for a in (f"--{k.replace('_', '-')}", str(v))]


def _json(*args: str) -> Any:
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _fibre_switch_cages(topo: FabricTopology) -> Counter[str]:
    """Lit compute switch cages on fibre, by the model of the switch they are in: what
    must each hold one module (counted from the link list and the plant's media)."""
    runs = plant_of(topo, strict=False).runs
    a_cages, b_cages = link_cages(topo)
    model = {d.name: d.model for d in topo.devices if d.role not in HOST_ROLES}
    seen: set[tuple[str, str]] = set()
    for k, run, a, b in zip(topo.links, runs, a_cages, b_cages, strict=True):
        if k.network != "compute" or run.medium not in ("mmf", "smf"):
            continue
        seen.add(b)
        if k.a_device in model:
            seen.add(a)
    return Counter(model[dev] for dev, _ in seen)


@pytest.fixture(scope="module", params=sorted(DESIGNS))
def design(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    name: str = request.param
    spec = DESIGNS[name]
    prices = tmp_path_factory.mktemp("prices") / "prices.csv"
    prices.write_text(
        "part_number,unit_price,currency\nMMA4Z00-NS,1000,USD\nMMS4X00-NS,1200,USD\n",
        encoding="utf-8",
    )
    fabric = "roce:sn5600" if spec.get("fabric") == "roce" else "infiniband:qm9700"
    flags = _flags(spec)
    bom = _json("bom", *flags, "--prices", str(prices))
    compare = _json("compare", *flags, "--candidates", fabric, "--prices", str(prices))
    return name, topo_for(spec_key(**spec)), bom, compare["candidates"][0]


def test_each_switch_cage_holds_its_models_module(design: Any) -> None:
    """roce-800g-uplinks: every SN5600 compute cage on fibre (2 × 400G down, 1 × 800G up)
    holds MMA4Z00-NS, no generic twin-port; ib-4planes-q3400-spines: QM9700 cages hold the
    sourced MMA4Z00-NS, the Q3400 spines' cages the UNVERIFIED NDR-in-XDR-cage record."""
    name, topo, bom, _ = design
    lines = [o for o in bom["optics"] if o["side"] == "switch" and o["network"] == "compute"]
    assert not [o for o in lines if o["optic"].startswith("GENERIC")], lines
    cages = _fibre_switch_cages(topo)
    by_ff = {(o["optic"], o["form_factor"]): o for o in lines}
    if name == "roce-800g-uplinks":
        assert set(cages) == {"sn5600"}
        assert 800 in {k.speed_gbps for k in topo.links_of("leaf_spine")}
        (line,) = lines
        assert (line["optic"], line["verified"], line["count"]) == (
            "MMA4Z00-NS",
            True,
            cages["sn5600"],
        )
    else:
        assert set(cages) == {"qm9700", "q3400"}
        qm = by_ff[("MMA4Z00-NS", "OSFP twin-port finned-top")]
        xdr = by_ff[("MMA4Z00-NS", "OSFP twin-port finned-top (NDR, in an XDR cage)")]
        assert (qm["count"], qm["verified"]) == (cages["qm9700"], True)
        assert (xdr["count"], xdr["verified"]) == (cages["q3400"], False)
        assert "UNVERIFIED" in xdr["source"]


def test_bom_compare_and_cost_read_one_count(design: Any) -> None:
    """The order list, the optics table, compare's optics by part and both priced costs
    give the same module counts and amounts."""
    _, _, bom, cand = design
    table: Counter[str] = Counter()
    for o in bom["optics"]:
        table[o["optic"]] += o["count"]
    parts = {p["part_number"]: p["count"] for p in bom["parts"]["optics"]}
    assert parts == dict(table)
    assert cand["optics"] == dict(table)
    assert sum(table.values()) == bom["totals"]["optics"]
    for cost in (bom["cost"], cand["cost"]):
        priced = {line["part_number"]: line for line in cost["lines"]}
        assert priced["MMA4Z00-NS"]["count"] == table["MMA4Z00-NS"]
        assert priced["MMA4Z00-NS"]["amount"] == 1000 * table["MMA4Z00-NS"]
    assert bom["cost"]["total"] == cand["cost"]["total"]


def test_bom_markdown_names_the_same_modules(design: Any, tmp_path: Path) -> None:
    """The Markdown BOM lists each switch module line the JSON has, with its count."""
    name, _, bom, _ = design
    r = CliRunner().invoke(main, ["bom", *_flags(DESIGNS[name]), "--format", "markdown"])
    assert r.exit_code == 0, r.output
    for o in bom["optics"]:
        if o["side"] == "switch":
            assert f"| {o['form_factor']} | switch | {o['network']} | {o['count']:,} |" in (
                r.stdout
            ), o
