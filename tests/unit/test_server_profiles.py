"""Server profiles: real port names reach every export, cages set the server optics, and a
NIC is never asked for more than it runs.

The DGX H100 facts checked here are the user guide's network-ports table (rail order =
GPU order: mlx5_0, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11 on four
twin-port OSFP cages); the full rendered files are goldens under
``tests/golden/artifacts/dgx-h100/``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from functools import cache
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.discovery import IbnetdiscoverReader
from fabric_stack.artifacts import RenderContext, render_artifacts
from fabric_stack.artifacts._base import netdev_of
from fabric_stack.cli import main
from fabric_stack.drift import PlanIndex, compute_drift
from fabric_stack.errors import SpecError
from fabric_stack.files.config import spec_from_stack_config
from fabric_stack.hardware.server_profiles import PROFILES
from fabric_stack.plant import plant_of
from fabric_stack.policy.evaluate import evaluate
from fabric_stack.policy.rules.link_speed_match import check_link_speed
from fabric_stack.topology.build import FabricTopology
from fabric_stack.twin import ibnet
from fabric_stack.twin.wiring import assign_guids, plan_wiring
from fabric_stack.views.bom import bill_of_materials
from fabric_stack.views.exports import links_csv, links_json, topo_file, ufm_p2p
from tests.drift_fixtures import (
    clean_wires,
    ibnetdiscover_text,
    node_name_map_text,
    snapshot_of,
)

DGX_H100_RAILS = [
    "mlx5_0",
    "mlx5_3",
    "mlx5_4",
    "mlx5_5",
    "mlx5_6",
    "mlx5_9",
    "mlx5_10",
    "mlx5_11",
]
"""DGX H100/H200 User Guide, 1.2.3 Network Modules, Table 6, in GPU order."""

DGX_H100_NETDEVS = [
    "ibp24s0",
    "ibp64s0",
    "ibp79s0",
    "ibp94s0",
    "ibp154s0",
    "ibp192s0",
    "ibp206s0",
    "ibp220s0",
]
"""The same table's netdev column, in GPU order."""


@cache
def topo(**kw: Any) -> FabricTopology:
    return build_topology(size_fabric(validate_spec(**kw)))


def _artifacts(t: FabricTopology) -> dict[str, str]:
    return {a.path: a.content for a in render_artifacts("all", RenderContext.from_topology(t))}


# --------------------------------------------------------------------------- DGX H100 lines


def test_dgx_h100_nccl_env_names_the_real_rail_hcas() -> None:
    env = _artifacts(topo(node_profile="dgx-h100"))["nccl/infiniband.env"]
    assert "\nNCCL_IB_HCA==" + ",".join(f"{n}:1" for n in DGX_H100_RAILS) + "\n" in env
    # Bootstrap on the in-band port as the OS names it (slot 1 port 2), not 'mgmt1'.
    assert "\nNCCL_SOCKET_IFNAME==enp41s0f1np1\n" in env
    assert "UNVERIFIED (dgx-h100)" in env


def test_the_default_profile_keeps_the_neutral_names() -> None:
    env = _artifacts(topo())["nccl/infiniband.env"]
    assert "\nNCCL_IB_HCA==" + ",".join(f"mlx5_{i}:1" for i in range(8)) + "\n" in env
    assert "UNVERIFIED" not in env


def test_dgx_h100_node_name_map_and_topo_lines() -> None:
    arts = _artifacts(topo(node_profile="dgx-h100"))
    nnm = arts["infiniband/ib-node-name-map"]
    assert (
        '# 0x________________ "su1-node01 mlx5_3"  # ConnectX-7 HCA, rail 2, su1-r2-leaf P1\n'
        in nnm
    )
    assert '"su1-node01 mlx5_1"' not in nnm  # a storage port, not a rail
    topo_text = arts["infiniband/gpu-cluster.topo"]
    section = topo_text.split("HCA_mlx5_11 su1-node01\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        f"    {n}/P1 -4x-100G-> MQM9700 su1-r{r}-leaf P1" for r, n in enumerate(DGX_H100_RAILS, 1)
    ]
    assert "    P1 -4x-100G-> HCA_mlx5_11 su1-node01 mlx5_3/P1\n" in topo_text


def test_dgx_h100_kubernetes_uses_the_pf_netdevs() -> None:
    pol = _artifacts(topo(node_profile="dgx-h100"))["kubernetes/sriov-node-policies.yaml"]
    pf = re.findall(r"- (\w+)#0-\d+", pol)
    assert pf == DGX_H100_NETDEVS


def test_ufm_p2p_gives_the_hca_number_of_the_real_device() -> None:
    rows = list(csv.reader(io.StringIO(ufm_p2p(topo(node_profile="dgx-h100")))))
    host_ports = {r[2] for r in rows[1:] if r[0] == "su1-node01"}
    assert host_ports == {str(int(n.split("_")[1]) + 1) for n in DGX_H100_RAILS}


# --------------------------------------------------------------------------- optics


def test_dgx_h100_orders_four_twin_port_optics_per_server() -> None:
    t = topo(node_profile="dgx-h100")
    bom = bill_of_materials(t)
    server = [o for o in bom.optics if o.side == "server" and o.network == "compute"]
    assert [(o.optic, o.count) for o in server] == [
        ("MMA4Z00-NS-FLT", 4 * 16),  # flat-top twin-port: one per OSFP cage, two rails each
        ("MMA4Z00-NS400", 2),  # the two UFM hosts' HCA ports
    ]
    assert bom.compute.matches_sizing and t.plan.transceivers.nic == 64 + 2  # + the UFM ports


def test_a_server_without_cages_of_record_takes_one_optic_per_port() -> None:
    t = topo(node_profile="hgx-b300", nic_gbps=800, switch="q3400")
    bom = bill_of_materials(t)
    server = [o for o in bom.optics if o.side == "server" and o.network == "compute"]
    # one cage per port; a short run takes a DAC splitter (no module), the rest a module each
    lit = sum(1 for k in t.links if k.role in ("node_leaf", "manager_leaf"))
    dac = sum(
        1
        for k, run in zip(t.links, plant_of(t).runs, strict=True)
        if k.role in ("node_leaf", "manager_leaf") and not run.a_optic
    )
    assert sum(o.count for o in server) == lit - dac == 16 * 8 + 2 - dac
    assert bom.compute.matches_sizing


# --------------------------------------------------------------------------- NIC speed


def test_800g_on_connectx7_is_refused_by_size() -> None:
    r = CliRunner().invoke(main, ["size", "--node-profile", "dgx-h100", "--nic-gbps", "800"])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: nic_gbps: 800 Gb/s")
    assert "ConnectX-7" in lines[0] and "400" in lines[0]
    assert r.stdout == ""


def test_800g_on_connectx7_fails_link_speed_match() -> None:
    # A record that reached the policy without validate_spec (stack config, edited record).
    intent = derive_intent(topo(node_profile="hgx-b300", nic_gbps=800, switch="q3400"))
    assert list(check_link_speed(intent)) == []
    spec = dict(intent.summary.spec)
    spec["node_profile"] = PROFILES["dgx-h100"].model_dump(mode="json")
    bad = intent.model_copy(update={"summary": intent.summary.model_copy(update={"spec": spec})})
    (v,) = list(check_link_speed(bad))
    assert (v.rule, v.kind, v.level) == ("link-speed-match", "Fabric", "mandatory")
    assert "800G" in v.message and "ConnectX-7" in v.message and "400G" in v.message
    # The whole policy run reads such a record (no rule trips over re-validating it).
    report = evaluate(bad)
    assert {r.id for r in report.rules if r.status == "fail"} == {"link-speed-match"}


def test_800g_on_connectx7_in_stack_config_names_the_key() -> None:
    with pytest.raises(SpecError) as e:
        spec_from_stack_config({"fabric:nodeProfile": "dgx-h100", "fabric:nicGbps": "800"})
    assert e.value.field == "fabric:nicGbps" and "ConnectX-7" in e.value.message


def test_the_default_picks_a_nic_that_runs_the_asked_speed() -> None:
    assert validate_spec().node_profile.name == "hgx-8gpu"
    assert validate_spec(nic_gbps=800, switch="q3400").node_profile.nic_model == "ConnectX-8"
    assert validate_spec(gpus_per_node=4, nic_gbps=800).node_profile.nic_max_gbps == 800


# --------------------------------------------------------------------------- selection


def test_node_profile_from_stack_config_and_flags() -> None:
    spec = spec_from_stack_config({"fabric:nodeProfile": "dgx-h200", "fabric:gpus": "256"})
    assert spec.node_profile.name == "dgx-h200"
    assert spec.node_profile.rdma_name(2) == "mlx5_3"
    r = CliRunner().invoke(
        main, ["cabling", "--node-profile", "dgx-h100", "--role", "compute", "--format", "csv"]
    )
    assert r.exit_code == 0, r.output
    assert "su1-node01,mlx5_11," in r.stdout and "mlx5_7," not in r.stdout


def test_a_named_tray_brings_its_gpu_count() -> None:
    spec = validate_spec(node_profile="gb200-nvl72-tray")
    assert (spec.gpus_per_node, spec.rails, spec.nodes) == (4, 4, 32)


def test_unknown_profile_is_one_line_naming_the_field() -> None:
    with pytest.raises(SpecError) as e:
        validate_spec(node_profile="dgx-a100")
    assert e.value.field == "node_profile" and "dgx-h100" in e.value.message


def test_two_planes_need_a_name_per_plane() -> None:
    with pytest.raises(SpecError) as e:
        validate_spec(node_profile="dgx-h100", planes=2, nic_gbps=400)
    assert e.value.field == "planes" and "16" in e.value.message


# --------------------------------------------------------------------------- the property


def _rail_names_in_exports(t: FabricTopology) -> list[set[str]]:
    """The rail device names each export gives one server (su1-node01)."""
    arts = _artifacts(t)
    out = [
        {
            r["a_port"]
            for r in csv.DictReader(io.StringIO(links_csv(t)))
            if r["role"] == "node_leaf" and r["a_device"] == "su1-node01"
        },
        {n.nic for n in derive_intent(t).nics if n.node == "su1-node01"},
        set(PlanIndex.from_topology(t).server_ports["su1-node01"])
        & {lk.a_port for lk in t.links if lk.role == "node_leaf"},
    ]
    out.append(
        {
            lk["a_port"]
            for lk in json.loads(links_json(t))["links"]
            if lk["role"] == "node_leaf" and lk["a_device"] == "su1-node01"
        }
    )
    pol = arts["kubernetes/sriov-node-policies.yaml"]
    out.append(set(re.findall(r"^# rail-\d+: (\S+) on every server", pol, re.M)))
    if t.plan.spec.fabric == "roce":
        # Host files name netdevs (the lookup Kubernetes uses), never RDMA devices (#26).
        netplan = yaml.safe_load(arts["hosts/su1-node01.netplan.yaml"])
        ctx = RenderContext.from_topology(t)
        assert set(netplan["network"]["ethernets"]) == {netdev_of(ctx, n) for n in ctx.rail_nics()}
    env = next(v for k, v in arts.items() if k.startswith("nccl/"))
    if t.plan.spec.fabric != "ethernet":
        hca = re.search(r"^NCCL_IB_HCA==(.*)$", env, re.M)
        assert hca is not None
        out.append({x.removesuffix(":1") for x in hca.group(1).split(",")})
    if t.plan.spec.fabric == "infiniband":
        out.append(set(re.findall(r"su1-node01 (\S+)/P1", topo_file(t))))
        out.append(set(re.findall(r'"su1-node01 (\S+)"', arts["infiniband/ib-node-name-map"])))
        out.append(_twin_hcas(t))
    return out


def _twin_hcas(t: FabricTopology) -> set[str]:
    w = plan_wiring(t)
    (d,) = [d for d in w.devices if d.name == "su1-node01"]
    return set(d.hcas)


@settings(max_examples=20, deadline=None)
@given(
    name=st.sampled_from(sorted(PROFILES)),
    nodes=st.integers(1, 40),
    fabric=st.sampled_from(["infiniband", "roce"]),
)
def test_every_export_names_exactly_the_profiles_compute_ports(
    name: str, nodes: int, fabric: str
) -> None:
    prof = PROFILES[name]
    kw: dict[str, Any] = {"node_profile": name, "gpus": nodes * prof.gpus, "fabric": fabric}
    if prof.nic_max_gbps > 400:
        kw |= {"nic_gbps": 800, "switch": "q3400" if fabric == "infiniband" else "sn5600"}
    elif fabric == "roce":
        kw["switch"] = "sn5600"
    t = topo(**kw)
    want = {prof.rdma_name(r) for r in range(1, prof.rdma_nics + 1)}
    if prof.compute_ports:
        assert want == {p.rdma for p in prof.compute_ports}
    for got in _rail_names_in_exports(t):
        assert got == want


# --------------------------------------------------------------------------- twin and drift


def test_the_twin_and_drift_use_the_profiles_names() -> None:
    t = topo(node_profile="dgx-h100", gpus=64)
    w = plan_wiring(t)
    guids = assign_guids(w)
    net = ibnet.render_netfile(w, guids, t.plan.link_gbps, t.plan.switch_model.key)
    assert '# "su1-node01 mlx5_11"' in net and '"su1-node01 mlx5_7"' not in net
    idx = PlanIndex.from_topology(t)
    wires = clean_wires(t, ("node_leaf", "manager_leaf", "leaf_spine"))
    report = compute_drift(idx, _ibnet_snapshot(idx, wires))
    assert report.findings == [] and report.sources[0].links == len(wires)
    # The same fabric against the neutral-names plan: every rail NIC but mlx5_0 is wrong.
    generic = PlanIndex.from_topology(topo(gpus=64))
    assert len(compute_drift(generic, _ibnet_snapshot(idx, wires)).findings) > 0


def _ibnet_snapshot(idx: PlanIndex, wires: list[Any]) -> Any:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        dump, nnm = Path(d) / "ibnet.txt", Path(d) / "nnm"
        dump.write_text(ibnetdiscover_text(idx, wires))
        nnm.write_text(node_name_map_text(idx.schemes))
        return IbnetdiscoverReader(dump, nnm).load()


def test_drift_reads_the_profiles_netdevs_as_its_rail_ports() -> None:
    t = topo(node_profile="dgx-h100", gpus=64)
    idx = PlanIndex.from_topology(t)
    netdev = {p.rdma: p.netdev for p in PROFILES["dgx-h100"].compute_ports}
    wires = [
        replace(w, a_port=netdev[w.a_port]) if w.role == "node_leaf" else w
        for w in clean_wires(t, ("node_leaf", "manager_leaf", "leaf_spine"))
    ]
    assert wires[1].a_port == "ibp24s0"
    report = compute_drift(idx, snapshot_of(wires))
    assert report.findings == []
    assert any("netdev" in n and "ibp" in n for n in report.sources[0].notes)


def test_the_card_names_a_real_servers_rails_and_what_is_unverified() -> None:
    r = CliRunner().invoke(main, ["size", "--node-profile", "dgx-b200", "--format", "markdown"])
    assert r.exit_code == 0, r.output
    assert "Servers: dgx-b200: 8 × ConnectX-7 (max 400G); rails mlx5_0, mlx5_3," in r.stdout
    assert "UNVERIFIED: " in r.stdout and "network-ports table not found" in r.stdout
    default = CliRunner().invoke(main, ["size", "--format", "markdown"])
    assert "Servers:" not in default.stdout and "UNVERIFIED" not in default.stdout


def test_roce_does_not_reuse_the_infiniband_netdev_names() -> None:
    t = topo(node_profile="dgx-h100", fabric="roce", switch="sn5600")
    pol = _artifacts(t)["kubernetes/sriov-node-policies.yaml"]
    # The Ethernet-mode names (UNVERIFIED: derived from the IB ones, see ethernet_netdev).
    assert "- ibp24s0#" not in pol and "- enp24s0np0#0-" in pol and "UNVERIFIED" in pol
    assert (
        "\nNCCL_IB_HCA==" + ",".join(f"{n}:1" for n in DGX_H100_RAILS) + "\n"
        in _artifacts(t)["nccl/roce.env"]
    )


def test_comparing_nic_speeds_follows_a_default_profile_but_not_a_chosen_one() -> None:
    ok = CliRunner().invoke(
        main,
        ["estimate", "--compare", "nic_gbps=400,800", "--fabric", "roce", "--switch", "sn5600"],
    )
    assert ok.exit_code == 0, ok.output
    chosen = CliRunner().invoke(
        main, ["estimate", "--node-profile", "dgx-h100", "--compare", "nic_gbps=400,800"]
    )
    assert chosen.exit_code == 2 and "nic_gbps: 800 Gb/s" in chosen.stderr
