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

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.discovery import IbnetdiscoverReader, LldpReader
from fabric_stack.cli import main
from fabric_stack.drift import PlanIndex
from fabric_stack.drift.adopt import adopt, observation_from_snapshot
from fabric_stack.drift.identity import Identity
from fabric_stack.files.names_file import write_names
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
