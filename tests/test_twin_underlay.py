"""The RoCE twin routes: FRR with the rendered frr.conf in every switch, hosts with rendered rules.

Real daemons (zebra + bgpd per switch namespace), real packets (a TCP SYN per
sampled pair, answered by RST). Needs root; skipped otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabric_stack.artifacts import RenderContext
from fabric_stack.twin.model import TwinState
from fabric_stack.twin.ops import topology_of
from fabric_stack.twin.ops_frr import sample_pairs
from tests.test_twin import ok, state_of, twin
from tests.test_twin import twin_dir as twin_dir  # the fixture (torn down whatever happens)

pytestmark = [
    pytest.mark.twin,
    pytest.mark.skipif(os.geteuid() != 0, reason="the twin needs root (network namespaces)"),
]


def check(d: Path) -> dict[str, Any]:
    res = twin("check", "--dir", str(d), "--format", "json")
    assert res.returncode in (0, 1), res.stderr
    report: dict[str, Any] = json.loads(res.stdout)
    return report


def _converged(d: Path, gpus: str, su_nodes: str) -> dict[str, Any]:
    said = ok(twin("up", "--fabric", "roce", "--switch", "sn5600", "--gpus", gpus,
                   "--su-nodes", su_nodes, "--dir", str(d)))  # fmt: skip
    assert "BGP sessions up" in said
    report = check(d)
    assert report["bgp"]["sessions"] > 0
    assert report["bgp"]["established"] == report["bgp"]["sessions"]
    assert report["reachability"]["pairs"] == 16
    assert report["reachability"]["ok"] == 16, report["reachability"]
    assert report["ok"] is True
    return report


def test_roce_128_gpus_two_sus_routes_survives_a_spine_and_needs_the_rule(twin_dir: Path) -> None:
    before = _converged(twin_dir, "128", "8")
    ok(twin("fault", "--dir", str(twin_dir), "down", "spine-02"))
    after = check(twin_dir)
    state = TwinState.model_validate(state_of(twin_dir))
    ctx = RenderContext.from_topology(topology_of(state))
    lost = before["bgp"]["established"] - after["bgp"]["established"]
    assert lost == 2 * len(ctx.underlay.links_of("spine-02"))  # both ends of its links
    assert after["reachability"]["ok"] == after["reachability"]["pairs"] == 16  # ECMP
    # Remove the source rule of one sampled pair's sender: that rail's pair must fail.
    src, _ = sample_pairs(ctx)[0]
    ns = f"fst-{state.tag}-{src.server}"
    subprocess.run(["ip", "-n", ns, "rule", "del", "from", src.address, "table", str(src.table)],
                   check=True)  # fmt: skip
    broken = check(twin_dir)
    failed = {f["from"] for f in broken["reachability"]["failed"]}
    assert f"{src.server}:{src.nic}" in failed
    assert broken["ok"] is False


def test_roce_512_gpus_converges(twin_dir: Path) -> None:
    _converged(twin_dir, "512", "32")
