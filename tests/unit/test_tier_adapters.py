"""Everything downstream of the new shapes follows the plan (issue #43), not a formula of its own.

For each shape #43 added (800G uplinks on SN5600 leaves serving 400G NICs, two leaves per
rail, rail-grouped spines, four planes with Q3400 spines, a build-out phase) the fabric's
own discovery view is written from the plan's port-level link list the way the fabric
would report it (ibnetdiscover with the plan's logical port numbers and each link's IB
rate; lldpd JSON from every switch with MAC port ids and a MAC table), then:

* ``drift`` on it finds nothing; one cable moved or one link at the wrong speed is exactly
  that one finding;
* ``adopt`` on the same view renamed as a site names its devices places every device at
  its planned position, and ``drift`` with adopt's names file finds nothing;
* ``whatif`` and ``estimate`` count 800G uplinks at their capacity, keep a rail-grouped
  fabric's failures inside the rail, and say cross-rail traffic goes over NVLink;
* the Pulumi components (under Pulumi's mocks) carry each link's speed and each tier's
  model, from a spec and from ``fabric:`` stack config in camelCase;
* the issue's bad inputs are one line naming the key and what would be valid, exit 2,
  nothing written, as flags, as a spec file and as a stack file.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from click.testing import CliRunner

from fabric_stack.adapters.discovery import IbnetdiscoverReader, LldpReader
from fabric_stack.cli import main
from fabric_stack.drift import PlanIndex
from fabric_stack.drift.adopt import adopt, observation_from_snapshot
from fabric_stack.drift.identity import Identity
from fabric_stack.files.names_file import write_names
from fabric_stack.intent.derive import derive_intent
from fabric_stack.intent.wire import decode_cables, record_of
from fabric_stack.topology.build import FabricTopology, Link
from fabric_stack.topology.model import FABRIC_ROLES
from tests.adopt_fixtures import renamed, site_names
from tests.adopt_fixtures import write_ibnetdiscover as write_site_ibnetdiscover
from tests.adopt_fixtures import write_lldp as write_site_lldp
from tests.drift_fixtures import (
    Wire,
    clean_wires,
    drop,
    ibnetdiscover_text,
    lldp_entries,
    lldpd_json0,
    mac_of,
    move_b,
    set_rate,
)
from tests.topology_fixtures import spec_key, topo_for

DESIGNS: dict[str, dict[str, Any]] = {
    "roce-800g-uplinks": {"gpus": 1024, "fabric": "roce", "switch": "sn5600", "uplink_gbps": 800},
    "ib-two-leaves-per-rail": {"gpus": 1024, "switch": "qm9700", "su_nodes": 64},
    "roce-rail-grouped": {
        "gpus": 1024,
        "fabric": "roce",
        "switch": "sn5600",
        "nic_gbps": 800,
        "su_nodes": 64,
        "spine_grouping": "rail",
    },
    "ib-rail-grouped": {"gpus": 1024, "spine_grouping": "rail"},
    "ib-4planes-q3400-spines": {
        "gpus_per_node": 4,
        "gpus": 256,
        "nic_gbps": 800,
        "planes": 4,
        "spine_switch": "q3400",
        "uplink_gbps": 400,
    },
    "ib-build-out": {"gpus": 1024, "build_out_gpus": 2048},
}
"""The new shapes, as in validate/matrix.py's scenarios (their keys are known to plan)."""

IB_RATE = {200: "2xNDR", 400: "4xNDR", 800: "4xXDR"}
"""What ibnetdiscover prints for a QM9700/Q3400 link at each planned speed: NDR200 is two
NDR lanes, NDR four (NVIDIA Quantum-2 QM9700 user manual, "Specifications": 64 × NDR 400G
or 128 × NDR200), XDR 800G four XDR lanes (Quantum-X800 Q3400)."""

WRONG_RATE = {"2xNDR": "1xNDR", "4xNDR": "2xNDR", "4xXDR": "2xXDR"}
"""The same lanes at half the width: the link trained narrower than planned."""


def _ib(spec: dict[str, Any]) -> bool:
    return spec.get("fabric", "infiniband") == "infiniband"


def _flags(spec: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for k, v in spec.items():
        out += [f"--{k.replace('_', '-')}", str(v)]
    return out


@cache
def _plan(name: str) -> tuple[FabricTopology, PlanIndex]:
    topo = topo_for(spec_key(**DESIGNS[name]))
    return topo, PlanIndex.from_topology(topo)


def _wires(name: str, compute_only: bool = False) -> list[Wire]:
    """One wire per planned link as the fabric reports it: ibnetdiscover sees the compute
    fabric, LLDP every switch's (storage, in-band and OOB too, unless ``compute_only``)."""
    topo, _ = _plan(name)
    ib = _ib(DESIGNS[name])
    roles = FABRIC_ROLES if ib or compute_only else None
    return [replace(w, rate=IB_RATE[w.speed] if ib else None) for w in clean_wires(topo, roles)]


def _write_view(name: str, wires: list[Wire], where: Path) -> list[str]:
    """The fabric's discovery files for ``wires`` under ``where``; the drift flags to read them."""
    _, index = _plan(name)
    where.mkdir(parents=True, exist_ok=True)
    if _ib(DESIGNS[name]):
        path = where / "ibnetdiscover.txt"
        path.write_text(ibnetdiscover_text(index, wires), encoding="utf-8")
        return ["--ibnetdiscover", str(path)]
    lldp = where / "lldp"
    lldp.mkdir()
    for dev in index.schemes:
        doc = lldpd_json0(lldp_entries(index, dev, wires))
        (lldp / f"{dev}.json").write_text(json.dumps(doc), encoding="utf-8")
    rows = ["device,port,mac"]
    rows += [
        f"{dev},{port},{mac_of(dev, port)}"
        for dev, ports in sorted(index.server_ports.items())
        for port in sorted(ports)
    ]
    (where / "macs.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return ["--lldp", str(lldp), "--mac-table", str(where / "macs.csv")]


def _drift(name: str, source: list[str], *extra: str) -> tuple[int, list[dict[str, Any]]]:
    r = CliRunner().invoke(
        main,
        ["drift", *_flags(DESIGNS[name]), *source, *extra, "--format", "json", "--max-rows", "0"],
    )
    assert r.exit_code in (0, 1), r.output
    return r.exit_code, json.loads(r.stdout)["findings"]


def _uplink(name: str) -> Link:
    """A leaf uplink of the plan's second SU (not the first link: no lucky defaults)."""
    topo, _ = _plan(name)
    ups = [k for k in topo.links_of("leaf_spine") if k.su == max(k.su for k in topo.links)]
    return ups[len(ups) // 2 + 1]


# ----------------------------------------------------------------- drift round trip


@pytest.mark.parametrize("name", DESIGNS)
def test_the_fabrics_own_view_drifts_clean(name: str, tmp_path: Path) -> None:
    code, findings = _drift(name, _write_view(name, _wires(name), tmp_path))
    assert [f["summary"] for f in findings] == [] and code == 0


def _move_target(name: str, link: Link) -> tuple[str, str, Link | None]:
    """Where to move ``link``'s spine end: (spine, port, the planned cable unplugged there).

    Another spine the leaf reaches (its rail group's, on a rail-grouped fabric), else its
    own spine; a port no cable uses when the spine has one (a Q3400 spine, a build-out's
    spines), else the port of another leaf's cable, which then lies unplugged."""
    topo, index = _plan(name)
    ups = [k for k in topo.links_of("leaf_spine") if k.a_device == link.a_device]
    spines = sorted({k.b_device for k in ups} - {link.b_device}) or [link.b_device]
    spine = spines[0]
    at = {k.b_port_number: k for k in topo.links_of("leaf_spine") if k.b_device == spine}
    radix = topo.device(spine).radix
    free = next((n for n in range(radix, 0, -1) if n not in at), None)
    if free is not None:
        label = index.schemes[spine].label(free)
        assert label is not None
        return spine, label, None
    taken = next(k for n, k in sorted(at.items()) if k.a_device != link.a_device)
    return spine, taken.b_port, taken


@pytest.mark.parametrize("name", DESIGNS)
def test_one_uplink_moved_is_exactly_that_finding(name: str, tmp_path: Path) -> None:
    link = _uplink(name)
    spine, port, unplugged = _move_target(name, link)
    wires = move_b(_wires(name), link.id, spine, port)
    if unplugged is not None:
        wires = drop(wires, unplugged.id)
    _, findings = _drift(name, _write_view(name, wires, tmp_path))
    kinds = Counter(f["kind"] for f in findings)
    want = Counter({"wrong_peer": 1} | ({"missing_link": 1} if unplugged else {}))
    assert kinds == want, [f["summary"] for f in findings]
    moved = next(f for f in findings if f["kind"] == "wrong_peer")
    said = json.dumps(moved)
    assert link.a_device in said and link.a_port in said and spine in said and port in said
    if unplugged is not None:
        lost = next(f for f in findings if f["kind"] == "missing_link")
        assert unplugged.a_device in lost["summary"] and unplugged.a_port in lost["summary"]


@pytest.mark.parametrize("name", DESIGNS)
def test_one_uplink_at_the_wrong_speed_is_exactly_that_finding(name: str, tmp_path: Path) -> None:
    link = _uplink(name)
    wires = _wires(name)
    rate = WRONG_RATE.get(IB_RATE.get(link.speed_gbps, ""))
    wires = set_rate(wires, link.id, link.speed_gbps // 2, rate)
    _, findings = _drift(name, _write_view(name, wires, tmp_path))
    assert len(findings) == 1, [f["summary"] for f in findings]
    f = findings[0]
    assert f["kind"] == "speed_mismatch"
    assert link.a_device in f["summary"] and str(link.speed_gbps // 2) in json.dumps(f)
    # The expected speed is the link's own (800G on an 800G uplink of a 400G leaf).
    assert str(link.speed_gbps) in json.dumps(f["expected"])


def test_a_mixed_leafs_uplinks_resolve_to_the_plans_labels() -> None:
    # Uplinks of an SN5600 leaf serving 400G NICs run a whole 800G cage each (swp33), and
    # are numbered after the cage's first 400G lane (65); a QM9700 leaf with NDR200 hosts
    # has NDR uplinks two per cage (1/17/2 is port 67). Lanes inside an uplink are no port.
    topo, index = _plan("roce-800g-uplinks")
    leaf = _uplink("roce-800g-uplinks").a_device
    ident = Identity(index)
    planned = {k.a_port_number: k.a_port for k in topo.links_of("leaf_spine") if k.a_device == leaf}
    for number, label in list(planned.items())[:3]:
        assert ident.port(leaf, str(number)) == (label, "name")
        assert ident.port(leaf, label) == (label, "name")
    assert ident.port(leaf, "Ethernet33/1") == ("swp33", "name")
    assert ident.port(leaf, "66")[1] == "unknown"
    assert ident.port(leaf, "swp32s1") == ("swp32s1", "name")  # a 400G downlink lane

    topo4, index4 = _plan("ib-4planes-q3400-spines")
    ident4 = Identity(index4)
    up = next(k for k in topo4.links_of("leaf_spine") if k.a_port == "1/17/2")
    assert up.a_port_number == 67
    assert ident4.port(up.a_device, "67") == ("1/17/2", "name")
    assert ident4.port(up.a_device, "66")[1] == "unknown"


# ----------------------------------------------------------------- adopt


@cache
def _site(name: str) -> tuple[dict[str, str], list[Wire]]:
    """(planned → site name, the fabric's wires spelled with the site's names, shuffled)."""
    topo, _ = _plan(name)
    rng = random.Random(43)
    names = site_names(topo, rng)
    wires = renamed(_wires(name, compute_only=True), names)
    rng.shuffle(wires)
    return names, wires


@pytest.mark.parametrize("name", DESIGNS)
def test_adopt_places_every_device_and_drift_with_its_names_is_clean(
    name: str, tmp_path: Path
) -> None:
    topo, _ = _plan(name)
    names, wires = _site(name)
    if _ib(DESIGNS[name]):
        where = write_site_ibnetdiscover(tmp_path / "ib.txt", topo, names, wires, hca_form=False)
        snap, flag = IbnetdiscoverReader(where).load(), "--ibnetdiscover"
    else:
        where = write_site_lldp(tmp_path / "lldp", topo, names, wires)
        snap, flag = LldpReader(where).load(), "--lldp"
    result = adopt(topo, observation_from_snapshot(snap))
    truth = {site: planned for planned, site in names.items()}
    wrong = {d: (p, truth.get(d)) for d, p in result.placed.items() if truth.get(d) != p}
    assert wrong == {}
    assert set(result.placed) == set(truth), sorted(set(truth) - set(result.placed))[:5]
    assert [u for u in result.unplaced if u.role != "switch"] == []
    roles = Counter(topo.device(p).role for p in result.placed.values())
    assert roles == Counter(d.role for d in topo.devices if d.name in names)
    (tmp_path / "names.csv").write_text(write_names(result.rows), encoding="utf-8")
    names_file = ["--names", str(tmp_path / "names.csv"), "--network", "compute"]
    code, findings = _drift(name, [flag, str(where)], *names_file)
    assert [f["summary"] for f in findings] == [] and code == 0


# ----------------------------------------------------------------- whatif and estimate


def _cli_json(command: str, name: str, *args: str, spec: dict[str, Any] | None = None) -> Any:
    flags = _flags(spec if spec is not None else DESIGNS[name])
    r = CliRunner().invoke(main, [command, *flags, *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _capacity(topo: FabricTopology, **where: Any) -> int:
    """Gb/s of the leaf-spine links matching ``where`` (link attributes), from the link list."""
    return sum(
        k.speed_gbps
        for k in topo.links_of("leaf_spine")
        if all(getattr(k, f) == v for f, v in where.items())
    )


def test_whatif_counts_800g_uplinks_at_their_capacity() -> None:
    topo, _ = _plan("roce-800g-uplinks")
    spine = next(iter(topo.links_of("leaf_spine"))).b_device
    fast = _cli_json("whatif", "roce-800g-uplinks", "--fail", spine)
    same = {**DESIGNS["roce-800g-uplinks"], "uplink_gbps": 400}
    slow = _cli_json("whatif", "", "--fail", "spine-01", spec=same)
    # Half the cables at twice the speed: the same bisection, healthy and after a spine.
    assert fast["bisection_tbps"]["before"] == slow["bisection_tbps"]["before"] == 409.6
    lost = _capacity(topo, b_device=spine) / _capacity(topo)
    assert lost == 1 / 8 and fast["failed"][0]["cables"] == 64  # 16 leaves × 4 × 800G
    assert fast["bisection_tbps"]["after"] == pytest.approx(409.6 * (1 - lost))
    assert fast["capacity_lost_pct"]["leaf_spine"] == pytest.approx(100 * lost)


def test_estimate_counts_800g_uplinks_at_their_capacity() -> None:
    topo, _ = _plan("roce-800g-uplinks")
    args = ("--collective", "alltoall", "--sizes", "1G")
    fast = _cli_json("estimate", "roce-800g-uplinks", *args)
    same = {**DESIGNS["roce-800g-uplinks"], "uplink_gbps": 400}
    slow = _cli_json("estimate", "", *args, spec=same)
    assert fast["job"]["sus"] == 2
    su_cut = _capacity(topo, su=1) / 8  # GB/s out of SU 1: its 256 800G uplinks
    assert fast["limits_gbs"]["su_uplinks_min"] == su_cut == 25_600  # 8 leaves × 32 × 800G
    assert slow["limits_gbs"]["su_uplinks_min"] == su_cut
    assert fast["points"] == slow["points"]


def test_rail_grouped_failures_stay_in_their_rail_and_cross_rail_goes_over_nvlink() -> None:
    topo, _ = _plan("roce-rail-grouped")
    spine = next(d.name for d in topo.switches("spine") if d.rail == 3)
    out = _cli_json("whatif", "roce-rail-grouped", "--fail", spine)
    assert "NVLink" in out["traffic"] and "PXN" in out["traffic"]
    assert out["ecmp"]["degraded_pairs"] > 0
    assert {p["rail"] for p in out["ecmp"]["worst"]} == {3}
    assert out["capacity_lost_pct"]["leaf_spine"] == pytest.approx(
        100 * _capacity(topo, b_device=spine) / _capacity(topo)
    )
    # No link joins two rails: a rail's leaves reach only their own rail's spines.
    rail_of = {d.name: d.rail for d in topo.switches("spine")}
    assert all(rail_of[k.b_device] == k.rail for k in topo.links_of("leaf_spine"))
    est = _cli_json("estimate", "roce-rail-grouped", "--sizes", "1G")
    assert any("no network path joins two rails" in a for a in est["assumptions"])
    full = _cli_json("whatif", "ib-two-leaves-per-rail", "--fail", "spine-01")
    assert "traffic" not in full


def test_one_of_two_leaves_of_a_rail_out_leaves_the_rail_up() -> None:
    one = _cli_json("whatif", "ib-two-leaves-per-rail", "--fail", "su1-r1-leaf1")
    # The 32 servers on that leaf lose their rail-1 NIC; the rail keeps its other leaf.
    assert one["isolated"]["by_rail"] == {"1": 32}
    assert one["isolated"]["rails_without_leaf"] == []
    both = _cli_json(
        "whatif", "ib-two-leaves-per-rail", "--fail", "su1-r1-leaf1", "--fail", "su1-r1-leaf2"
    )
    assert both["isolated"]["rails_without_leaf"] == ["SU 1 rail 1"]


def test_four_planes_lose_one_plane_with_its_spine() -> None:
    topo, _ = _plan("ib-4planes-q3400-spines")
    spine = next(d.name for d in topo.switches("spine") if d.plane == 2)
    out = _cli_json("whatif", "ib-4planes-q3400-spines", "--fail", spine)
    assert out["isolated"]["gpus"] == 0  # every GPU keeps three planes
    assert out["bisection_tbps"]["after"] == pytest.approx(out["bisection_tbps"]["before"] * 3 / 4)
    leaves = sorted(d.name for d in topo.switches("leaf") if d.plane == 2)
    assert out["isolated"]["leaves_cut_off"] == leaves  # one spine per plane at 256 GPUs


def test_a_build_outs_reserved_spines_carry_phase_1s_share() -> None:
    topo, _ = _plan("ib-build-out")
    assert topo.plan.switches.spine == 32  # the 2,048-GPU fabric's spines, provisioned now
    out = _cli_json("whatif", "ib-build-out", "--fail", "spine-01")
    lost = _capacity(topo, b_device="spine-01") / _capacity(topo)
    assert lost == 1 / 32
    assert out["capacity_lost_pct"]["leaf_spine"] == pytest.approx(100 * lost)


# ----------------------------------------------------------------- Pulumi components (mocks)


class _Mocks(pulumi.runtime.Mocks):
    """Records every resource the program or component registers (no engine, no provider)."""

    def __init__(self) -> None:
        self.resources: list[tuple[str, str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append((args.typ, args.name, dict(args.inputs)))
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
        return {}, None


_P = "pulumi-python:dynamic/fabric:"


def _records(mocks: _Mocks, kind: str) -> list[dict[str, Any]]:
    return [record_of(i) for t, _, i in mocks.resources if t == _P + kind]


def _check_records(mocks: _Mocks, topo: FabricTopology, models: dict[str, str]) -> None:
    """The cable records carry each planned link's speed at both ends, the switch records
    their tier's model and port speeds (compared with the topology, built apart)."""
    cables = [c for b in _records(mocks, "CableBundle") for c in decode_cables(b)]
    cables += _records(mocks, "Cable")
    speed = {k.id: k.speed_gbps for k in topo.links}
    assert len(cables) == len(speed)
    for c in cables:
        assert c["a_speed_gbps"] == c["b_speed_gbps"] == speed[c["name"]], c["name"]
    assert {c["a_speed_gbps"] for c in cables if c["role"] == "leaf_spine"} == {
        topo.plan.uplink_gbps
    }
    switches = {s["name"]: s for s in _records(mocks, "Switch")}
    for d in topo.switches("leaf", "spine"):
        assert switches[d.name]["model"] == models[d.role], d.name
    leaf = next(s for s in switches.values() if s["role"] == "leaf")
    spine = next(s for s in switches.values() if s["role"] == "spine")
    assert (leaf["port_gbps"], leaf.get("up_gbps", leaf["port_gbps"])) == (
        topo.plan.link_gbps,
        topo.plan.uplink_gbps,
    )
    assert spine["port_gbps"] == topo.plan.uplink_gbps


@pytest.fixture
def mocks() -> _Mocks:
    m = _Mocks()
    pulumi.runtime.set_mocks(m, project="fabric-stack", stack="tiers", preview=True)
    return m


@pytest.mark.parametrize(
    ("name", "granularity", "models"),
    [
        ("ib-4planes-q3400-spines", "bundle", {"leaf": "qm9700", "spine": "q3400"}),
        ("roce-rail-grouped", "bundle", {"leaf": "sn5600", "spine": "sn5600"}),
        ("roce-800g-uplinks", "bundle", {"leaf": "sn5600", "spine": "sn5600"}),
    ],
)
@pulumi.runtime.test
def test_components_carry_each_links_speed_and_each_tiers_model(
    mocks: _Mocks, name: str, granularity: str, models: dict[str, str]
) -> Any:
    from components.fabric import FabricComponent

    topo, _ = _plan(name)
    intent = derive_intent(topo)
    comp = FabricComponent("gpu-cluster", intent, "sqlite:///unused.db", granularity)  # type: ignore[arg-type]
    return pulumi.Output.all(*[r.urn for r in comp.resources]).apply(
        lambda _: _check_records(mocks, topo, models)
    )


def test_the_program_reads_the_tier_keys_from_camel_case_stack_config(
    mocks: _Mocks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from components.program import run

    spec = DESIGNS["ib-4planes-q3400-spines"]
    config = {f"fabric:{_camel(k)}": str(v) for k, v in spec.items()}
    assert "fabric:spineSwitch" in config and "fabric:uplinkGbps" in config
    config |= {
        "fabric:inventory": f"sqlite:///{tmp_path / 'inv.db'}",
        "fabric:configRecords": "false",
    }
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(config))

    @pulumi.runtime.test
    def program() -> None:
        run(tmp_path)

    program()  # returns once every resource the program registered has been seen
    topo, _ = _plan("ib-4planes-q3400-spines")
    _check_records(mocks, topo, {"leaf": "qm9700", "spine": "q3400"})
    fabric = _records(mocks, "Fabric")[0]
    assert (fabric["spec"]["spine_switch"], fabric["spec"]["uplink_gbps"]) == ("q3400", 400)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w.title() for w in rest)


# ----------------------------------------------------------------- bad input

BAD_INPUTS: dict[str, tuple[dict[str, Any], str, str]] = {
    # name: (spec, key, what the line must offer instead)
    "spine-slower-than-uplinks": (
        {"gpus": 1024, "fabric": "roce", "switch": "sn5600", "uplink_gbps": 800}
        | {"spine_switch": "generic-64x400"},
        "uplink_gbps",
        "(uplink_gbps 400, or spine_switch sn5600 or generic-<radix>x800)",
    ),
    "build-out-below-gpus": (
        {"gpus": 1024, "build_out_gpus": 512},
        "build_out_gpus",
        "or at least 1,024)",
    ),
    "three-planes-of-an-8-rail-400g-nic": (
        {"gpus": 128, "gpus_per_node": 8, "nic_gbps": 400, "planes": 3},
        "planes",
        "(use planes 1, 2, 4, or a NIC rate divisible by 3)",
    ),
    "rail-grouping-needs-a-core-anyway": (
        {"gpus": 32768, "spine_grouping": "rail"},
        "spine_grouping",
        "(spine_grouping: full (three tiers), or at most 16,384 GPUs with rail grouping)",
    ),
}
"""The issue's bad inputs: a spine model slower than ``uplink_gbps``, ``build_out_gpus``
below ``gpus``, ``planes: 3`` on 400G NICs, rail grouping where a rail needs a core."""


def _bad_input(form: str, spec: dict[str, Any], where: Path) -> tuple[list[str], str]:
    """(CLI arguments giving ``spec`` as ``form``, the prefix the line names the key with)."""
    if form == "flags":
        return _flags(spec), ""
    if form == "spec-file":
        path = where / "cluster.yaml"
        path.write_text(yaml.safe_dump(spec), encoding="utf-8")
        return ["--config", str(path)], f"{path}: "
    path = where / "Pulumi.prod.yaml"
    config = {f"fabric:{_camel(k)}": v for k, v in spec.items()}
    path.write_text(yaml.safe_dump({"config": config}), encoding="utf-8")
    return ["--config", str(path)], f"{path}: fabric:"


@pytest.mark.parametrize("form", ["flags", "spec-file", "stack-file"])
@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_line_naming_the_key_exit_2_nothing_written(
    case: str, form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, key, valid = BAD_INPUTS[case]
    monkeypatch.chdir(tmp_path)
    args, prefix = _bad_input(form, spec, tmp_path)
    before = sorted(tmp_path.rglob("*"))
    for command in (["render", "all", "--out-dir", "out"], ["cabling", "--out", "cables.csv"]):
        r = CliRunner().invoke(main, [*command, *args])
        assert r.exit_code == 2, r.output
        lines = [x for x in r.output.splitlines() if x.strip()]
        assert len(lines) == 1 and "Traceback" not in r.output, r.output
        spelled = _camel(key) if form == "stack-file" else key
        assert lines[0].startswith(f"error: {prefix}{spelled}: "), lines[0]
        assert lines[0].endswith(valid), lines[0]
        assert sorted(tmp_path.rglob("*")) == before, f"{command[0]} wrote files"


# ----------------------------------------------------------------- BOM, layout, report


@pytest.mark.parametrize(
    "name", ["roce-800g-uplinks", "roce-rail-grouped", "ib-4planes-q3400-spines"]
)
def test_bom_layout_and_report_follow_the_tiers(name: str, tmp_path: Path) -> None:
    topo, _ = _plan(name)
    bom = _cli_json("bom", name)
    ordered_models: Counter[tuple[str, str]] = Counter()
    for s in bom["switches"]:
        for role, n in s["roles"].items():
            if role in ("leaf", "spine"):
                ordered_models[(role, s["model"])] += n
    # every leaf and spine counted under its own tier's model
    assert ordered_models == Counter((d.role, d.model) for d in topo.switches("leaf", "spine"))
    links = Counter((k.role, k.speed_gbps) for k in topo.links_of("node_leaf", "leaf_spine"))
    ordered: Counter[tuple[str, int]] = Counter()
    for c in bom["cables"]:
        if c["role"] in ("node_leaf", "leaf_spine"):
            ordered[(c["role"], c["speed_gbps"])] += c["links"]
    assert ordered == links
    layout = _cli_json("layout", name)
    assert layout["passed"] and layout["problems"] == []
    r = CliRunner().invoke(
        main, ["render", "report", *_flags(DESIGNS[name]), "--out-dir", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    html = (tmp_path / "report" / "design-report.html").read_text(encoding="utf-8")
    plan = topo.plan
    if plan.uplink_gbps != plan.link_gbps:
        leaf = plan.tier_plans[0]
        assert f"{leaf.ports_up} × {plan.uplink_gbps}G up" in html
    if plan.spine_grouping == "rail":
        assert "rail-grouped spines: each rail has its own spine group" in html
