"""The rendered topology.conf in a real slurmctld: `scontrol show topology` is the plan.

Each test starts a throw-away ``slurmctld`` (Debian 12's slurm-wlm 22.05,
``scripts/slurm-deps.sh``) in the foreground on loopback: a generated ``slurm.conf`` with
the plan's servers as ``State=FUTURE`` nodes (no slurmd needed), ``ClusterName``,
``SlurmctldHost=localhost`` on a free port, ``StateSaveLocation`` in the test's tmp dir,
``TopologyPlugin=topology/tree``, ``AuthType=auth/none`` and ``CredType=cred/none`` (22.05
still ships auth_none.so, so no munge daemon is needed) and ``SlurmUser=root``. It loads
``slurm/topology.conf`` as rendered, then compares ``scontrol show topology`` with the
plan: the switches and their levels (SU 0, spine 1, core 2), each switch's node set (Slurm
computes the union above level 0) and child switches, and the planned cables behind every
edge Slurm shows (each edge has cables, every compute cable is behind one edge). The
controller is stopped with ``scontrol shutdown`` (killed after 10 s) and never outlives
its test.

Block topology (``topology/block``, Slurm 23.11+) and ``topology.yaml`` (25.05+) cannot be
loaded here: Debian 12's Slurm is 22.05 (its plugin directory has topology_tree,
topology_3d_torus, topology_hypercube and topology_none, no topology_block). They are
checked against Slurm's documented grammar in tests/unit/test_artifacts_slurm.py.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fabric_stack.adapters.discovery.slurm_topology import SlurmTopologyReader
from fabric_stack.artifacts import render_artifacts
from fabric_stack.artifacts._base import safe_name
from fabric_stack.drift.scheduler import compare_scheduler
from fabric_stack.text.hostlist import compress, expand
from fabric_stack.topology.build import FabricTopology
from fabric_stack.topology.scheduler import scheduler_view
from tests.golden_artifacts import context

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="slurmctld runs as SlurmUser=root")

PLANS: dict[str, dict[str, Any]] = {
    "seed": {},
    "4-su": {"gpus": 1024},
    "3-tier": {"switch": "generic-32x400", "gpus": 1024},
}
"""The seed cluster, a four-SU plan (127 servers) and a three-tier plan (4 pods, 8 SUs)."""

SLURMCTLD = shutil.which("slurmctld") or "/usr/sbin/slurmctld"
SCONTROL = shutil.which("scontrol") or "/usr/bin/scontrol"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


@pytest.fixture(autouse=True, scope="module")
def _tools() -> None:
    missing = [t for t in (SLURMCTLD, SCONTROL) if not Path(t).exists()]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/slurm-deps.sh")


def _free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def slurm_conf(topo: FabricTopology, d: Path) -> str:
    """A minimal slurm.conf: the plan's servers as FUTURE nodes, the tree plugin, no auth."""
    ctld, slurmd = _free_ports(2)
    nodes = compress(p.name for p in scheduler_view(topo).servers)
    (d / "state").mkdir()
    return "\n".join(
        [
            f"ClusterName={safe_name(topo.plan.spec.name).lower()[:40]}",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={ctld}",
            f"SlurmdPort={slurmd}",
            "AuthType=auth/none",
            "CredType=cred/none",
            "SlurmUser=root",
            f"StateSaveLocation={d / 'state'}",
            f"SlurmdSpoolDir={d / 'spool'}",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmctldLogFile={d / 'slurmctld.log'}",
            "SlurmctldDebug=info",
            "TopologyPlugin=topology/tree",
            "SelectType=select/cons_tres",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none",
            f"NodeName={nodes} CPUs=1 State=FUTURE",
            "PartitionName=gpu Nodes=ALL Default=YES",
            "",
        ]
    )


def _scontrol(d: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
    return subprocess.run(
        [SCONTROL, *args], env=env, capture_output=True, text=True, timeout=15, check=False
    )


@contextmanager
def slurmctld(d: Path) -> Iterator[Path]:
    """Run slurmctld on ``d/slurm.conf`` until the block ends (then stop it, bounded)."""
    env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
    with (d / "slurmctld.out").open("w") as out:
        proc = subprocess.Popen(
            [SLURMCTLD, "-D", "-i", "-f", str(d / "slurm.conf")],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while "is UP" not in _scontrol(d, "ping").stdout:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log = (d / "slurmctld.out").read_text()[-3000:]
                    pytest.fail(f"slurmctld did not come up (exit {proc.poll()}):\n{log}")
                time.sleep(0.3)
            yield d
        finally:
            if proc.poll() is None:
                _scontrol(d, "shutdown")
                try:
                    proc.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
    assert proc.returncode is not None  # no controller left behind


def show_topology(d: Path) -> dict[str, dict[str, str]]:
    """``scontrol show topology``: switch name → its fields (Level, LinkSpeed, Nodes, …)."""
    r = _scontrol(d, "show", "topology")
    assert r.returncode == 0, r.stderr
    out: dict[str, dict[str, str]] = {}
    for line in r.stdout.splitlines():
        fields = dict(w.split("=", 1) for w in line.split() if "=" in w)
        if "SwitchName" in fields:
            out[fields["SwitchName"]] = fields
    return out


def _load(topo: FabricTopology, tmp_path: Path, conf: str) -> tuple[dict[str, Any], str]:
    (tmp_path / "slurm.conf").write_text(slurm_conf(topo, tmp_path))
    (tmp_path / "topology.conf").write_text(conf)
    with slurmctld(tmp_path):
        shown = show_topology(tmp_path)
    log = (tmp_path / "slurmctld.log").read_text() + (tmp_path / "slurmctld.out").read_text()
    return shown, log


def _edge_cables(topo: FabricTopology) -> dict[tuple[str, str], int]:
    """(parent, child) of Slurm's tree → planned cables behind it, from the link list."""
    su_of = {d.name: f"su{d.su}" for d in topo.switches("leaf")}
    out: dict[tuple[str, str], int] = {}
    for link in topo.links_of("node_leaf", "leaf_spine", "spine_core"):
        if link.role == "node_leaf":
            key = (su_of[link.b_device], link.a_device)
        elif link.role == "leaf_spine":
            key = (link.b_device, su_of[link.a_device])
        else:
            key = (link.b_device, link.a_device)
        out[key] = out.get(key, 0) + 1
    return out


@pytest.mark.parametrize("plan", PLANS)
def test_scontrol_show_topology_is_the_plan(tmp_path: Path, plan: str) -> None:
    ctx = context(PLANS[plan])
    topo = ctx.topo
    conf = {a.path: a.content for a in render_artifacts("slurm", ctx)}["slurm/topology.conf"]
    shown, log = _load(topo, tmp_path, conf)
    assert "Multiple leaf switches" not in log
    view = scheduler_view(topo)
    assert set(shown) == {s.name for s in view.switches}
    for sw in view.switches:
        got = shown[sw.name]
        assert int(got["Level"]) == sw.level, sw.name
        assert set(expand(got["Nodes"])) == set(sw.nodes), sw.name
        assert set(expand(got.get("Switches", ""))) == set(sw.switches), sw.name
        assert got["LinkSpeed"] == str(topo.plan.link_gbps)
    # Link counts: every edge Slurm shows stands for planned cables, and every compute cable
    # of the plan is behind an edge Slurm shows (so the tree leaves no hop out).
    cables = _edge_cables(topo)
    edges = {
        (name, child)
        for name, f in shown.items()
        for child in expand(f.get("Switches", ""))
        + (expand(f["Nodes"]) if int(f["Level"]) == 0 else [])
    }
    assert edges == set(cables)
    rails = topo.plan.rails * topo.plan.planes
    counts = topo.count_links()
    by_level = {0: 0, 1: 0, 2: 0}
    for (parent, _child), n in cables.items():
        by_level[int(shown[parent]["Level"])] += n
    assert by_level == {
        0: counts["node_leaf"],
        1: counts["leaf_spine"],
        2: counts.get("spine_core", 0),
    }
    assert all(cables[(f"su{p.su}", p.name)] == rails for p in view.servers)
    levels = {int(f["Level"]) for f in shown.values()}
    assert levels == ({0, 1, 2} if topo.plan.tiers == 3 else {0, 1})


def test_rail_leaves_as_slurm_switches_is_what_slurm_warns_about(tmp_path: Path) -> None:
    """Why the SU is the lowest level: one SwitchName per rail leaf, each with the SU's
    servers, makes slurmctld warn that several leaf switches hold the same nodes."""
    topo = context({}).topo
    view = scheduler_view(topo)
    su = view.switch("su1")
    lines = [f"SwitchName={leaf} Nodes={compress(su.nodes)}" for leaf in su.members]
    lines += [
        f"SwitchName={s.name} Switches={compress(su.members)}"
        for s in view.switches
        if s.level == 1
    ]
    shown, log = _load(topo, tmp_path, "\n".join(lines) + "\n")
    assert "Multiple leaf switches contain nodes" in log
    assert {int(f["Level"]) for f in shown.values()} == {0, 1}


def test_drift_finds_a_node_slurmctld_was_told_is_elsewhere(tmp_path: Path) -> None:
    """A live controller loaded with a misplaced server: drift on its `scontrol show
    topology` output finds exactly that server under the wrong switch."""
    ctx = context(PLANS["4-su"])
    conf = {a.path: a.content for a in render_artifacts("slurm", ctx)}["slurm/topology.conf"]
    conf = conf.replace("Nodes=su1-node[01-31]", "Nodes=su1-node[01-06,08-31]")
    conf = conf.replace("Nodes=su2-node[01-32]", "Nodes=su1-node07,su2-node[01-32]")
    (tmp_path / "slurm.conf").write_text(slurm_conf(ctx.topo, tmp_path))
    (tmp_path / "topology.conf").write_text(conf)
    with slurmctld(tmp_path):
        shown = _scontrol(tmp_path, "show", "topology").stdout
    (tmp_path / "shown.txt").write_text(shown)
    report = compare_scheduler(ctx.topo, SlurmTopologyReader(tmp_path / "shown.txt").load())
    (f,) = report.findings
    assert (f.kind, f.cause, f.su) == ("wrong_peer", "wrong_switch", 1)
    assert f.summary.startswith("su1-node07 is under SwitchName=su2")
