"""The scheduler tree of a fabric read from ``ibnetdiscover`` (issue 47): every host under
the leaf (host group) it is cabled to, on every real sample and on generated fabrics of
other shapes whose truth the generator knows (:mod:`tests.ib_site_fabrics`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.adapters.discovery import IbnetdiscoverReader
from fabric_stack.artifacts.slurm import render_discovered
from fabric_stack.drift.discovered import discovered_tree
from fabric_stack.drift.discovered_view import discovered_view
from fabric_stack.errors import InputFileError
from tests.ib_site_fabrics import Shape, site_fabric
from tests.unit.test_adopt import REAL

IB = REAL / "ibnetdiscover"
SAMPLES = sorted(p.name for p in IB.glob("*") if p.is_file()) if IB.is_dir() else []


def _tree_of(text: str, tmp: Path) -> tuple[dict[str, int], dict[str, tuple[str, ...]]]:
    """(node → its level-0 switch's index, level-1 switch → its children) of a dump."""
    dump = tmp / "dump.txt"
    dump.write_text(text, encoding="utf-8")
    tree = discovered_tree(IbnetdiscoverReader(dump).load())
    level0 = [s for s in tree.switches if s.level == 0]
    where: dict[str, int] = {}
    for i, s in enumerate(level0):
        for n in s.nodes:
            assert n not in where, f"{n} under two lowest switches"
            where[n] = i
    return where, {s.name: s.switches for s in tree.switches if s.level == 1}


@pytest.mark.parametrize("name", SAMPLES)
def test_every_real_sample_gets_a_tree_or_one_line(name: str) -> None:
    try:
        snap = IbnetdiscoverReader(IB / name).load()
    except InputFileError:
        return  # a fragment the reader refuses with its one line (its own tests)
    tree = discovered_tree(snap)
    hosts = [n for s in tree.switches if s.level == 0 for n in s.nodes]
    assert len(hosts) == len(set(hosts))  # one lowest-level switch per node
    text = render_discovered(discovered_view(tree))[0].content
    for line in text.splitlines():
        if line.startswith("SwitchName="):
            assert " " not in line.split()[0] and ("Nodes=" in line or "Switches=" in line)
    names = {s.name for s in tree.switches}
    for s in tree.switches:
        assert set(s.switches) <= names, s  # every child is a switch of the file


def test_x5_groups_hosts_under_their_six_leaves() -> None:
    """ltaulell-X5 (QDR, not rail-optimized): 6 switches with hosts (lines 10, 49, 91,
    133, 168, 289), spines above them (test_adopt_realdata's count)."""
    if not (IB / "ltaulell-X5.topofile").is_file():
        pytest.skip("../shared/realdata not found")
    tree = discovered_tree(IbnetdiscoverReader(IB / "ltaulell-X5.topofile").load())
    assert sum(1 for s in tree.switches if s.level == 0) == 6
    assert sum(1 for s in tree.switches if s.level == 1) == 4


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    rails=st.sampled_from([1, 2, 4]),
    groups=st.integers(1, 3),
    unnamed=st.floats(0.0, 0.3),
)
def test_generated_fabrics_put_every_host_under_its_leaves(
    tmp_path_factory: pytest.TempPathFactory, seed: int, rails: int, groups: int, unnamed: float
) -> None:
    rng = random.Random(seed)
    per_leaf = rng.choice([8, 12, 16])
    hosts = groups * per_leaf
    stems = ["cn", "gpu-a", "hpc", "x", "login", "bee"]
    names: set[str] = set()
    while len(names) < hosts:
        names.add(f"{rng.choice(stems)}{rng.randrange(1, 10_000):04d}")
    ordered = sorted(names)
    if rails == 1:  # factory NodeDescs only where a host has one HCA (nothing groups them)
        ordered = [("" if rng.random() < unnamed else n) for n in ordered]
    shape = Shape(
        leaves=groups * rails,
        spines=2,
        hosts_per_leaf=per_leaf,
        hcas_per_host=rails,
        uplinks=4,
        radix=max(per_leaf + 8, groups * rails * 4),
        generation=rng.choice(["EDR", "HDR", "NDR"]),
        host_names=ordered,
        shuffle_ports=rng.random() < 0.5,
        managed=rng.random() < 0.5,
    )
    text, truth = site_fabric(shape, seed)
    where, spines = _tree_of(text, tmp_path_factory.mktemp("g"))
    group_of_leaf = {leaf: i // rails for i, leaf in enumerate(truth.leaves)}
    seen_group: dict[int, int] = {}
    for host, leaves in truth.host_leaves.items():
        node = host if not host.startswith("248a") else f"H-{host}"
        assert node in where, (node, sorted(where)[:5])
        g = group_of_leaf[leaves[0]]
        assert seen_group.setdefault(g, where[node]) == where[node]  # one group, one switch
    assert len(set(seen_group.values())) == groups
    assert len(spines) == 2 and all(len(k) == groups for k in spines.values())


def _render(args: list[str]) -> tuple[int, str]:
    from click.testing import CliRunner

    from fabric_stack.cli import main

    r = CliRunner().invoke(main, ["render", "slurm", *args], catch_exceptions=False)
    return r.exit_code, r.output


def test_bad_dumps_get_one_line_and_exit_2(tmp_path: Path) -> None:
    from tests.ib_site_fabrics import edr_2023

    text, _ = edr_2023()
    cut = text[: text.index("caguid=") + 12]  # truncated inside a CA record
    cases = {
        "binary.txt": b"\x00\x01\x02\xff" * 64,
        "cut.txt": cut.encode(),
        "empty-ish.txt": b"#\n# Topology file: generated on Tue Mar 14 09:12:44 2023\n#\n",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        code, out = _render(["--ibnetdiscover", str(tmp_path / name), "--out-dir", str(tmp_path)])
        assert code == 2, (name, out)
        lines = [s for s in out.splitlines() if s.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), (name, out)
        assert "Traceback" not in out
    assert not (tmp_path / "slurm").exists()  # nothing half-written
    (tmp_path / "ok.txt").write_text(text, encoding="utf-8")
    code, out = _render(["--ibnetdiscover", str(tmp_path / "ok.txt"), "--out-dir", str(tmp_path)])
    assert code == 0
    r_code, r_out = _render_target("hosts", tmp_path / "ok.txt", tmp_path)
    assert r_code == 2 and "renders from a plan" in r_out


def _render_target(target: str, dump: Path, out: Path) -> tuple[int, str]:
    from click.testing import CliRunner

    from fabric_stack.cli import main

    r = CliRunner().invoke(
        main, ["render", target, "--ibnetdiscover", str(dump), "--out-dir", str(out)]
    )
    return r.exit_code, r.output
