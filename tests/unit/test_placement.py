"""Best vs worst contiguous placement of an N-GPU job (analysis/placement.py)."""

from __future__ import annotations

import pytest

from fabric_stack.analysis.estimate import parse_sizes
from fabric_stack.analysis.placement import (
    best_placement,
    compare_placements,
    worst_contiguous_placement,
)
from fabric_stack.errors import SpecError
from tests.golden_artifacts import context

THREE_TIER = {"switch": "generic-32x400", "gpus": 1024}  # 4 pods of 2 SUs, 15-16 servers each


def test_a_job_that_fits_one_su_gets_one_su_the_smallest_it_fits() -> None:
    topo = context({"gpus": 1024}).topo  # SU 1 has 31 servers (a UFM position), SUs 2-4 32
    assert best_placement(topo, 31 * 8).hosts[0] == "su1-node01"
    p = best_placement(topo, 32 * 8)
    assert (p.sus, p.pods, p.hosts[0], p.hosts[-1]) == (1, 1, "su2-node01", "su2-node32")


def test_a_larger_job_takes_whole_sus_of_one_pod_first() -> None:
    topo = context(THREE_TIER).topo
    p = best_placement(topo, 32 * 8)  # two SUs' worth: one pod (2 SUs of 16)
    assert (p.sus, p.pods) == (2, 1)
    assert {h.split("-")[0] for h in p.hosts} in ({"su3", "su4"}, {"su5", "su6"}, {"su7", "su8"})


def test_the_worst_contiguous_run_crosses_pods_and_splits_evenly() -> None:
    topo = context(THREE_TIER).topo
    w = worst_contiguous_placement(topo, 16 * 8)
    assert (w.sus, w.pods) == (2, 2)
    sus = [h.split("-")[0] for h in w.hosts]
    assert abs(sus.count(sus[0]) - sus.count(sus[-1])) <= 1
    two = worst_contiguous_placement(context({"gpus": 1024}).topo, 32 * 8)
    assert (two.sus, two.hosts[0], two.hosts[-1]) == (2, "su1-node16", "su2-node16")


def test_both_are_estimated_with_the_estimate_stage() -> None:
    c = compare_placements(context(THREE_TIER).topo, 128, "all_reduce", parse_sizes("1G"))
    assert c.best_estimate.job.pods == 1 and c.worst_estimate.job.pods == 2
    assert c.best_estimate.points[-1].busbw_gbs >= c.worst_estimate.points[-1].busbw_gbs


@pytest.mark.parametrize(("gpus", "message"), [(12, "not a positive multiple"), (10**6, "need")])
def test_a_job_that_cannot_be_placed_names_the_flag(gpus: int, message: str) -> None:
    with pytest.raises(SpecError, match=message) as err:
        best_placement(context({}).topo, gpus)
    assert "--job-gpus" in str(err.value)


def test_the_design_report_shows_both() -> None:
    from fabric_stack.analysis.whatif import FabricIndex
    from fabric_stack.artifacts.report_estimate import render_placement

    topo = context({"gpus": 1024}).topo
    html = render_placement(topo, FabricIndex(topo))
    assert "Job placement (256 GPUs, one SU's worth)" in html
    assert "1 SU(s): su2-node01 … su2-node32" in html
    assert "2 SU(s): su1-node16 … su2-node16" in html
    assert "every job is inside one SU" in render_placement(
        context({}).topo, FabricIndex(context({}).topo)
    )
