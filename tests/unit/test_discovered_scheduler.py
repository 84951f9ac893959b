"""`render slurm|k8s-topology --ibnetdiscover` (issue 47): the scheduler's files of a fabric
nobody planned, through the plan's own serializers.

Judged on every real ``ibnetdiscover`` sample in ``../shared/realdata`` and on generated
fabrics whose truth the generator knows (:mod:`tests.ib_site_fabrics`):

* every host under one lowest-level switch, the one standing for the leaves it is cabled
  to; all HCAs of a host one node; node lists in Slurm's hostlist syntax;
* topology.yaml (Slurm 25.05+) and the block topology (23.11+) against the grammar of
  Slurm's man pages (``check_topology_yaml`` of tests/unit/test_artifacts_slurm.py; the
  machine's slurmctld is 22.05 and loads neither: UNVERIFIED on a controller);
* the Kubernetes labels consistent with the tree (Topograph's keys: the node's switch,
  the one above, the one above that); the Kueue Topology against Kueue's own CRD
  (``../shared/schemas/crds/kueue``: jsonschema in Python, and ``kubeconform -strict``
  when installed); ``labels.sh`` by ``sh -n`` and shellcheck, and run against a fake
  kubectl;
* bad input to the new flags: one line, exit 2, nothing written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.adapters.discovery import IbnetdiscoverReader
from fabric_stack.artifacts import k8s_topology, slurm
from fabric_stack.cli import main
from fabric_stack.drift.discovered import discovered_tree
from fabric_stack.drift.discovered_view import (
    discovered_view,
    fnv1a64,
    kubernetes_nodes,
    topograph_value,
)
from fabric_stack.drift.nvlink_domains import load_nvlink_domains
from fabric_stack.errors import InputFileError
from fabric_stack.text.hostlist import compress, expand
from fabric_stack.topology.scheduler import SchedulerView
from fabric_stack.topology.scheduler_labels import (
    ACCELERATOR,
    CORE,
    HOSTNAME,
    LEAF,
    SPINE,
    kueue_levels,
)
from tests.ib_site_fabrics import Shape, edr_2023, site_fabric
from tests.unit.test_adopt import REAL
from tests.unit.test_artifacts_k8s_topology import SHARED_CRD, check_cel, check_label
from tests.unit.test_artifacts_slurm import _conf_lines, check_topology_yaml

IB = REAL / "ibnetdiscover"
SAMPLES = sorted(p.name for p in IB.glob("*") if p.is_file()) if IB.is_dir() else []
NDR = IB / "topograph-ndr-dgx-example.out"

SHAPES: dict[str, Shape] = {
    "edr-2023": Shape(
        host_names=[*(f"node{i:03d}" for i in range(1, 65)), *(f"gpu{i:03d}" for i in range(1, 33))]
    ),
    "rails-4": Shape(leaves=8, hosts_per_leaf=16, hcas_per_host=4, radix=64, generation="NDR"),
    "unnamed": Shape(
        leaves=2,
        hosts_per_leaf=12,
        host_names=[("" if i % 3 == 0 else f"cn{i:02d}") for i in range(24)],
        generation="HDR",
        managed=True,
        shuffle_ports=True,
    ),
    "rails-2-mlx5": Shape(
        leaves=4, hosts_per_leaf=8, hcas_per_host=2, hca_style="mlx5", shuffle_ports=True
    ),
}
"""Generated families: single-HCA mixed names, 4 rails, factory NodeDescs, 2 rails."""


def _view(dump: Path, domains: dict[str, tuple[str, ...]] | None = None) -> SchedulerView:
    return discovered_view(discovered_tree(IbnetdiscoverReader(dump).load()), domains)


def _generated(name: str, tmp: Path) -> tuple[Path, Any]:
    text, truth = site_fabric(SHAPES[name], seed=len(name))
    dump = tmp / f"{name}.txt"
    dump.write_text(text, encoding="utf-8")
    return dump, truth


def _files(view: SchedulerView) -> dict[str, str]:
    arts = [*slurm.render_discovered(view), *k8s_topology.render_view(kubernetes_nodes(view))]
    return {a.path: a.content for a in arts}


def check_view_files(view: SchedulerView) -> dict[str, str]:
    """Every invariant of the module docstring that needs no truth; the files rendered."""
    files = _files(view)
    conf = _conf_lines(files["slurm/topology.conf"])
    level0 = {ln["switchname"]: expand(ln["nodes"]) for ln in conf if "nodes" in ln}
    under: dict[str, str] = {}
    for sw, nodes in level0.items():
        for n in nodes:
            assert n not in under, f"{n} under {under[n]} and {sw}"
            under[n] = sw
    assert set(under) == {p.name for p in view.servers}
    for ln in conf:  # Slurm's hostlist syntax, compressed: nothing left to merge
        kids = ln.get("nodes") or ln["switches"]
        assert compress(expand(kids)) == kids
    data = yaml.safe_load(files["slurm/topology.yaml"])
    check_topology_yaml(data)
    tree = {sw["switch"]: sw for sw in data[0]["tree"]["switches"]}
    assert tree.keys() == {ln["switchname"] for ln in conf}
    for ln in conf:
        assert tree[ln["switchname"]].get("nodes") == ln.get("nodes")
        assert tree[ln["switchname"]].get("children") == ln.get("switches")
    assert ("slurm/topology-block.conf" in files) == bool(view.blocks)
    assert len(data) == 1 + bool(view.blocks)
    check_labels(files, under, conf)
    return files


def check_labels(files: dict[str, str], under: dict[str, str], conf: list[dict[str, str]]) -> None:
    """Topograph's keys say what the tree says: leaf = the node's level-0 switch, spine a
    switch over it, core a switch over that; the Kueue levels are the keys present."""
    parents: dict[str, set[str]] = {}
    for ln in conf:
        for kid in expand(ln.get("switches", "")):
            parents.setdefault(kid, set()).add(ln["switchname"])
    nodes = json.loads(files["k8s-topology/nodes.json"])["items"]
    kueue = next(d for d in yaml.safe_load_all(files["k8s-topology/kueue-topology.yaml"]) if d)
    levels = [lv["nodeLabel"] for lv in kueue["spec"]["levels"]]
    check_cel(kueue)
    assert levels[-1] == HOSTNAME
    for item in nodes:
        name, labels = item["metadata"]["name"], item["metadata"]["labels"]
        for k, v in labels.items():
            check_label(k, v)
        assert labels[LEAF] == topograph_value(under[name])
        if SPINE in labels:
            assert labels[SPINE] in parents[under[name]]
        if CORE in labels:
            assert labels[CORE] in parents[labels[SPINE]]
        # every tree level labelled; the accelerator only where a domain names the host
        assert set(levels[:-1]) - {ACCELERATOR} <= set(labels), (name, labels)


@pytest.mark.parametrize("name", SAMPLES)
def test_every_real_sample(name: str) -> None:
    try:
        view = _view(IB / name)
    except InputFileError:
        return  # a fragment the reader refuses with its one line (the reader's tests)
    if not view.switches:
        return  # no host cabled to a switch: the CLI says so (test_discovered_topology)
    check_view_files(view)


@pytest.mark.parametrize("name", SHAPES)
def test_generated_families_against_their_truth(name: str, tmp_path: Path) -> None:
    dump, truth = _generated(name, tmp_path)
    view = _view(dump)
    files = check_view_files(view)
    shape = SHAPES[name]
    # all HCAs of a host one node: as many nodes as hosts
    assert len(view.servers) == len(truth.host_leaves)
    leaf_of = {p.name: p.tree[0] for p in view.servers}
    rows = shape.hcas_per_host
    group_of = {leaf: i // rows for i, leaf in enumerate(truth.leaves)}
    seen: dict[int, str] = {}
    for host, leaves in truth.host_leaves.items():
        node = host if host in leaf_of else f"H-{host}"
        assert seen.setdefault(group_of[leaves[0]], leaf_of[node]) == leaf_of[node]
    assert len(set(seen.values())) == len(truth.leaves) // rows  # groups kept apart
    k8s = {i["metadata"]["name"] for i in json.loads(files["k8s-topology/nodes.json"])["items"]}
    named = {h for h in truth.host_leaves if not h.startswith("248a")}
    assert k8s == named  # unnamed hosts (H-<guid>) are no Kubernetes node


def test_the_edr_clusters_hosts_are_one_hostlist_per_leaf(tmp_path: Path) -> None:
    """The issue's EDR cluster: each leaf's 24 hosts in one compressed hostlist."""
    text, truth = edr_2023()
    dump = tmp_path / "edr.txt"
    dump.write_text(text, encoding="utf-8")
    conf = check_view_files(_view(dump))["slurm/topology.conf"]
    assert "SwitchName=S-248a070301000001 Nodes=node[001-024] LinkSpeed=100\n" in conf
    assert "Switches=S-248a[070301000001-070301000004]" in conf
    assert len(truth.host_leaves) == 96


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000), rails=st.sampled_from([1, 2]), groups=st.integers(1, 3))
def test_generated_fabrics_labels_follow_the_tree(
    tmp_path_factory: pytest.TempPathFactory, seed: int, rails: int, groups: int
) -> None:
    shape = Shape(
        leaves=groups * rails,
        hosts_per_leaf=8,
        hcas_per_host=rails,
        uplinks=2,
        radix=max(16, groups * rails * 2),
        host_names=[f"h{seed}-{i}" for i in range(groups * 8)],
        shuffle_ports=True,
    )
    text, _ = site_fabric(shape, seed)
    dump = tmp_path_factory.mktemp("g") / "d.txt"
    dump.write_text(text, encoding="utf-8")
    check_view_files(_view(dump))


# --------------------------------------------------------------------------- NVLink domains


def _domains_file(tmp: Path, text: str) -> Path:
    p = tmp / "domains.txt"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.skipif(not NDR.is_file(), reason="../shared/realdata not found")
def test_nvlink_domains_make_blocks_and_the_accelerator_label(tmp_path: Path) -> None:
    """Two domains on the real NDR dump (one names a host the dump lacks)."""
    domains = load_nvlink_domains(
        _domains_file(
            tmp_path,
            "# two racks\nnvl-a a07-p1-dgx-03-c[01-18]  # whole\nnvl-b a08-p1-dgx-04-c[01-18]\n",
        )
    )
    view = _view(NDR, domains)
    files = check_view_files(view)
    data = yaml.safe_load(files["slurm/topology.yaml"])
    block = data[1]["block"]
    assert data[1]["topology"] == slurm.BLOCK_NAME and not data[1]["cluster_default"]
    got = {b["block"]: expand(b["nodes"]) for b in block["blocks"]}
    assert got["nvl-a"] == [f"a07-p1-dgx-03-c{i:02d}" for i in range(1, 19)]
    assert len(got["nvl-b"]) == 17  # c18 is not in the dump (test_slurmctld_discovered: 17)
    assert block["block_sizes"] == [17]
    assert any("not in the dump" in n and "a08-p1-dgx-04-c18" in n for n in view.notes)
    conf = _conf_lines(files["slurm/topology-block.conf"])
    assert {ln["blockname"]: expand(ln["nodes"]) for ln in conf if "blockname" in ln} == got
    assert [ln["blocksizes"] for ln in conf if "blocksizes" in ln] == ["17"]
    nodes = json.loads(files["k8s-topology/nodes.json"])["items"]
    acc = {i["metadata"]["name"]: i["metadata"]["labels"].get(ACCELERATOR) for i in nodes}
    assert acc["a07-p1-dgx-03-c05"] == "nvl-a" and acc["a05-p1-dgx-01-c01"] is None
    assert kueue_levels(view)[-2:] == [ACCELERATOR, HOSTNAME]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nvl-a\n", "expected `<domain> <hostlist>`"),
        ("nvl_a! n[1-2]\n", "not a Kubernetes label value"),
        ("nvl-a n[1-2]\nnvl-a n[3-4]\n", "named twice"),
        ("nvl-a n[1-2]\nnvl-b n[2-3]\n", "host n2 is in domains nvl-a and nvl-b"),
        ("nvl-a n[5-1]\n", "runs backwards"),
        ("# nothing\n\n", "no NVLink domain"),
    ],
)
def test_bad_domain_files_name_the_line(tmp_path: Path, text: str, why: str) -> None:
    with pytest.raises(InputFileError, match=why.replace("[", r"\[")):
        load_nvlink_domains(_domains_file(tmp_path, text))


# --------------------------------------------------------------------------- Topograph values


def test_topograph_value_is_fnv1a_hashed_over_63_characters() -> None:
    # FNV-1a 64 test vectors (Noll, "FNV test suite": "a", "foobar")
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8
    assert topograph_value("s" * 63) == "s" * 63
    long = topograph_value("s" * 64)
    assert long == f"x{fnv1a64(b's' * 64):x}" and len(long) <= 17


# --------------------------------------------------------------------------- validators


def _kubeconform() -> str | None:
    found = shutil.which("kubeconform")
    gopath = Path(os.environ.get("GOPATH", Path.home() / "go")) / "bin" / "kubeconform"
    return found or (str(gopath) if gopath.is_file() else None)


def _all_scripts_and_topologies(tmp: Path) -> tuple[list[Path], list[Path]]:
    """labels.sh and kueue-topology.yaml of the NDR dump and every generated family."""
    dumps = [_generated(n, tmp)[0] for n in SHAPES]
    if NDR.is_file():
        dumps.append(NDR)
    scripts: list[Path] = []
    topologies: list[Path] = []
    for i, dump in enumerate(dumps):
        files = _files(_view(dump))
        for key, out in (("labels.sh", scripts), ("kueue-topology.yaml", topologies)):
            p = tmp / f"{i}-{key}"
            p.write_text(files[f"k8s-topology/{key}"], encoding="utf-8")
            out.append(p)
    return scripts, topologies


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="no shellcheck")
def test_labels_sh_passes_shellcheck_and_labels_what_nodes_json_says(tmp_path: Path) -> None:
    scripts, _ = _all_scripts_and_topologies(tmp_path)
    sc = subprocess.run(
        ["shellcheck", "-s", "sh", *map(str, scripts)], capture_output=True, text=True, timeout=120
    )
    assert sc.returncode == 0, sc.stdout
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/sh\necho $1\n")
    assert subprocess.run(["shellcheck", "-s", "sh", str(bad)], capture_output=True).returncode
    dump, _ = _generated("rails-2-mlx5", tmp_path)
    files = _files(_view(dump))
    script = tmp_path / "labels.sh"
    script.write_text(files["k8s-topology/labels.sh"])
    fake, log = tmp_path / "kubectl", tmp_path / "calls"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\n')
    fake.chmod(0o755)
    subprocess.run(["sh", str(script)], env={**os.environ, "KUBECTL": str(fake)}, check=True)
    got = {
        w[3]: dict(x.split("=", 1) for x in w[4:])
        for w in (c.split() for c in log.read_text().splitlines())
    }
    want = {
        i["metadata"]["name"]: i["metadata"]["labels"]
        for i in json.loads(files["k8s-topology/nodes.json"])["items"]
    }
    assert got == want and len(got) == 16


def test_kueue_topology_against_kueues_crd(tmp_path: Path) -> None:
    """Kueue's own CRD (shared/schemas): jsonschema here, kubeconform -strict if installed."""
    if not SHARED_CRD.is_file():
        pytest.skip(f"no Kueue CRD at {SHARED_CRD}")
    crd = yaml.safe_load(SHARED_CRD.read_text())
    _, topologies = _all_scripts_and_topologies(tmp_path)
    for path in topologies:
        obj = next(d for d in yaml.safe_load_all(path.read_text()) if d)
        version = obj["apiVersion"].split("/")[1]
        (schema,) = [
            v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"] if v["name"] == version
        ]
        jsonschema.validate(obj, schema)
    tool = _kubeconform()
    if tool is None:
        pytest.skip("kubeconform not installed (scripts/kubeconform.sh installs it)")
    from validate.kube import crd_schemas

    schemas = crd_schemas(SHARED_CRD.parent, tmp_path / "schemas")
    loc = str(schemas) + "/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"
    bad = tmp_path / "bad.yaml"
    bad.write_text(topologies[0].read_text().replace("nodeLabel: kubernetes.io", "nodeLabelz: k"))
    args = [tool, "-strict", "-summary", "-schema-location", loc]
    ok = subprocess.run([*args, *map(str, topologies)], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and f"Valid: {len(topologies)}, Invalid: 0" in ok.stdout, ok.stdout
    no = subprocess.run([*args, str(bad)], capture_output=True, text=True, timeout=60)
    assert no.returncode == 1 and "Invalid: 1" in no.stdout, no.stdout


# --------------------------------------------------------------------------- CLI


def _cli(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["render", *args])
    return r.exit_code, r.stdout, r.stderr


def test_cli_writes_both_targets_and_says_why_no_blocks(tmp_path: Path) -> None:
    dump, _ = _generated("edr-2023", tmp_path)
    out = tmp_path / "out"
    code, stdout, stderr = _cli(["slurm", "--ibnetdiscover", str(dump), "--out-dir", str(out)])
    assert code == 0, stdout + stderr
    assert sorted(p.name for p in (out / "slurm").iterdir()) == ["topology.conf", "topology.yaml"]
    assert stderr.strip() == f"render slurm: {slurm.NO_BLOCKS}"
    assert "No blocks: no block topology written" in (out / "slurm" / "topology.yaml").read_text()
    domains = _domains_file(tmp_path, "nvl-1 node[001-048]\nnvl-2 node[049-064],gpu[001-032]\n")
    named = ["--ibnetdiscover", str(dump), "--nvlink-domains", str(domains), "--out-dir", str(out)]
    code, stdout, stderr = _cli(["slurm", *named])
    assert code == 0 and not stderr.strip(), stderr
    block = (out / "slurm" / "topology-block.conf").read_text()
    assert "BlockName=nvl-1 Nodes=node[001-048]\n" in block and "BlockSizes=48\n" in block
    code, stdout, stderr = _cli(["k8s-topology", *named, "--format", "json"])
    assert code == 0, stderr
    assert [Path(r["path"]).name for r in json.loads(stdout)] == [
        "labels.sh",
        "nodes.json",
        "kueue-topology.yaml",
    ]


def test_bad_input_to_the_new_flags_is_one_line_exit_2_nothing_written(tmp_path: Path) -> None:
    dump, _ = _generated("edr-2023", tmp_path)
    good_map = tmp_path / "ok.map"
    good_map.write_text("0x248a070301000001 leaf-a\n")
    bad_map = tmp_path / "bad.map"
    bad_map.write_text("leaf-a 0x248a070301000001 extra\n")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\x00\x01\xff" * 99)
    domains = _domains_file(tmp_path, "nvl-1 node[001-048]\nnvl-2 node[040-050]\n")
    missing = str(tmp_path / "nope.txt")
    cases = {
        "missing dump": ["--ibnetdiscover", missing],
        "not a dump": ["--ibnetdiscover", str(binary)],
        "map malformed": ["--ibnetdiscover", str(dump), "--node-name-map", str(bad_map)],
        "map missing": ["--ibnetdiscover", str(dump), "--node-name-map", missing],
        "domains missing": ["--ibnetdiscover", str(dump), "--nvlink-domains", missing],
        "domains overlap": ["--ibnetdiscover", str(dump), "--nvlink-domains", str(domains)],
        "domains alone": ["--nvlink-domains", str(domains)],
        "map alone": ["--node-name-map", str(good_map)],
    }
    for target in ("slurm", "k8s-topology"):
        for what, args in cases.items():
            out = tmp_path / f"out-{target}-{what.replace(' ', '-')}"
            code, stdout, stderr = _cli([target, *args, "--out-dir", str(out)])
            lines = [s for s in (stdout + stderr).splitlines() if s.strip()]
            assert code == 2, (target, what, stdout, stderr)
            assert len(lines) == 1 and lines[0].startswith("error: "), (what, lines)
            assert not out.exists() or not any(out.rglob("*")), (what, list(out.rglob("*")))
    code, _, stderr = _cli(["hosts", "--ibnetdiscover", str(dump), "--out-dir", str(tmp_path)])
    assert code == 2 and "render slurm or k8s-topology --ibnetdiscover" in stderr


def test_three_levels_label_spine_and_core_groups() -> None:
    """Two pods (spines s1,s2 over leaves l1,l2; s3,s4 over l3,l4), cores c1,c2 over all
    spines: the spine value is the pod's first spine, the core value the first core
    (Topograph's merger: switches with the same children are one vertex)."""
    from fabric_stack.drift.discovered import DiscoveredTree, TreeNode

    tree = DiscoveredTree("three.txt")
    for i in range(1, 5):
        tree.switches.append(TreeNode(f"l{i}", 0, nodes=(f"n{i}a", f"n{i}b"), members=(f"l{i}",)))
    for s, kids in (("s1", "l1 l2"), ("s2", "l1 l2"), ("s3", "l3 l4"), ("s4", "l3 l4")):
        tree.switches.append(TreeNode(s, 1, switches=tuple(kids.split()), members=(s,)))
    for c in ("c1", "c2"):
        tree.switches.append(TreeNode(c, 2, switches=("s1", "s2", "s3", "s4"), members=(c,)))
    view = discovered_view(tree)
    assert view.tiers == 3
    assert kueue_levels(view) == [CORE, SPINE, LEAF, HOSTNAME]
    paths = {p.name: p.tree for p in view.servers}
    assert paths["n1a"] == ("l1", "s1", "c1") and paths["n2b"] == ("l2", "s1", "c1")
    assert paths["n3a"] == ("l3", "s3", "c1") and paths["n4b"] == ("l4", "s3", "c1")
    files = check_view_files(view)
    assert "SwitchName=c1 Switches=s[1-4]\n" in files["slurm/topology.conf"]
