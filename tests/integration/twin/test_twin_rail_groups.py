"""A RoCE twin of a small rail-grouped fabric (#43): real lldpd in namespaces converges on
the plan, and the real drift over what it collected finds nothing.

4 servers of one SN5600 SU with one spine group per rail: 8 leaves, 8 spines (one per
rail, 64 links to its rail's leaf), 32 node-leaf and 512 leaf-spine cables; BGP routes
converge per rail (no route joins two rails). Needs root.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.twin.test_twin import (
    assert_gone,
    collect_and_drift,
    ok,
    pytestmark,
    state_of,
    twin,
    twin_dir,
)

__all__ = ["pytestmark", "twin_dir"]


def test_roce_rail_grouped_twin_converges(twin_dir: Path, tmp_path: Path) -> None:
    said = ok(twin("up", "--fabric", "roce", "--switch", "sn5600", "--gpus", "32",
                   "--spine-grouping", "rail", "--dir", str(twin_dir)))  # fmt: skip
    assert "LLDP converged" in said
    spines = sorted(ns.split("-", 2)[2] for ns in state_of(twin_dir)["namespaces"] if "spine" in ns)
    assert spines == [f"r{r}-spine-01" for r in range(1, 9)]  # one spine per rail group
    report = json.loads(ok(twin("check", "--dir", str(twin_dir), "--format", "json")))
    # 32 node-leaf + 512 leaf-spine + 16 access cables, both ends (as the 32-GPU full twin)
    assert report["lldp"]["ports"] == report["lldp"]["agree"] == 2 * 560
    out = tmp_path / "seen"
    assert collect_and_drift(twin_dir, out)["summary"]["total"] == 0
    # Each spine's LLDP neighbours are leaves of its own rail only.
    for spine in range(1, 9):
        seen = json.loads((out / "lldp" / f"r{spine}-spine-01.json").read_text())
        names = set(_neighbour_names(seen))
        assert names == {f"su1-r{spine}-leaf"}, (spine, names)
    state = state_of(twin_dir)
    ok(twin("down", "--dir", str(twin_dir)))
    assert_gone(twin_dir, state)


def _neighbour_names(data: object) -> list[str]:
    """Every chassis name in an ``lldpctl -f json0`` dump (whatever the nesting)."""
    out: list[str] = []
    if isinstance(data, dict):
        for k, v in data.items():
            if k == "chassis" and isinstance(v, list):
                for c in v:
                    for n in c.get("name", []) if isinstance(c, dict) else []:
                        out.append(n.get("value", ""))
            else:
                out.extend(_neighbour_names(v))
    elif isinstance(data, list):
        for v in data:
            out.extend(_neighbour_names(v))
    return out
