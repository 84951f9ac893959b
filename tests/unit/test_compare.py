"""`fabric-stack compare` (#45): the same cluster on each candidate fabric, side by side."""

from __future__ import annotations

import json
from decimal import Decimal
from functools import cache

import pytest
from click.testing import CliRunner

from fabric_stack.analysis.estimate import ModelParams, estimate_collective, parse_sizes
from fabric_stack.cli import main
from fabric_stack.files.prices import PriceList
from fabric_stack.hardware import switches
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import build_topology
from fabric_stack.views import options as cmp_mod
from fabric_stack.views.bom import bill_of_materials
from fabric_stack.views.compare import compare_markdown
from fabric_stack.views.options import (
    Candidate,
    Comparison,
    compare_fabrics,
    parse_candidates,
    parse_weights,
    path_latency,
)

SIZES = parse_sizes("64K,16G")
SPEC = validate_spec({"gpus": 1024})


@cache
def comparison(sharp: bool = False) -> Comparison:
    return compare_fabrics(SPEC, sharp=sharp, sizes=SIZES)


def test_default_candidates_follow_the_nic_speed() -> None:
    assert [c.label for c in comparison().candidates] == ["infiniband:qm9700", "roce:sn5600"]
    spec800 = validate_spec({"gpus": 1024, "nic_gbps": 800})
    assert [c.label for c in cmp_mod.default_candidates(spec800)] == [
        "infiniband:q3400",
        "roce:sn5600",
    ]


@pytest.mark.parametrize("i", [0, 1])
def test_candidate_figures_equal_size_bom_and_estimate_alone(i: int) -> None:
    c = comparison().candidates[i]
    spec = validate_spec({"gpus": 1024, "fabric": c.fabric, "switch": c.switch})
    plan = size_fabric(spec)
    topo = build_topology(plan)
    bom = bill_of_materials(topo)
    assert c.tiers == plan.tiers and c.two_tier_max_gpus == plan.two_tier_max_gpus
    assert c.switches == {line.model: line.count for line in bom.switches}
    assert sum(c.cables.values()) == bom.parts.cables_total
    assert sum(c.optics.values()) == bom.parts.optics_total
    assert c.power_w == round(bom.totals.power_w)  # switches + optics
    assert c.switches_by_tier["leaf"] == plan.switches.leaf
    alone = estimate_collective(topo, "all_reduce", SIZES)
    assert c.allreduce == alone and c.allreduce_busbw_gbs == alone.points[-1].busbw_gbs
    a2a = estimate_collective(topo, "alltoall", SIZES)
    assert c.alltoall_busbw_gbs == a2a.points[-1].busbw_gbs


def test_the_two_tier_ceilings_the_issue_names() -> None:
    by = {c.switch: c.two_tier_max_gpus for c in comparison().candidates}
    assert by == {"qm9700": 2048, "sn5600": 8192}


def test_latency_differs_only_through_the_sourced_switch_figure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ib, roce = comparison().candidates
    # same NIC, same hops: the difference is 3 switches × (assumed 200 − QM9700 150) ns
    assert ib.latency.nic_ns == roce.latency.nic_ns
    assert round(roce.latency_us - ib.latency_us, 3) == round(3 * (200 - 150) / 1000, 3)
    slower = switches.CATALOG["qm9700"].model_copy(update={"port_latency_ns": 400})
    monkeypatch.setitem(switches.CATALOG, "qm9700", slower)
    plan = size_fabric(SPEC)
    assert path_latency(plan).total_us == pytest.approx(ib.latency_us + 3 * 0.25)
    topo = build_topology(plan)
    small = estimate_collective(topo, "all_reduce", [8 << 10]).points[0]
    before = ib.allreduce.points[0]
    assert small.time_s is not None and before.time_s is not None
    assert small.time_s > before.time_s  # slower switches: small messages take longer


def test_sharp_raises_infiniband_allreduce_only() -> None:
    plain, sharp = comparison(), comparison(True)
    ib0, roce0 = plain.candidates
    ib1, roce1 = sharp.candidates
    assert ib1.sharp and not ib0.sharp and not roce1.sharp
    assert ib1.allreduce_busbw_gbs > 1.3 * ib0.allreduce_busbw_gbs
    assert roce1.allreduce_busbw_gbs == roce0.allreduce_busbw_gbs
    assert ib1.alltoall_busbw_gbs == ib0.alltoall_busbw_gbs
    assert ib1.allreduce.points[-1].algorithm == "collnet"


def test_ecmp_without_adaptive_routing_costs_alltoall_across_sus() -> None:
    base = {"gpus": 1024, "fabric": "roce", "switch": "generic-64x400"}
    topo = build_topology(size_fabric(validate_spec(base)))
    hashed = estimate_collective(topo, "alltoall", [16 << 30]).points[0].busbw_gbs
    ideal = (
        estimate_collective(topo, "alltoall", [16 << 30], params=ModelParams(ecmp_efficiency=1.0))
        .points[0]
        .busbw_gbs
    )
    assert hashed < ideal


def _prices(qm: int, sn: int) -> PriceList:
    """Every part of both candidates' orders priced (1 each) but the two fabric switches."""
    parts: set[str] = set()
    for c in comparison().candidates:
        parts |= set(c.switches) | set(c.cables) | set(c.optics)
    prices = dict.fromkeys(parts, Decimal(1)) | {"qm9700": Decimal(qm), "sn5600": Decimal(sn)}
    return PriceList(source="t", currency="USD", prices=prices)


def test_recommendation_flips_when_the_weights_flip() -> None:
    # InfiniBand with SHARP is faster; RoCE on SN5600 is cheaper here (and grows further).
    prices = _prices(qm=40_000, sn=20_000)
    perf = compare_fabrics(
        SPEC, sharp=True, sizes=SIZES, prices=prices, weights=parse_weights("performance=1")
    )
    cost = compare_fabrics(
        SPEC, sharp=True, sizes=SIZES, prices=prices, weights=parse_weights("cost=1")
    )
    assert perf.recommendation.fabric == "infiniband"
    assert cost.recommendation.fabric == "roce"
    assert any("priced BOM" in r for r in cost.recommendation.reasons)
    ib, roce = cost.candidates
    assert ib.cost is not None and roce.cost is not None and roce.cost.total < ib.cost.total
    # the input changes the decision too: make the Spectrum switch dear
    dear = compare_fabrics(
        SPEC, sizes=SIZES, prices=_prices(qm=1, sn=10**7), weights=parse_weights("cost=1")
    )
    assert dear.recommendation.fabric == "infiniband"


def test_unpriced_parts_keep_cost_out_and_say_so() -> None:
    empty = PriceList(source="t", currency="USD", prices={})
    c = compare_fabrics(SPEC, sizes=SIZES, prices=empty)
    assert "cost" not in c.recommendation.scores["roce:sn5600"]
    assert any("not scored: unpriced parts" in r for r in c.recommendation.reasons)


def test_markdown_is_a_decision_record_with_one_options_table() -> None:
    md = compare_markdown(comparison())
    for head in ("## Context", "## Options", "## Decision", "## Consequences", "## Sources"):
        assert head in md
    lines = md.splitlines()
    start = lines.index("## Options") + 2
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    assert table[1].startswith("|---|")
    cells = {len(line.replace("\\|", "").split("|")) for line in table}
    assert cells == {len(comparison().candidates) + 3}  # label + candidates, outer pipes
    assert len(table) > 10


def test_guide_paragraph_is_the_derived_one() -> None:
    r = CliRunner().invoke(main, ["guide", "--gpus", "1024", "--format", "json"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output)["guidance"]["recommendation"]
    assert rec == compare_fabrics(SPEC).recommendation.paragraph
    assert "scores" in rec and "2,048 GPUs in two tiers" in rec


def test_cli_json_shape_and_svg(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = CliRunner().invoke(
        main, ["compare", "--gpus", "256", "--sizes", "1M,1G", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    keys = {
        "fabric",
        "switch",
        "tiers",
        "switches",
        "cables",
        "optics",
        "power_w",
        "latency_us",
        "allreduce_busbw_gbs",
        "alltoall_busbw_gbs",
        "two_tier_max_gpus",
        "cost",
    }
    assert keys <= set(data["candidates"][0])
    assert {"fabric", "switch", "reasons"} <= set(data["recommendation"])
    assert set(data["weights"]) == {"performance", "cost", "operations", "headroom"}
    out = tmp_path / "c.svg"
    r = CliRunner().invoke(
        main, ["compare", "--gpus", "256", "--sizes", "1M,1G", "--format", "svg", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("<svg") and "roce:sn5600 all-to-all" in out.read_text()


def test_estimate_compare_fabric_lets_the_switch_follow() -> None:
    r = CliRunner().invoke(
        main,
        [
            "estimate",
            "--gpus",
            "1024",
            "--compare",
            "fabric=infiniband,roce",
            "--sizes",
            "8K",
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    scen = json.loads(r.output)["scenarios"]
    assert [s["label"] for s in scen] == ["fabric=infiniband", "fabric=roce"]
    assert "QM9700" in " ".join(scen[0]["assumptions"])
    assert "SN5600" in " ".join(scen[1]["assumptions"])
    # latency differs through the switch on the path: small messages
    assert scen[0]["points"][0]["time_s"] < scen[1]["points"][0]["time_s"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--candidates", "myrinet:qm9700"], "--candidates"),
        (["--candidates", "roce:qm9700"], "infiniband switch, not one for roce"),
        (["--candidates", "infiniband:sn5600"], "ethernet switch, not one for infiniband"),
        (["--candidates", "roce:nope"], "unknown switch model"),
        (["--weights", "speed=1"], "--weights"),
        (["--weights", "performance=x"], "--weights"),
        (["--weights", "performance=0,cost=0"], "sum to 0"),
        (["--weights", "performance=-1"], "--weights"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], needle: str) -> None:
    r = CliRunner().invoke(main, ["compare", "--gpus", "128", *args])
    assert r.exit_code == 2, r.output
    assert needle in r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    assert "Traceback" not in r.output


def test_parse_candidates_default_switch_for_a_bare_fabric() -> None:
    got = parse_candidates("infiniband,roce:SN5600,ethernet", SPEC)
    assert got == [
        Candidate(fabric="infiniband", switch="qm9700"),
        Candidate(fabric="roce", switch="sn5600"),
        Candidate(fabric="ethernet", switch="sn5600"),
    ]


def test_estimate_sharp_flag_is_the_compare_figure() -> None:
    r = CliRunner().invoke(
        main, ["estimate", "--gpus", "1024", "--sizes", "64K,16G", "--sharp", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    busbw = json.loads(r.output)["points"][-1]["busbw_gbs"]
    assert busbw == comparison(True).candidates[0].allreduce_busbw_gbs


def test_design_report_has_the_options_considered() -> None:
    from html import escape

    from fabric_stack.artifacts.report_options import options_comparison, render_options_section

    spec = validate_spec({"gpus": 128})
    found = options_comparison(spec)
    assert not isinstance(found, str)
    html = render_options_section(found)
    assert escape(found.recommendation.paragraph, quote=True) in html
    from fabric_stack.views.compare import option_rows

    assert "<th>infiniband:qm9700</th>" in html and "<th>roce:sn5600</th>" in html
    assert html.count("<tr>") == len(option_rows(found)) + 1  # the head row and one per row
    bad = options_comparison(
        validate_spec({"gpus": 128, "nic_gbps": 100, "switch": "sn5600", "fabric": "roce"})
    )
    assert isinstance(bad, str) and "infiniband" in bad
    assert "could not be planned" in render_options_section(bad)


def test_cli_prices_the_same_file_as_bom(tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "p.csv"
    good.write_text("part_number,unit_price,currency\nqm9700,30000,USD\nsn5600,25000,USD\n")
    r = CliRunner().invoke(
        main,
        ["compare", "--gpus", "256", "--sizes", "1G", "--prices", str(good), "--format", "json"],
    )
    assert r.exit_code == 0, r.output
    cands = json.loads(r.output)["candidates"]
    b = CliRunner().invoke(
        main, ["bom", "--gpus", "256", "--prices", str(good), "--format", "json"]
    )
    assert b.exit_code == 0, b.output
    assert cands[0]["cost"]["total"] == json.loads(b.output)["cost"]["total"]
    assert cands[0]["cost"]["unpriced"]  # cables and optics are not in this file
    bad = tmp_path / "bad.csv"
    bad.write_text("part,price\nqm9700,1\n")
    r = CliRunner().invoke(main, ["compare", "--gpus", "128", "--prices", str(bad)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
