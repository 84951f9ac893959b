"""`render infiniband`: OpenSM settings per SM, partitions, node-name-map and the reused .topo."""

from __future__ import annotations

import re
from typing import Any

import pytest

from fabric_stack.artifacts import TargetMismatchError, infiniband
from fabric_stack.artifacts._base import RenderContext
from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.views.exports import topo_file
from tests.golden_artifacts import context, seed_context

# Every key in upstream OpenSM's option table (opensm/osm_subnet.c, opt_tbl) that
# this renderer may write, plus NVIDIA OpenSM's sharp_enabled. A misspelt key would
# be ignored by opensm with a log line: catch it here instead.
UPSTREAM_OPTIONS = {
    "guid",  # osm_subnet.c opt_tbl, linux-rdma/opensm fa74b98c line 763
    "routing_engine",
    "lmc",
    "sm_priority",
    "partition_config_file",
    "node_name_map_name",
    "root_guid_file",
    "cn_guid_file",
    "sweep_interval",
    "lmc_esp0",
    "qos",
    "log_file",
}
NVIDIA_OPTIONS = {"sharp_enabled", "virt_enabled"}  # virt_enabled: UNVERIFIED key (see opensm.py)
NAME_MAP_LINE = re.compile(r'^0x[0-9a-f]{16} "[^"]+"$')


def _conf(text: str) -> dict[str, str]:
    """opensm.conf 'key value' lines (comments and blanks skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.split(None, 1)
            assert key not in out, f"{key} set twice"
            out[key] = value
    return out


def _files(ctx: RenderContext) -> dict[str, str]:
    return {a.path: a.content for a in infiniband.render(ctx)}


def test_seed_files() -> None:
    files = _files(seed_context("infiniband"))
    assert sorted(files) == [
        "infiniband/gpu-cluster.topo",
        "infiniband/hca_mapping.csv",
        "infiniband/ib-node-name-map",
        "infiniband/ibnl/HCA_mlx5_0.ibnl",
        "infiniband/ibnl/HCA_mlx5_7.ibnl",
        "infiniband/opensm-ufm-1.conf",
        "infiniband/opensm-ufm-2.conf",
        "infiniband/partitions.conf.user_ext",
    ]


def test_one_conf_per_sm_with_distinct_priorities() -> None:
    ctx = seed_context("infiniband")
    files = _files(ctx)
    master = _conf(files["infiniband/opensm-ufm-1.conf"])
    standby = _conf(files["infiniband/opensm-ufm-2.conf"])
    assert master == {
        "routing_engine": "ftree",
        "lmc": "0",
        "sm_priority": "15",
        "partition_config_file": "/opt/ufm/files/conf/opensm/partitions.conf",
        "node_name_map_name": "/opt/ufm/files/conf/opensm/ib-node-name-map",
        "virt_enabled": "2",  # pods get IB VFs; NVIDIA OpenSM key (UFM)
    }
    assert standby == {**master, "sm_priority": "14"}
    assert "(master, 1 of 2)" in files["infiniband/opensm-ufm-1.conf"]
    assert "(standby, 2 of 2)" in files["infiniband/opensm-ufm-2.conf"]
    assert set(master) - {"virt_enabled"} <= UPSTREAM_OPTIONS


@pytest.mark.parametrize("engine", ["ftree", "updn", "ar_updn", "ar_ftree", "minhop"])
@pytest.mark.parametrize("sharp", [False, True])
def test_routing_engine_and_sharp_follow_the_spec(engine: str, sharp: bool) -> None:
    ctx = context({"infiniband": {"routing_engine": engine, "sharp": sharp, "subnet_managers": 3}})
    files = _files(ctx)
    confs = [v for k, v in sorted(files.items()) if k.endswith(".conf") and "opensm-" in k]
    assert len(confs) == 3
    prios = []
    for text in confs:
        conf = _conf(text)
        assert set(conf) <= UPSTREAM_OPTIONS | NVIDIA_OPTIONS
        assert conf["routing_engine"] == engine
        assert ("sharp_enabled" in conf) is sharp
        if sharp:
            assert conf["sharp_enabled"] == "2"
        prios.append(int(conf["sm_priority"]))
        warned = "WARNING: SHARP trees need one of" in text
        assert warned is (sharp and engine == "minhop")
    assert prios == [15, 14, 13]


def test_sm_on_switches_is_named_after_them() -> None:
    ctx = context({"infiniband": {"sm_location": "switch", "subnet_managers": 2}})
    sms = [s.name for s in ctx.intent.switches if s.subnet_manager]
    assert sms == ["spine-01", "spine-02"]
    files = _files(ctx)
    assert {k for k in files if "opensm-" in k} == {f"infiniband/opensm-{s}.conf" for s in sms}


def test_no_sm_planned_means_no_opensm_files() -> None:
    files = _files(context({"infiniband": {"subnet_managers": 0}}))
    assert not [k for k in files if "opensm-" in k]
    assert "infiniband/partitions.conf.user_ext" in files


def test_partitions() -> None:
    host = {"sm_location": "opensm-host"}
    text = _files(context({"infiniband": host}))["infiniband/partitions.conf"]
    rules = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert rules == [
        "Default=0x7fff, ipoib, mtu=5, defmember=full : ALL, ALL_SWITCHES=full, SELF=full ;"
    ]
    pkey = {"networks": {"compute": {"pkey": "0x8011"}}}
    text = _files(context({**pkey, "infiniband": {**host, "mtu": 2048}}))[
        "infiniband/partitions.conf"
    ]
    rules = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert rules == [
        "Default=0x7fff : ALL=limited, ALL_SWITCHES=full, SELF=full ;",
        "compute=0x8011, ipoib, mtu=4, defmember=full : ALL_CAS, SELF=full ;",
    ]
    # UFM: only the compute partition, as the user extension UFM merges (never the
    # Default partition, which UFM writes itself); nothing at all for the default P_Key
    ufm = _files(context({**pkey, "infiniband": {"mtu": 2048}}))
    rules = [
        ln
        for ln in ufm["infiniband/partitions.conf.user_ext"].splitlines()
        if ln and not ln.startswith("#")
    ]
    assert rules == ["compute=0x8011, ipoib, mtu=4, defmember=full : ALL_CAS, SELF=full ;"]
    seed = _files(seed_context("infiniband"))["infiniband/partitions.conf.user_ext"]
    assert [ln for ln in seed.splitlines() if ln and not ln.startswith("#")] == []


def test_bad_ib_mtu_is_a_spec_error() -> None:
    with pytest.raises(SpecError) as exc:
        infiniband.render(context({"infiniband": {"mtu": 4000}}))
    assert (
        str(exc.value)
        == "infiniband.mtu: 4000 is not an InfiniBand MTU (one of 256, 512, 1024, 2048, 4096)"
    )


def test_node_name_map_placeholders_cover_every_switch_and_hca() -> None:
    ctx = seed_context("infiniband")
    text = _files(ctx)["infiniband/ib-node-name-map"]
    live = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert live == []  # nothing is valid until GUIDs are known
    placeholders = re.findall(r'^# 0x_{16} "([^"]+)"', text, re.M)
    switches = [s.name for s in ctx.intent.switches if s.role in ("leaf", "spine", "core")]
    hcas = [f"{n.node} {n.nic}" for n in ctx.intent.nics]
    managers = ["ufm-1 mlx5_0", "ufm-2 mlx5_0"]  # the UFM HCAs are in the fabric too
    assert placeholders == switches + hcas + managers
    assert len(hcas) == 128 and len(switches) == 12
    assert "GUIDs known: 0 of 142." in text


def test_guids_fill_the_map_and_pin_the_ftree_roots() -> None:
    base = seed_context("infiniband")
    names = sorted(infiniband.known_guid_names(base))
    csv_text = "name,guid\n" + "".join(
        f"{n},{0x0002C90300000000 + i:#x}\n" for i, n in enumerate(names)
    )
    guids = infiniband.parse_guid_csv(csv_text, "guids.csv", set(names))
    # 12 switches, 128 server HCAs, 2 UFM HCAs
    assert len(guids) == 142 and all(re.fullmatch(r"0x[0-9a-f]{16}", g) for g in guids.values())
    files = _files(RenderContext(base.topo, base.intent, guids, {}))
    live = [
        ln
        for ln in files["infiniband/ib-node-name-map"].splitlines()
        if ln and not ln.startswith("#")
    ]
    assert len(live) == 142 and all(NAME_MAP_LINE.match(ln) for ln in live)
    assert f'{guids["su1-node03 mlx5_5"]} "su1-node03 mlx5_5"' in live
    roots = [
        ln for ln in files["infiniband/root-guids.conf"].splitlines() if not ln.startswith("#")
    ]
    assert roots == [guids[f"spine-0{i}"] for i in range(1, 5)]
    master = _conf(files["infiniband/opensm-ufm-1.conf"])
    assert master["root_guid_file"] == "/opt/ufm/files/conf/opensm/root-guids.conf"
    assert master["guid"] == guids["ufm-1 mlx5_0"]  # bound to its own HCA port


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "su1-r1-leaf,0xZZ\n",
            "guids.csv:1: '0xZZ' is not a GUID (expected 16 hex digits, e.g. 0x0002c90300a1b2c3)",
        ),
        (
            "name,guid\nleaf-9,0x1\n",
            "guids.csv:2: 'leaf-9' is not in the plan (switch names like 'su1-r1-leaf', "
            "HCAs like 'su1-node01 mlx5_0')",
        ),
        (
            "su1-r1-leaf,0x1\nsu1-r2-leaf,0x01\n",
            "guids.csv:2: GUID 0x0000000000000001 is already given to 'su1-r1-leaf'",
        ),
        ("su1-r1-leaf,0x1\nsu1-r1-leaf,0x2\n", "guids.csv:2: 'su1-r1-leaf' is listed twice"),
        ("su1-r1-leaf\n", "guids.csv:1: expected 2 columns 'name,guid', got 1"),
    ],
)
def test_guid_csv_errors_name_file_and_line(text: str, message: str) -> None:
    known = infiniband.known_guid_names(seed_context("infiniband"))
    with pytest.raises(InputFileError) as exc:
        infiniband.parse_guid_csv(text, "guids.csv", known)
    assert str(exc.value) == message


def test_hca_names_accept_colon_form() -> None:
    known = infiniband.known_guid_names(seed_context("infiniband"))
    got = infiniband.parse_guid_csv("su1-node01:mlx5_0, 2c90300a1b2c3\n", "g.csv", known)
    assert got == {"su1-node01 mlx5_0": "0x0002c90300a1b2c3"}


def test_topo_is_the_exports_writer_output() -> None:
    ctx = seed_context("infiniband")
    assert _files(ctx)["infiniband/gpu-cluster.topo"] == topo_file(ctx.topo)


@pytest.mark.parametrize(
    "spec", [{"fabric": "roce", "switch": "sn5600"}, {"fabric": "ethernet", "switch": "sn5600"}]
)
def test_not_infiniband_is_refused(spec: dict[str, Any]) -> None:
    with pytest.raises(
        TargetMismatchError, match=r"^render infiniband: the plan's fabric is (roce|ethernet); "
    ):
        infiniband.render(context(spec))
