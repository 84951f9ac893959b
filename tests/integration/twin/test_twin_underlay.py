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
from tests.integration.twin.test_twin import ok, state_of, twin
from tests.integration.twin.test_twin import (
    twin_dir as twin_dir,  # the fixture (torn down whatever happens)
)

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


def _small(d: Path, *extra: str) -> dict[str, Any]:
    """64 GPUs on SN5600 in 2 SUs of 4 servers: 16 leaves, every sampled pair crosses SUs."""
    said = ok(twin("up", "--fabric", "roce", "--switch", "sn5600", "--gpus", "64",
                   "--su-nodes", "4", "--dir", str(d), *extra))  # fmt: skip
    assert "BGP sessions up" in said
    report = check(d)
    assert report["bgp"]["established"] == report["bgp"]["sessions"] > 0
    assert report["reachability"]["ok"] == report["reachability"]["pairs"] == 16
    return report


def test_frr_restarts_after_down_and_clear(twin_dir: Path) -> None:
    """`fault down` stops a leaf's FRR with its lldpd; `fault --clear` must start it again."""
    before = _small(twin_dir)
    state = TwinState.model_validate(state_of(twin_dir))
    ctx = RenderContext.from_topology(topology_of(state))
    # The leaf of the first sampled pair's sender: its pair must fail while it is down.
    src, _ = sample_pairs(ctx)[0]
    leaf = src.leaf
    ok(twin("fault", "--dir", str(twin_dir), "down", leaf))
    during = check(twin_dir)
    lost = before["bgp"]["established"] - during["bgp"]["established"]
    assert lost == 2 * len(ctx.underlay.links_of(leaf))
    assert f"{src.server}:{src.nic}" in {f["from"] for f in during["reachability"]["failed"]}
    said = ok(twin("fault", "--dir", str(twin_dir), "--clear"))
    assert "cleared 1 fault" in said
    after = check(twin_dir)
    assert after["bgp"]["established"] == after["bgp"]["sessions"] == before["bgp"]["sessions"]
    assert after["reachability"]["ok"] == after["reachability"]["pairs"] == 16, after
    assert after["ok"] is True
    names = {p["name"] for p in state_of(twin_dir)["processes"]}
    assert {f"zebra {leaf}", f"bgpd {leaf}"} <= names
    # Unplug and re-plug the sender's leaf port: the clear makes a new veth pair, which
    # must get the host's rail address and the leaf's bridge membership again.
    ok(twin("fault", "--dir", str(twin_dir), "unplug", f"{leaf}:{src.leaf_port}"))
    cut = check(twin_dir)
    assert f"{src.server}:{src.nic}" in {f["from"] for f in cut["reachability"]["failed"]}
    ok(twin("fault", "--dir", str(twin_dir), "--clear"))
    replugged = check(twin_dir)
    assert replugged["reachability"]["ok"] == replugged["reachability"]["pairs"] == 16, replugged


def test_p2p31_host_addressing_routes(twin_dir: Path, tmp_path: Path) -> None:
    """underlay.host_addressing p2p31: a /31 per host port, leaf side even; pairs reachable."""
    cfg = tmp_path / "p2p31.yaml"
    cfg.write_text("underlay:\n  host_addressing: p2p31\n", encoding="utf-8")
    _small(twin_dir, "--config", str(cfg))
    state = TwinState.model_validate(state_of(twin_dir))
    ctx = RenderContext.from_topology(topology_of(state))
    h = ctx.underlay.hosts[0]
    assert h.prefixlen == 31
    host_ns, leaf_ns = f"fst-{state.tag}-{h.server}", f"fst-{state.tag}-{h.leaf}"
    got = subprocess.run(["ip", "-n", host_ns, "-4", "-o", "addr", "show", "dev", h.nic],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert f"{h.address}/31" in got
    got = subprocess.run(["ip", "-n", leaf_ns, "-4", "-o", "addr", "show", "dev", h.leaf_port],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert f"{h.gateway}/31" in got  # zebra put the rendered leaf side on the port itself
    # No rail bridge on a p2p31 leaf: each host port is its own routed interface.
    links = subprocess.run(["ip", "-n", leaf_ns, "-o", "link", "show", "type", "bridge"],
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert links.strip() == ""
