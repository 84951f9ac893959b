"""`render slurm --ibnetdiscover` loaded by a real slurmctld (issue 47).

The fabrics: the issue's 2023 EDR cluster as :mod:`tests.ib_site_fabrics` writes it (in
the real dumps' layout, with the truth it was built from) and the real NDR DGX dump
(``../shared/realdata/ibnetdiscover/topograph-ndr-dgx-example.out``). The controller is
the one of :mod:`tests.integration.slurm.test_slurmctld_topology` (Debian 12's 22.05,
foreground, loopback, no auth, stopped at the end of each test).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from fabric_stack.text.hostlist import compress, expand
from tests.ib_site_fabrics import edr_2023
from tests.integration.slurm.test_slurmctld_topology import (
    SCONTROL,
    SLURMCTLD,
    _free_ports,
    show_topology,
    slurmctld,
)
from tests.unit.test_adopt import REAL

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="slurmctld runs as SlurmUser=root")
NDR = REAL / "ibnetdiscover" / "topograph-ndr-dgx-example.out"


def _conf(d: Path, nodes: list[str]) -> str:
    ctld, slurmd = _free_ports(2)
    (d / "state").mkdir()
    return "\n".join(
        [
            "ClusterName=discovered",
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
            f"NodeName={compress(nodes)} CPUs=1 State=FUTURE",
            "PartitionName=gpu Nodes=ALL Default=YES",
            "",
        ]
    )


def _load(dump: Path, d: Path) -> tuple[dict[str, dict[str, str]], str, str]:
    out = d / "out"
    r = CliRunner().invoke(
        main, ["render", "slurm", "--ibnetdiscover", str(dump), "--out-dir", str(out)]
    )
    assert r.exit_code == 0, r.output
    conf = (out / "slurm" / "topology.conf").read_text(encoding="utf-8")
    nodes = [
        n
        for line in conf.splitlines()
        if line.startswith("SwitchName=") and " Nodes=" in line
        for n in expand(line.split(" Nodes=")[1].split()[0])
    ]
    (d / "slurm.conf").write_text(_conf(d, nodes))
    (d / "topology.conf").write_text(conf)
    with slurmctld(d):
        shown = show_topology(d)
    log = (d / "slurmctld.log").read_text() + (d / "slurmctld.out").read_text()
    return shown, log, conf


@pytest.fixture(autouse=True, scope="module")
def _tools() -> None:
    missing = [t for t in (SLURMCTLD, SCONTROL) if not Path(t).exists()]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/slurm-deps.sh")


def test_the_edr_cluster_loads_with_every_host_under_its_leaf(tmp_path: Path) -> None:
    text, truth = edr_2023()
    dump = tmp_path / "edr.txt"
    dump.write_text(text, encoding="utf-8")
    shown, log, _ = _load(dump, tmp_path)
    assert "Multiple leaf switches" not in log
    guid = {
        leaf: f"S-{0x248A070300000000 + (1 << 24) + int(leaf[4:]):016x}" for leaf in truth.leaves
    }
    for host, (leaf,) in truth.host_leaves.items():
        assert host in expand(shown[guid[leaf]]["Nodes"]), (host, leaf)
        assert shown[guid[leaf]]["Level"] == "0"
    spines = [s for s, f in shown.items() if f["Level"] == "1"]
    assert len(spines) == 2
    for s in spines:
        assert set(expand(shown[s]["Switches"])) == set(guid.values())
        assert len(expand(shown[s]["Nodes"])) == 96  # Slurm's union above level 0


@pytest.mark.skipif(not NDR.is_file(), reason="../shared/realdata not found")
def test_the_real_ndr_dump_loads_with_one_lowest_switch_per_host(tmp_path: Path) -> None:
    shown, log, _conf_text = _load(NDR, tmp_path)
    assert "Multiple leaf switches" not in log
    level0 = {s: f for s, f in shown.items() if f["Level"] == "0"}
    assert len(level0) == 8  # the 8 SUs' rail leaves (rows 01-04 of each), line 10 on
    seen: dict[str, str] = {}
    for s, f in level0.items():
        for n in expand(f["Nodes"]):
            assert n not in seen, (n, s, seen[n])
            seen[n] = s
    # a08-p1-dgx-04-c01: 4 HCAs (lines 4598, 4472, 4346, 2015), one node, under SU 4's group
    assert "a08-p1-dgx-04-c01" in seen
    assert sum(1 for f in shown.values() if f["Level"] == "1") == 9  # IBSPINE-01 … -09


@pytest.mark.parametrize("family", ["rails-4", "unnamed"])
def test_generated_families_load_with_one_lowest_switch_per_host(
    tmp_path: Path, family: str
) -> None:
    """Four rails per host (one node per host, one host group per four leaves) and
    factory NodeDescs (hosts keep H-<guid>), from tests/unit/test_discovered_scheduler.py."""
    from tests.ib_site_fabrics import site_fabric
    from tests.unit.test_discovered_scheduler import SHAPES

    text, truth = site_fabric(SHAPES[family], seed=len(family))
    dump = tmp_path / "dump.txt"
    dump.write_text(text, encoding="utf-8")
    shown, log, _ = _load(dump, tmp_path)
    assert "Multiple leaf switches" not in log
    level0 = [expand(f["Nodes"]) for f in shown.values() if f["Level"] == "0"]
    nodes = [n for group in level0 for n in group]
    assert len(nodes) == len(set(nodes)) == len(truth.host_leaves)
    assert len(level0) == len(truth.leaves) // SHAPES[family].hcas_per_host
