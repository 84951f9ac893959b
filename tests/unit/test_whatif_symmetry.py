"""Issue 35: N−1 measures one switch per symmetry class; every switch must agree.

Exhaustive on small fabrics: each switch failed alone through :func:`analyze_failures`
(no grouping) gives exactly the row :func:`n_minus_1` reports for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_stack.analysis.whatif import (
    FabricIndex,
    Failure,
    analyze_failures,
    n_minus_1,
    switch_classes,
)
from tests.contract import run_checked
from tests.unit.test_whatif import SPECS, topo_of


@pytest.mark.parametrize("name", list(SPECS))
def test_grouped_switch_rows_equal_each_switch_measured_alone(name: str) -> None:
    topo = topo_of(name)
    index = FabricIndex(topo)
    rows = {r.target: r for r in n_minus_1(index, "switch")}
    assert len(rows) == topo.plan.switches.total or len(rows) == len(
        list(topo.switches("leaf", "spine", "core"))
    )
    for target, row in rows.items():
        alone = analyze_failures(topo, [Failure(device=target)], index=index)
        got = (row.bisection_tbps, row.isolated_gpus, row.ecmp_min, row.capacity_lost_pct)
        want = (
            round(alone.bisection_tbps.after, 6),
            alone.isolated.gpus,
            alone.ecmp.min,
            alone.capacity_lost_pct,
        )
        assert got == want, (name, target)


def test_classes_are_few_on_a_regular_fabric() -> None:
    classes = switch_classes(FabricIndex(topo_of("three-tier")))
    assert len(set(classes.values())) < len(classes) / 2


def test_failures_already_applied_measure_every_switch() -> None:
    topo = topo_of("two-su")
    index = FabricIndex(topo)
    dead = index.resolve([Failure(device="spine-01")])
    for row in n_minus_1(index, "switch", dead)[:40]:
        alone = analyze_failures(topo, [Failure(device="spine-01"), Failure(device=row.target)])
        assert row.bisection_tbps == round(alone.bisection_tbps.after, 6), row.target


def test_max_seconds_bounds_n_minus_1_in_one_line(tmp_path: Path) -> None:
    run = run_checked(["whatif", "--n-minus-1", "all", "--max-seconds", "0.000001"], tmp_path)
    assert run.code == 2, run.stderr
    assert run.stderr.startswith("error: --n-minus-1 all: stopped at --max-seconds 1e-06 after ")
    assert "failures (raise --max-seconds" in run.stderr
