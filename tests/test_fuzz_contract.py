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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.contract import run_checked

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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
    ["qm9700", "q3400", "sn5600", "sn2201", "generic-64x400", "generic-1024x400",
     "generic-3x1", "generic-99999999x1", "QM9700", "", "nope"]
)  # fmt: skip
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
