"""Fabric managers (UFM / OpenSM hosts) are cabled parts of the plan (issue 17, items 1-3).

The RA figures these tests hold the model to come from NVIDIA's DGX SuperPOD reference
architecture for DGX H100 (fabric_stack.sizing.managers.SUPERPOD_H100_RA): 127 nodes for 4 SU;
the 31-node / 252-cable (1 SU) and 1,020-cable (4 SU) figures with four UFM cables are
UNVERIFIED there (we could only read excerpts), so they are checked as what the rule
gives with four manager cables, not as a quote.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.cli import main
from fabric_stack.errors import SpecError
from fabric_stack.policy import check_ib_subnet_managers, check_port_budget
from fabric_stack.topology.build import MANAGER_ROLE
from fabric_stack.views.exports import topo_file, ufm_p2p
from tests.golden_artifacts import context


def _plan(**spec: object):  # type: ignore[no-untyped-def]
    return size_fabric(validate_spec(dict(spec)))


def _topo(**spec: object):  # type: ignore[no-untyped-def]
    return build_topology(_plan(**spec))


def test_seed_at_1024_gpus_cables_its_ufm_hosts_and_passes_port_budget() -> None:
    topo = _topo(gpus=1024)
    plan = topo.plan
    managers = [d.name for d in topo.devices if d.role == "manager"]
    cables = [k for k in topo.links if k.role == MANAGER_ROLE]
    assert managers == ["ufm-1", "ufm-2"]
    # Every leaf was full (32 servers per SU): one server position of SU 1 went to them.
    assert (plan.nodes, plan.gpus, plan.servers_removed) == (127, 1016, 1)
    assert plan.su_sizes == (31, 32, 32, 32)
    assert {(k.a_device, k.b_device, k.b_port_number) for k in cables} == {
        ("ufm-1", "su1-r1-leaf", 32),
        ("ufm-2", "su1-r2-leaf", 32),
    }
    intent = derive_intent(topo)
    assert list(check_port_budget(intent)) == []
    leaf = next(s for s in intent.switches if s.name == "su1-r1-leaf")
    assert (leaf.ports_down, leaf.ports_down_budget) == (32, 32)  # 31 servers + the UFM
    assert plan.cables.manager_leaf == 2 == intent.summary.cables["manager_leaf"]
    assert list(check_ib_subnet_managers(intent)) == []


def test_without_the_rule_the_1024_gpu_leaves_would_overflow() -> None:
    # Same plan, the UFM cables added on top of 32 servers: port-budget must catch it.
    intent = derive_intent(_topo(gpus=1024))
    over = [
        s.model_copy(update={"ports_down": s.ports_down + 1})
        for s in intent.switches
        if s.name == "su1-r1-leaf"
    ]
    bad = intent.model_copy(update={"switches": tuple(over)})
    assert {v.resource for v in check_port_budget(bad)} == {"su1-r1-leaf"}


@pytest.mark.parametrize(("gpus", "nodes", "cables"), [(256, 31, 252), (1024, 127, 1020)])
def test_four_manager_cables_give_the_ra_compute_fabric_counts(
    gpus: int, nodes: int, cables: int
) -> None:
    plan = _plan(gpus=gpus, infiniband={"sm_links": 2})
    assert plan.nodes == nodes
    assert plan.cables.node_leaf + plan.cables.manager_leaf == cables


def test_seed_default_keeps_the_seed_card_figures() -> None:
    plan = _plan()
    # 16 servers in a 32-port SU: the UFMs take free downlinks, nothing else moves.
    assert (plan.nodes, plan.servers_removed, plan.switches.leaf, plan.switches.spine) == (
        16,
        0,
        8,
        4,
    )
    assert plan.bandwidth.bisection_tbps == 51.2
    assert plan.bandwidth.per_node_gbps == 3200
    assert plan.cables.manager_leaf == 2


def test_partial_last_su_takes_the_displaced_server() -> None:
    plan = _plan(gpus=320)  # 40 servers: SU 1 gives a position, SU 2 has room
    assert (plan.su_sizes, plan.servers_removed) == ((31, 9), 0)
    last = _plan(gpus=1024, infiniband={"sm_attach": "last-su"})
    assert (last.su_sizes, last.servers_removed, last.manager_su) == ((32, 32, 32, 31), 1, 4)


def test_switch_hosted_sms_take_no_port() -> None:
    plan = _plan(gpus=1024, infiniband={"sm_location": "switch"})
    assert (plan.nodes, plan.cables.manager_leaf) == (128, 0)


def test_master_and_standby_on_one_leaf_is_a_violation() -> None:
    # One rail: both managers can only land on the same leaf.
    intent = derive_intent(_topo(gpus=16, gpus_per_node=1))
    vs = list(check_ib_subnet_managers(intent))
    assert len(vs) == 1 and vs[0].level == "mandatory"
    assert "master ufm-1 and standby ufm-2 are both cabled to su1-r1-leaf" in vs[0].message


def test_each_plane_needs_its_own_pair() -> None:
    intent = derive_intent(_topo(planes=2))
    assert list(check_ib_subnet_managers(intent)) == []
    no_p2 = tuple(c for c in intent.cables if not (c.role == MANAGER_ROLE and c.plane == 2))
    vs = list(check_ib_subnet_managers(intent.model_copy(update={"cables": no_p2})))
    assert [v.measured for v in vs] == ["0 subnet managers cabled (plane 2, on UFM)"]


def test_two_planes_render_two_sm_pairs_with_distinct_guids() -> None:
    topo = _topo(planes=2)
    names = {f"{k.a_device} {k.a_port}" for k in topo.links if k.role == MANAGER_ROLE}
    guids = {n: f"0x0002c90300{i:06x}" for i, n in enumerate(sorted(names), start=1)}
    ctx = context({"planes": 2})
    ctx = type(ctx).from_topology(ctx.topo, guids=guids)
    from fabric_stack.artifacts import render_artifacts

    confs = {
        a.path: a.content
        for a in render_artifacts("infiniband", ctx)
        if a.path.endswith(".conf") and "opensm-" in a.path
    }
    assert sorted(confs) == [
        "infiniband/opensm-ufm-1-p1.conf",
        "infiniband/opensm-ufm-1-p2.conf",
        "infiniband/opensm-ufm-2-p1.conf",
        "infiniband/opensm-ufm-2-p2.conf",
    ]
    bound = {p: re.search(r"^guid (\S+)$", c, re.M) for p, c in confs.items()}
    assert all(bound.values())
    values = {p: m.group(1) for p, m in bound.items() if m}
    assert len(set(values.values())) == 4
    assert values["infiniband/opensm-ufm-2-p2.conf"] == guids["ufm-2 mlx5_1"]
    prio = {p: re.search(r"^sm_priority (\d+)$", c, re.M).group(1) for p, c in confs.items()}  # type: ignore[union-attr]
    assert prio["infiniband/opensm-ufm-1-p1.conf"] == prio["infiniband/opensm-ufm-1-p2.conf"]
    assert prio["infiniband/opensm-ufm-1-p2.conf"] == "15"
    assert prio["infiniband/opensm-ufm-2-p2.conf"] == "14"


def test_upstream_opensm_with_ar_updn_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "infiniband:\n  sm_location: host\n  opensm: upstream\n  routing_engine: ar_updn\n"
    )
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main, ["render", "infiniband", "--config", str(cfg), "--out", str(out)]
    )
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "infiniband.routing_engine" in lines[0], res.stderr
    assert "Traceback" not in res.output and not out.exists()


@pytest.mark.parametrize(
    ("ib", "field"),
    [
        ({"sm_location": "host", "opensm": "upstream", "sharp": True}, "infiniband.sharp"),
        ({"sm_location": "ufm", "opensm": "upstream"}, "infiniband.opensm"),
    ],
)
def test_other_nvidia_only_choices_name_their_field(ib: dict[str, object], field: str) -> None:
    with pytest.raises(SpecError) as exc:
        validate_spec({"infiniband": ib})
    assert str(exc.value).startswith(field)


def test_ufm_files_live_in_ufm_conf_dir_and_partitions_go_to_user_ext() -> None:
    from fabric_stack.artifacts import render_artifacts

    files = {a.path: a.content for a in render_artifacts("infiniband", context({}))}
    assert "infiniband/partitions.conf.user_ext" in files
    assert "infiniband/partitions.conf" not in files
    conf = files["infiniband/opensm-ufm-1.conf"]
    assert "partition_config_file /opt/ufm/files/conf/opensm/partitions.conf" in conf
    assert "node_name_map_name /opt/ufm/files/conf/opensm/ib-node-name-map" in conf
    assert "# root_guid_file /opt/ufm/files/conf/opensm/root-guids.conf" in conf
    assert re.search(r"^virt_enabled 2$", conf, re.M)  # pods get IB VFs
    host = {
        a.path: a.content
        for a in render_artifacts(
            "infiniband", context({"infiniband": {"sm_location": "host", "opensm": "upstream"}})
        )
    }
    assert "infiniband/partitions.conf" in host
    up = host["infiniband/opensm-sm-host-1.conf"]
    assert "partition_config_file /etc/opensm/partitions.conf" in up
    assert not re.search(r"^(virt_enabled|sharp_enabled)", up, re.M)


def test_ibnl_for_every_hca_system_type_of_the_topo_and_cvt_mapping() -> None:
    from fabric_stack.artifacts import render_artifacts

    files = {a.path: a.content for a in render_artifacts("infiniband", context({}))}
    topo_text = files["infiniband/gpu-cluster.topo"]
    types = set(re.findall(r"^(HCA_\S+) ", topo_text, re.M))
    assert types == {"HCA_mlx5_7", "HCA_mlx5_0"}
    assert {p for p in files if p.endswith(".ibnl")} == {f"infiniband/ibnl/{t}.ibnl" for t in types}
    ibnl = files["infiniband/ibnl/HCA_mlx5_7.ibnl"]
    assert "TOPSYSTEM HCA_mlx5_7" in ibnl and ibnl.count("NODE CA 1 ") == 8
    # Every HCA port the .topo names is a system port of its type's IBNL.
    for t in types:
        ports = set(re.findall(r"-> (\S+/P1)$", files[f"infiniband/ibnl/{t}.ibnl"], re.M))
        used = {m for m in re.findall(rf"^{t} \S+\n((?:    .*\n)+)", topo_text, re.M)}
        for block in used:
            assert {ln.split()[0] for ln in block.splitlines()} <= ports
    mapping = files["infiniband/hca_mapping.csv"].splitlines()
    assert mapping[0] == "port,hca-name" and mapping[1:] == [f"{i + 1},mlx5_{i}" for i in range(8)]


def test_one_port_naming_convention_stated_in_every_ib_file() -> None:
    from fabric_stack.artifacts import render_artifacts

    topo = _topo()
    files = {a.path: a.content for a in render_artifacts("infiniband", context({}))}
    example = "P33 = 17/1 = 1/17/1"
    for text in (topo_file(topo), files["infiniband/ib-node-name-map"], ufm_p2p(topo)):
        assert "Port naming (one convention" in text and example in text
    # and the files follow it: the P33 uplink of su1-r1-leaf is 17/1 in the P2P sheet
    assert "    P33 -4x-100G-> MQM9700 spine-01 P1" in topo_file(topo)
    assert "su1-r1-leaf,Switch,17/1,spine-01,Switch,1/1" in ufm_p2p(topo)
    assert (
        '"su1-node01 mlx5_0"  # ConnectX-7 HCA, rail 1, su1-r1-leaf P1'
        in files["infiniband/ib-node-name-map"]
    )


def test_dgx_h100_device_names_agree_across_topo_ibnl_mapping_and_p2p() -> None:
    from fabric_stack.artifacts import render_artifacts

    ctx = context({"node_profile": "dgx-h100"})
    files = {a.path: a.content for a in render_artifacts("infiniband", ctx)}
    devices = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    mapping = dict(
        ln.split(",")[::-1] for ln in files["infiniband/hca_mapping.csv"].splitlines()[1:]
    )
    assert list(mapping) == devices and mapping["mlx5_11"] == "12"
    ibnl = files["infiniband/ibnl/HCA_mlx5_11.ibnl"]
    assert re.findall(r"^NODE CA 1 \S+ (\S+)$", ibnl, re.M) == devices
    topo_text = files["infiniband/gpu-cluster.topo"]
    assert "HCA_mlx5_11 su1-node01 mlx5_11/P1" in topo_text
    # the P2P sheet numbers each host port as the mapping does
    p2p = ufm_p2p(ctx.topo)
    node01 = [ln.split(",") for ln in p2p.splitlines() if ln.startswith("su1-node01,Host,")]
    leaf_of = {f"su1-r{r}-leaf": devices[r - 1] for r in range(1, 9)}
    assert {row[2]: mapping[leaf_of[row[3]]] for row in node01} == {
        mapping[d]: mapping[d] for d in devices
    }
