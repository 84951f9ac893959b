"""#46: the NIC side of lossless RoCE from the same ``roce`` spec as the switches and NCCL,
PFC headroom from the planned cable lengths, and the bad ``roce`` values refused.

The agreement test renders every side from its own renderer (hosts script, operator template,
NCCL env, SONiC CONFIG_DB, NVUE script) and reads the values back out of the text, so a
renderer that ignored the spec would fail it; hypothesis varies DSCP, priority and MTU.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fabric_stack.analysis.estimate import estimate_collective
from fabric_stack.artifacts import RenderContext, render_artifacts
from fabric_stack.cli import main
from fabric_stack.nos.cumulus import CUMULUS_DEFAULTS
from fabric_stack.nos.sonic import SONIC_DEFAULTS
from fabric_stack.plant.plan import plant_of
from fabric_stack.policy import check_roce_host
from tests.golden_artifacts import context
from tests.policy_fixtures import intent_for
from validate.schemas import shared_schemas

SN5600 = shared_schemas() / "sonic" / "device" / "mellanox" / "x86_64-nvidia_sn5600-r0"
SMALL = {"fabric": "roce", "switch": "sn5600", "gpus": 32, "su_nodes": 4}
"""A small RoCE plan (4 servers, 8 rails, leaves and spines) that renders in well under 1 s."""


@cache
def _ctx(dscp: int, prio: int, mtu: int) -> RenderContext:
    roce = {"roce_dscp": dscp, "pfc_priorities": [prio], "mtu": mtu}
    return context({**SMALL, "roce": roce})


def _files(ctx: RenderContext, target: str) -> dict[str, str]:
    return {a.path: a.content for a in render_artifacts(target, ctx)}


# No shrinking: each example renders five targets; a failure is reported as generated.
@settings(
    max_examples=8,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    dscp=st.integers(0, 63).filter(lambda d: d != 48),
    prio=st.integers(0, 7).filter(lambda p: p != 6),
    mtu=st.integers(9000, 9216),
)
def test_hosts_operator_switches_and_nccl_agree(dscp: int, prio: int, mtu: int) -> None:
    ctx = _ctx(dscp, prio, mtu)
    tos, vector = dscp << 2, ",".join("1" if p == prio else "0" for p in range(8))
    hosts = _files(ctx, "hosts")
    scripts = {p: t for p, t in hosts.items() if p.endswith(".roce-qos.sh")}
    assert len(scripts) == 4
    for text in scripts.values():
        nics = text.count("mlnx_qos -i") // 4
        assert nics == 8
        assert len(re.findall(rf"--pfc {vector} --cable_len \d+\n", text)) == nics
        assert len(re.findall(rf"--dscp2prio set,{dscp},{prio}\n", text)) == nics
        assert len(re.findall(rf"cma_roce_tos -d mlx5_\d -p 1 -t {tos}\n", text)) == nics
        assert text.count(f"/ecn/roce_rp/enable/{prio}\n") == nics
        assert text.count("autoneg off rx off tx off") == nics
    # The rail interfaces' MTU (netplan) never exceeds the switches'.
    for path, text in hosts.items():
        if path.endswith(".netplan.yaml"):
            for eth in yaml.safe_load(text)["network"]["ethernets"].values():
                assert eth["mtu"] <= mtu
    k8s = _files(ctx, "kubernetes")
    (doc,) = [
        d
        for d in yaml.safe_load_all(k8s["kubernetes/nic-configuration-template.yaml"])
        if d is not None
    ]
    qos = doc["spec"]["template"]["roceOptimized"]["qos"]
    assert (qos["trust"], qos["pfc"], qos["tos"]) == ("dscp", vector, tos)
    assert qos["ecn"] == {"enabled": True, "priority": prio}
    assert qos["pauseFrames"] == {"enabled": False}
    env = _files(ctx, "nccl")["nccl/roce.env"]
    assert re.search(rf"^NCCL_IB_TC={tos}$", env, re.M)
    for path, text in _files(ctx, "sonic").items():
        if path.endswith("config_db.json"):
            db = json.loads(text)
            assert db["DSCP_TO_TC_MAP"]["ROCE"][str(dscp)] == str(prio)
            assert {r["pfc_enable"] for r in db["PORT_QOS_MAP"].values()} == {str(prio)}
            assert {r["mtu"] for r in db["PORT"].values()} == {str(mtu)}
    for text in _files(ctx, "cumulus").values():
        assert f"nv set qos mapping default-global dscp {dscp} switch-priority {prio}" in text
        assert re.search(rf"nv set qos pfc pfc-\S+-\d+m switch-priority {prio}\n", text)


def _intent(**roce: Any) -> Any:
    return intent_for(fabric="roce", switch="sn5600", gpus=32, su_nodes=4, roce=roce)


def test_policy_passes_the_default_and_fails_a_host_that_disagrees() -> None:
    assert list(check_roce_host(_intent())) == []
    (v,) = check_roce_host(_intent(overrides={"host": {"pfc_priorities": [4]}}))
    assert "host NICs PFC on priority 4, switches on priority 3" in v.message
    assert v.fix.endswith("remove roce.overrides.host.pfc_priorities")
    (v,) = check_roce_host(_intent(overrides={"host": {"dscp_trust": False}}))
    assert "host NICs trust pcp, switches DSCP trust on" in v.message


def test_policy_names_the_switch_override_when_the_switches_moved() -> None:
    (v,) = check_roce_host(_intent(overrides={"leaf": {"ecn": False}, "spine": {"ecn": False}}))
    assert "host NICs DCQCN on, switches ECN off" in v.message
    assert "roce.overrides.leaf.ecn, roce.overrides.spine.ecn" in v.fix


def test_host_override_reaches_the_host_files_only() -> None:
    ctx = context({**SMALL, "roce": {"overrides": {"host": {"pfc_priorities": [4]}}}})
    hosts = _files(ctx, "hosts")
    script = next(t for p, t in hosts.items() if p.endswith(".roce-qos.sh"))
    assert "--pfc 0,0,0,0,1,0,0,0" in script
    assert "--dscp2prio set,26,3" in script  # the mapping stays the spec's
    cfg = ctx.switch_config(ctx.compute_switches()[0], routed=False)
    assert cfg.qos.pfc_priorities == (3,)


@pytest.mark.parametrize(
    ("roce", "message"),
    [
        (
            "{pfc_priorities: [3, 4]}",
            "roce.pfc_priorities: 2 priorities (3, 4) but lossless_pools is 1",
        ),
        ("{roce_dscp: 64}", "roce.roce_dscp: 64 is out of range (an integer 0-63)"),
        ("{tos: 100}", "roce.tos: ToS 100 carries DSCP 25, not roce_dscp 26"),
        ("{overrides: {host: {mtu: 1500}}}", "roce.overrides.host: cannot override 'mtu'"),
    ],
)
def test_bad_roce_values_are_one_line_exit_2(tmp_path: Path, roce: str, message: str) -> None:
    cfg = tmp_path / "spec.yaml"
    cfg.write_text(f"fabric: roce\nswitch: sn5600\nroce: {roce}\n", encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["render", "hosts", "--config", str(cfg), "--out", str(out)])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


def test_matching_tos_is_accepted() -> None:
    ctx = context({**SMALL, "roce": {"roce_dscp": 24, "tos": 96}})
    assert re.search(r"^NCCL_IB_TC=96$", _files(ctx, "nccl")["nccl/roce.env"], re.M)


# --- PFC headroom from the planned cable lengths -------------------------------------------


def _lookup_rows(path: Path) -> set[tuple[int, int]]:
    """(speed Mb/s, cable m) of every row of a pg_profile_lookup.ini."""
    rows = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].endswith("m"):
            rows.add((int(parts[0]), int(parts[1][:-1])))
    return rows


def test_sonic_cable_lengths_are_the_sn5600_headroom_table() -> None:
    files = sorted(SN5600.glob("*/pg_profile_lookup.ini"))
    assert files, f"no pg_profile_lookup.ini under {SN5600}"
    assert {f.parent.name for f in files} == set(SONIC_DEFAULTS.pg_profile_cable_lengths_m)
    for f in files:
        rows = _lookup_rows(f)
        for speed in {s for s, _ in rows}:
            got = sorted(c for s, c in rows if s == speed)
            assert tuple(got) == SONIC_DEFAULTS.pg_profile_cable_lengths_m[f.parent.name], f


@given(
    run=st.floats(0.1, 2000.0, allow_nan=False),
    sku=st.sampled_from(sorted(SONIC_DEFAULTS.pg_profile_cable_lengths_m)),
)
def test_cable_length_rounds_up_to_what_the_platform_takes(run: float, sku: str) -> None:
    table = SONIC_DEFAULTS.pg_profile_cable_lengths_m[sku]
    sonic = SONIC_DEFAULTS.cable_length(run, sku)
    assert sonic >= run
    if run <= table[-1]:
        assert sonic in table and all(c < run for c in table if c < sonic)
    nvue = CUMULUS_DEFAULTS.cable_length(run)
    assert nvue == max(1, math.ceil(run)) and 1 <= nvue <= 100000


@cache
def _two_su() -> RenderContext:
    return context({"fabric": "roce", "switch": "sn5600", "gpus": 256, "su_nodes": 16})


def _planned(ctx: RenderContext) -> dict[tuple[str, str], float]:
    """(device, port) → planned cable length, straight from the plant."""
    out = {}
    for link, run in zip(ctx.topo.links, plant_of(ctx.topo, strict=False).runs, strict=True):
        out[(link.a_device, link.a_port)] = out[(link.b_device, link.b_port)] = run.length_m
    return out


def test_sonic_cable_length_per_port_is_the_planned_run_rounded_up() -> None:
    ctx = _two_su()
    planned = _planned(ctx)
    seen = set()
    for sw in ctx.compute_switches():
        cfg = ctx.switch_config(sw, routed=False)
        db = json.loads(_files_of_switch(ctx, "sonic", sw.name)["config_db.json"])
        by_alias = {row["alias"]: name for name, row in db["PORT"].items()}
        lengths = db["CABLE_LENGTH"]["AZURE"]
        for p in cfg.ports:
            run = planned[(sw.name, p.name)]
            name = _sonic_name(db, by_alias, p.number, ctx)
            want = next(c for c in (5, 40, 300) if c >= math.ceil(run))
            assert lengths[name] == f"{want}m", (sw.name, p.name, run)
            seen.add(want)
    assert len(seen) >= 2, seen  # the plan's runs are not one constant


def _sonic_name(db: dict[str, Any], by_alias: dict[str, str], number: int, ctx: Any) -> str:
    ppc = ctx.plan.ports_per_cage
    cage, lane = divmod(number - 1, ppc)
    alias = f"etp{cage + 1}" + (chr(ord("a") + lane) if ppc > 1 else "")
    return by_alias[alias]


def _files_of_switch(ctx: RenderContext, target: str, name: str) -> dict[str, str]:
    return {
        Path(p).name: t
        for p, t in _files(ctx, target).items()
        if f"/{name}/" in p or Path(p).name.startswith(name)
    }


def test_nvue_cable_length_per_port_is_the_planned_run_rounded_up() -> None:
    ctx = _two_su()
    planned = _planned(ctx)
    for sw in ctx.compute_switches():
        (text,) = _files_of_switch(ctx, "cumulus", sw.name).values()
        profile_len = {
            m[1]: int(m[2]) for m in re.finditer(r"nv set qos pfc (\S+) cable-length (\d+)", text)
        }
        ports = re.findall(r"nv set interface (\S+) qos pfc profile (\S+)", text)
        assert ports
        for port, profile in ports:
            assert profile_len[profile] == math.ceil(planned[(sw.name, port)]), (sw.name, port)


def test_nic_cable_length_is_the_planned_host_run() -> None:
    ctx = _two_su()
    planned = _planned(ctx)
    for path, text in _files(ctx, "hosts").items():
        if not path.endswith(".roce-qos.sh"):
            continue
        for leaf, port, metres in re.findall(r"cable to (\S+):(\S+), planned (\d+) m", text):
            assert int(metres) == math.ceil(planned[(leaf, port)])
    k8s = _files(ctx, "kubernetes")["kubernetes/nic-configuration-template.yaml"]
    (doc,) = [d for d in yaml.safe_load_all(k8s) if d is not None]
    hosts = [planned[(h.leaf, h.leaf_port)] for h in ctx.underlay.hosts]
    assert doc["spec"]["template"]["roceOptimized"]["qos"]["cableLen"] == math.ceil(max(hosts))


# --- acceptance that crosses the spines ----------------------------------------------------


@cache
def _jobs_1024() -> tuple[RenderContext, list[dict[str, Any]]]:
    ctx = context({"fabric": "roce", "switch": "sn5600", "gpus": 1024})
    text = _files(ctx, "kubernetes")["kubernetes/nccl-tests-mpijob.yaml"]
    return ctx, [d for d in yaml.safe_load_all(text) if d is not None]


def _estimate(ctx: RenderContext, collective: str, hosts: list[str]) -> float:
    est = estimate_collective(ctx.topo, collective, [8 * 2**30], job_hosts=hosts)
    return est.points[-1].busbw_gbs


def test_1024_gpus_have_jobs_spanning_sus_each_with_its_own_expectation() -> None:
    ctx, jobs = _jobs_1024()
    servers = {d.name: d.su for d in ctx.topo.devices if d.role == "server"}
    sus = sorted(set(servers.values()))
    assert len(sus) == 2
    per_su = [j for j in jobs if "nodeSelector" in _worker(j)]
    cross = [j for j in jobs if _worker(j).get("hostNetwork")]
    assert len(per_su) == len(sus) and len(cross) == 2
    for job, su in zip(per_su, sus, strict=True):
        hosts = [n for n, s in servers.items() if s == su]
        want = _estimate(ctx, "all_reduce", hosts)
        assert _expected(job) == pytest.approx(want, abs=1e-3)
        assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == len(hosts)
    whole = list(servers)
    for job, coll, binary in zip(
        cross, ("all_reduce", "alltoall"), ("all_reduce_perf", "alltoall_perf"), strict=True
    ):
        assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == len(whole)
        assert _expected(job) == pytest.approx(_estimate(ctx, coll, whole), abs=1e-3)
        script = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
        assert f"/{binary} " in script["command"][2] and "-np 1024 " in script["command"][2]
    # The two scopes are judged apart: all-to-all over the spines is not all-reduce's figure.
    assert _expected(cross[1]) < _expected(cross[0])


def _worker(job: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    return spec


def _expected(job: dict[str, Any]) -> float:
    return float(job["metadata"]["annotations"]["fabric-stack/expected-busbw-gbs"])


def test_cross_su_jobs_validate_against_the_mpijob_crd() -> None:
    from tests.unit.test_artifacts_kubernetes import _validate_all

    _, jobs = _jobs_1024()
    _validate_all(jobs)


def test_one_su_plan_has_no_cross_su_job() -> None:
    text = _files(context(SMALL), "kubernetes")["kubernetes/nccl-tests-mpijob.yaml"]
    jobs = [d for d in yaml.safe_load_all(text) if d is not None]
    assert len(jobs) == 1 and not _worker(jobs[0]).get("hostNetwork")
