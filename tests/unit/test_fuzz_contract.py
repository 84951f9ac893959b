"""Fuzz every command (except plan/apply/recover, which drive the Pulumi engine) in-process.

Hypothesis generates flags, spec YAML (structure and raw bytes), JSON, discovery
files and ``--out`` targets; every run must keep the bad-input contract of
:mod:`tests.contract` (exit 0/1/2, one line on exit 2, no traceback, nothing
left behind on error, bounded time and memory).

``FUZZ_EXAMPLES`` sets the examples per test (``make fuzz`` runs a longer
campaign); CI loads the derandomized ``ci`` profile (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fabric_stack.hardware.switches import CATALOG
from tests.contract import run_checked as _run_checked

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def run_checked(args: list[str], root: Path) -> None:
    """Run with the contract checked; the exit status is a Hypothesis event (statistics)."""
    run = _run_checked(args, root)
    event(f"{args[0]}: exit {run.code}")


@contextmanager
def workdir() -> Iterator[Path]:
    """A fresh empty working directory per example (Hypothesis reruns the body)."""
    old = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as d:
        os.chdir(d)
        try:
            yield Path(d)
        finally:
            os.chdir(old)


# -- strategies ----------------------------------------------------------------------

INTS = st.sampled_from(
    ["0", "-1", "1", "2", "4", "7", "8", "16", "64", "65", "128", "1024", "4096", "300000",
     "1" + "0" * 50, "x", "", " 8", "8.0", "0x10"]
)  # fmt: skip
TEXT = st.text(max_size=12) | st.sampled_from(["", "1:1", "2:1", "64:1", "0:1", "3:4", "\x00"])
SWITCHES = st.sampled_from(
    [*CATALOG, "generic-64x400", "generic-1024x400", "generic-3x1", "generic-99999999x1",
     "QM9700", "", "nope"]
)  # fmt: skip
"""Every catalog model (from the registry), then generic, bad and odd spellings."""
SPEC_FLAGS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["--gpus", "--gpus-per-node", "--rails", "--su-nodes"]), INTS),
        st.tuples(st.sampled_from(["--nic-gbps", "--planes"]), INTS),
        st.tuples(st.just("--fabric"), st.sampled_from(["infiniband", "roce", "ethernet", "x"])),
        st.tuples(st.just("--switch"), SWITCHES),
        st.tuples(st.just("--oversubscription"), TEXT),
        st.tuples(st.just("--stack"), st.sampled_from(["", "dev", "a b", "../x"])),
    ),
    max_size=4,
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.sampled_from([0, 8, 64, 128, 512, 10**60]),
    st.text(max_size=10),
    st.sampled_from(["1500", "big", "10.0.0.0/8", "10.200.0.0/30", "2:1", "roce"]),
)
SPEC_KEYS = st.sampled_from(
    ["name", "gpus", "gpus_per_node", "rails", "fabric", "switch", "oversubscription",
     "su_nodes", "planes", "nic_gbps", "networks", "roce", "infiniband", "node_profile",
     "storage", "inband", "subnet", "switch", "mtu", "overrides", "spine", "leaf",
     "pfc_priorities", "vlan", "attach", "compute", "rail_vlans", "bogus"]
)  # fmt: skip
TREES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(SPEC_KEYS, inner, max_size=4),
    max_leaves=12,
)
SPEC_DOCS = st.dictionaries(SPEC_KEYS, TREES, max_size=5)

YAML_BYTES = st.one_of(
    st.binary(max_size=200),
    st.lists(
        st.sampled_from(
            [b"gpus: 128\n", b"a: &a [1, 2]\n", b"b: [*a, *a]\n", b"gpus: 1\n", b"\xff\xfe",
             b"name: caf\xe9\n", b"[[[[[[", b"{a: ", b"- x\n", b"\x00", b"rails: '0'\n",
             b"!!python/object:os.system\n", b"roce: {overrides: {spine: {mtu: big}}}\n",
             b"1" * 60 + b"\n", b"\t", b"key: |\n  text\n"]
        ),
        max_size=8,
    ).map(b"".join),
)  # fmt: skip

OUT_TARGETS = st.sampled_from(
    ["out.csv", "sub/dir/out.json", "afile/x", "adir", "/proc/x.json", "x" * 300,
     "adir/", "./out.txt", "link-to-nowhere/x", "pipe", "link-to-file", "a\x00b"]
)  # fmt: skip


def _setup_fixtures(root: Path) -> None:
    """Hostile surroundings every example can aim at."""
    (root / "afile").write_text("x\n")
    (root / "adir").mkdir()
    (root / "link-to-nowhere").symlink_to("missing-dir")
    (root / "link-to-file").symlink_to("afile")
    os.mkfifo(root / "pipe")


# -- the fuzz tests ------------------------------------------------------------------

PLANNING = ["size", "guide", "cabling", "bom", "diagram", "verify", "check"]


@FUZZ
@given(cmd=st.sampled_from(PLANNING), flags=SPEC_FLAGS)
def test_planning_commands_with_random_flags(cmd: str, flags: list[tuple[str, str]]) -> None:
    with workdir() as root:
        run_checked([cmd, *[x for pair in flags for x in pair]], root)


@FUZZ
@given(cmd=st.sampled_from(["size", "check", "bom"]), doc=SPEC_DOCS, as_json=st.booleans())
def test_spec_structures(cmd: str, doc: dict[str, Any], as_json: bool) -> None:
    with workdir() as root:
        text = json.dumps(doc) if as_json else yaml.safe_dump(doc)
        (root / "c.yaml").write_text(text)
        run_checked([cmd, "--config", "c.yaml"], root)


@FUZZ
@given(data=YAML_BYTES, where=st.sampled_from(["--config", "--policy-config", "--ignore"]))
def test_yaml_bytes(data: bytes, where: str) -> None:
    with workdir() as root:
        (root / "f.yaml").write_bytes(data)
        (root / "ib.txt").write_text("")
        args = {
            "--config": ["size", "--config", "f.yaml"],
            "--policy-config": ["check", "--policy-config", "f.yaml"],
            "--ignore": ["drift", "--ibnetdiscover", "ib.txt", "--ignore", "f.yaml"],
        }[where]
        run_checked(args, root)


JSON_DOCS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["lldp", "interface", "chassis", "port", "name", "id", "value",
                         "results", "a_terminations", "lldpNeighbors", "neighborInterfaceInfo",
                         "interfaceStatuses", "x"]) | st.text(max_size=5),
        inner,
        max_size=4,
    ),
    max_leaves=15,
)  # fmt: skip


@FUZZ
@given(
    source=st.sampled_from(["--lldp", "--eos", "--netbox-json"]),
    doc=JSON_DOCS,
    raw=st.none() | st.binary(max_size=100),
)
def test_discovery_json(source: str, doc: Any, raw: bytes | None) -> None:
    with workdir() as root:
        data = raw if raw is not None else json.dumps(doc).encode()
        if source == "--netbox-json":
            (root / "nb.json").write_bytes(data)
            target = "nb.json"
        else:
            (root / "d").mkdir()
            (root / "d" / "sw1.json").write_bytes(data)
            target = "d"
        run_checked(["drift", source, target], root)


TEXT_LINES = st.lists(
    st.sampled_from(
        ['vendid=0x2c9', 'switchguid=0x0002c90300a1b2c3', 'Switch 64 "S-0002c90300a1b2c3"',
         '[1] "H-0002c90300000001"[1](0002c90300000001) "su1-node01 mlx5_0" lid 2 4xNDR',
         'Ca 1 "H-0002c90300000001"', "device,port,mac", "a,b,c", '"unterminated', "\xe9",
         "0x0002c90300a1b2c3 \"su1-r1-leaf\"", "name,guid", "1" * 50]
    ),
    max_size=10,
).map("\n".join)  # fmt: skip


@FUZZ
@given(
    source=st.sampled_from(["--ibnetdiscover", "--netbox-csv", "--node-name-map", "--guids"]),
    text=TEXT_LINES,
)
def test_discovery_text(source: str, text: str) -> None:
    with workdir() as root:
        (root / "f.txt").write_text(text)
        (root / "ib.txt").write_text("")
        args = {
            "--ibnetdiscover": ["drift", "--ibnetdiscover", "f.txt"],
            "--netbox-csv": ["drift", "--netbox-csv", "f.txt"],
            "--node-name-map": ["drift", "--ibnetdiscover", "ib.txt", "--node-name-map", "f.txt"],
            "--guids": ["render", "infiniband", "--out", "o", "--guids", "f.txt"],
        }[source]
        run_checked(args, root)


@FUZZ
@given(
    cmd=st.sampled_from(
        [["cabling"], ["cabling", "--format", "json"], ["bom", "--format", "json"], ["diagram"],
         ["render", "all"], ["render", "nccl"], ["render", "infiniband"]]
    ),
    target=OUT_TARGETS,
)  # fmt: skip
def test_out_targets(cmd: list[str], target: str) -> None:
    with workdir() as root:
        _setup_fixtures(root)
        run_checked([*cmd, "--out", target], root)


@FUZZ
@given(
    url=st.sampled_from(
        ["", "sqlite:///typo/x.db", "sqlite:///afile", "sqlite:///adir", "sqlite://x",
         "sqlite:///notdb.db", "sqlite:///empty.db", "mysql://x", "x.db"]
    ),
    cmd=st.sampled_from(["inventory", "drift"]),
)  # fmt: skip
def test_inventory_urls(url: str, cmd: str) -> None:
    with workdir() as root:
        _setup_fixtures(root)
        (root / "notdb.db").write_text("not a database")
        (root / "empty.db").write_bytes(b"")
        run_checked([cmd, "--inventory", url], root)


BASE_SPEC: dict[str, Any] = {
    "name": "lab",
    "gpus": 256,
    "fabric": "roce",
    "switch": "sn5600",
    "roce": {"overrides": {"spine": {"mtu": 9216}}, "pfc_priorities": [3]},
    "networks": {
        "storage": {"subnet": "10.200.0.0/16", "switch": "sn5600", "vlan": 200},
        "compute": {"subnet": "10.64.0.0/12"},
    },
    "infiniband": {"subnet_managers": 2},
}
PATHS = [
    ("name",), ("gpus",), ("gpus_per_node",), ("rails",), ("su_nodes",), ("planes",),
    ("oversubscription",), ("switch",), ("fabric",), ("nic_gbps",),
    ("roce", "overrides", "spine", "mtu"), ("roce", "overrides", "leaf", "pfc_priorities"),
    ("roce", "overrides", "core", "ecn"), ("roce", "pfc_priorities"), ("roce", "cnp_priority"),
    ("roce", "mtu"), ("networks", "storage", "subnet"), ("networks", "storage", "switch"),
    ("networks", "storage", "vlan"), ("networks", "storage", "attach"),
    ("networks", "inband", "subnet"), ("networks", "compute", "subnet"),
    ("networks", "compute", "rail_vlans"), ("infiniband", "subnet_managers"),
    ("node_profile",),
]  # fmt: skip
VALUES = st.one_of(
    SCALARS,
    st.lists(st.integers(min_value=-2, max_value=5000), max_size=9),
    st.sampled_from(
        ["10.200.0.0/30", "10.64.0.0/16", "10.30.0.0/24", "dgx-b200", "hgx-b300", "ethernet",
         "infiniband", "qm9700", "1:1", "3:1", 1500, 9000, 7, 4, 32, 2, "2", "0", [101, 102]]
    ),
)  # fmt: skip


PLAUSIBLE: dict[tuple[str, ...], list[Any]] = {
    ("gpus",): [8, 64, 128, 512, 2048, 4096, "1024"],
    ("gpus_per_node",): [4, 8, "8"],
    ("rails",): [0, 1, 2, 4, 8, "0", "4"],
    ("su_nodes",): [0, 1, 4, 16, 32, 64, "2"],
    ("planes",): [1, 2],
    ("oversubscription",): ["1:1", "2:1", "3:1", "5:3", "63:1"],
    ("switch",): ["sn5600", "generic-64x400", "generic-128x400", "generic-8x400"],
    ("fabric",): ["roce", "ethernet"],
    ("nic_gbps",): [100, 200, 400, 800],
    ("roce", "overrides", "spine", "mtu"): [1500, 4096, 9216, "9000"],
    ("roce", "overrides", "leaf", "pfc_priorities"): [[3], [3, 4], [], [0, 7]],
    ("roce", "overrides", "core", "ecn"): [True, False, "false"],
    ("roce", "pfc_priorities"): [[3], [2, 3], [5]],
    ("roce", "cnp_priority"): [6, 7, 3],
    ("roce", "mtu"): [1500, 9216],
    ("networks", "storage", "subnet"): ["10.200.0.0/20", "10.200.0.0/26", "10.96.0.0/16"],
    ("networks", "storage", "switch"): ["sn2201", "generic-48x100", "qm9700"],
    ("networks", "storage", "vlan"): [1, 4094, 300],
    ("networks", "storage", "attach"): ["inband", "compute", "oob", "dedicated"],
    ("networks", "inband", "subnet"): ["10.31.0.0/24", "10.200.4.0/24"],
    ("networks", "compute", "subnet"): ["10.64.0.0/24", "10.64.0.0/10"],
    ("networks", "compute", "rail_vlans"): [[101, 102, 103, 104, 105, 106, 107, 108], [5]],
    ("infiniband", "subnet_managers"): [0, 1, 16],
    ("node_profile",): ["dgx-b200", "hgx-b300", "dgx-h100"],
}


def _edit(path: tuple[str, ...]) -> st.SearchStrategy[tuple[tuple[str, ...], Any]]:
    values = st.sampled_from(PLAUSIBLE[path]) if path in PLAUSIBLE else VALUES
    return st.tuples(st.just(path), values | VALUES)


@FUZZ
@given(
    cmd=st.sampled_from(["size", "check", "cabling", "render"]),
    edits=st.lists(st.sampled_from(PATHS).flatmap(_edit), min_size=1, max_size=3),
)
def test_mutated_valid_specs(cmd: str, edits: list[tuple[tuple[str, ...], Any]]) -> None:
    doc = json.loads(json.dumps(BASE_SPEC))
    for path, value in edits:
        node = doc
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    with workdir() as root:
        (root / "c.yaml").write_text(yaml.safe_dump(doc))
        args = [cmd, "--config", "c.yaml"]
        if cmd == "render":
            args = ["render", "all", "--out", "out", "--config", "c.yaml"]
        run_checked(args, root)
