"""Drift judges InfiniBand links by the generation the plan means, on real dumps of each.

The dumps live in ``../shared/realdata/ibnetdiscover`` (provenance in its SOURCES.md).
A plan is built here from a dump's own cables (:func:`plan_of`) with the speed each cable
is *planned* at chosen by the test, so what is tested is how drift reads the observed
rate against that speed, never an echo of the file. Counts were read off the files by
eye; each names its line and :func:`line` checks the line still says so.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from fabric_stack.adapters.discovery import IbnetdiscoverReader
from fabric_stack.drift import compute_drift
from fabric_stack.drift.identity import hca_to_ibdev, is_factory_desc
from fabric_stack.drift.model import ObservedLink, Snapshot
from fabric_stack.drift.plan import PlanIndex, PortScheme, infer_schemes
from fabric_stack.hardware.ib_links import BY_NAME, generation_of_lane, planned_rates, rate_gbps
from fabric_stack.topology.model import Link

REPO = Path(__file__).resolve().parents[2]
REAL = next(
    (
        p
        for p in (REPO.parent / "shared" / "realdata", REPO.parent.parent / "shared" / "realdata")
        if p.is_dir()
    ),
    REPO.parent / "shared" / "realdata",
)
IB = REAL / "ibnetdiscover"
NDR = IB / "topograph-ndr-dgx-example.out"

pytestmark = pytest.mark.skipif(
    not REAL.is_dir() and not os.environ.get("CI"), reason="../shared/realdata not found"
)


def line(path: Path, n: int, text: str) -> None:
    """Line ``n`` of ``path`` says ``text``."""
    assert text in path.read_text(encoding="utf-8").splitlines()[n - 1]


def plan_of(
    snap: Snapshot,
    speed: Callable[[ObservedLink], int],
    keep: Callable[[ObservedLink], bool] = lambda _: True,
) -> list[Link]:
    """A bare plan of the dump's cables (those ``keep`` accepts), each at ``speed(link)``."""
    kinds = {k: v.kind for k, v in snap.devices.items()}
    out: list[Link] = []
    for lk in snap.links:
        if not keep(lk):
            continue
        a, b = lk.a, lk.b
        if kinds.get(a.device) == "switch" and kinds.get(b.device) == "server":
            a, b = b, a
        if kinds.get(a.device) == "server":
            port = hca_to_ibdev(a.port) or a.port
            out.append(
                Link(
                    f"{a.device}:{port}",
                    "node_leaf",
                    "compute",
                    a.device,
                    port,
                    0,
                    b.device,
                    f"p{b.port}",
                    int(b.port),
                    speed(lk),
                )
            )
        else:
            out.append(
                Link(
                    f"{a.device}:{a.port}",
                    "leaf_spine",
                    "compute",
                    a.device,
                    f"p{a.port}",
                    int(a.port),
                    b.device,
                    f"p{b.port}",
                    int(b.port),
                    speed(lk),
                )
            )
    return out


def with_model(links: list[Link], model: str) -> PlanIndex:
    """Index ``links`` with every switch of the catalog ``model`` (its port modes)."""
    schemes = {
        d: PortScheme(s.os_family, s.ports_per_cage, 0, 0, model)
        for d, s in infer_schemes(links).items()
    }
    return PlanIndex(links, schemes)


# ----------------------------------------------------------------------- the table


@pytest.mark.parametrize(
    ("name", "lane", "encoding"),
    [
        ("SDR", 2.5, "8b/10b"),
        ("DDR", 5, "8b/10b"),
        ("QDR", 10, "8b/10b"),
        ("FDR10", 10, "64b/66b"),
        ("FDR", 14, "64b/66b"),
        ("EDR", 25, "64b/66b"),
        ("HDR", 50, "64b/66b"),
        ("NDR", 100, "64b/66b"),
        ("XDR", 200, "64b/66b"),
    ],
)
def test_generation_table(name: str, lane: float, encoding: str) -> None:
    g = BY_NAME[name]
    assert (g.lane_gbps, g.encoding) == (lane, encoding)
    assert g.data_gbps <= g.signalling_gbps
    assert rate_gbps(4, name) == 4 * lane


@pytest.mark.parametrize(
    ("speed", "mode", "rates"),
    [
        (100, "", ("4xEDR", "2xHDR")),  # generic 100G: EDR, or HDR100 on a split port
        (200, "", ("4xHDR", "2xNDR")),
        (400, "", ("4xNDR",)),
        (800, "", ("4xXDR",)),
        (56, "", ("4xFDR",)),
        (40, "", ("4xQDR", "4xFDR10")),
        (20, "", ("4xDDR",)),
        (400, "NDR", ("4xNDR",)),  # QM9700 modes (hardware/switches.py)
        (200, "NDR200", ("2xNDR",)),
        (800, "XDR", ("4xXDR",)),
        (400, "400G", ("4xNDR",)),  # an Ethernet-style mode name: by speed
        (25, "", ()),
    ],
)
def test_planned_rates(speed: int, mode: str, rates: tuple[str, ...]) -> None:
    assert planned_rates(speed, mode) == rates


_IBLINK = re.compile(r"==\(\s*(\d+)X\s+([\d.]+) Gbps")


@pytest.mark.parametrize(
    ("name", "rates"),
    [
        # Line 2: `==( 4X 10.0 Gbps Active/ LinkUp)==>`: 8 QDR link lines, switch and CAs.
        ("iblinkinfo-infiniscale-iv-4node.txt", {"4xQDR": 8}),
        # `4X 25.78125 Gbps`: the MSB7700's 4 active EDR lines (the `Down/ Polling` ports
        # print no rate).
        ("iblinkinfo-msb7700-edr-2node.txt", {"4xEDR": 4}),
    ],
)
def test_iblinkinfo_lane_rates_name_their_generation(name: str, rates: dict[str, int]) -> None:
    text = (REAL / "iblinkinfo" / name).read_text(encoding="utf-8")
    seen = Counter(
        f"{m.group(1)}x{generation_of_lane(float(m.group(2)))}" for m in _IBLINK.finditer(text)
    )
    assert seen == rates
    assert planned_rates(rate_gbps(4, next(iter(rates))[2:]))[0] == next(iter(rates))


# ----------------------------------------------------------------------- EDR / FDR


def test_edr_and_fdr_links_of_a_real_lab_fabric_are_healthy() -> None:
    path = IB / "arthurtumanyan-small_topo_file.txt"
    # Lines 12-13: r-dcs96's two EDR HCAs on the MQM8700; line 11: an FDR cable; 15 cables
    # compared (12 FDR, 2 EDR, 1 FDR10; the HDR line 14 is the switch's own SHARP node).
    line(path, 12, '"r-dcs96 HCA-1" lid 9 4xEDR')
    line(path, 13, '"r-dcs96 HCA-2" lid 28 4xEDR')
    line(path, 28, '"MF0;r-ufm-sw226:SX6036/U1" lid 19 4xFDR10')
    snap = IbnetdiscoverReader(path).load()
    assert Counter(lk.rate for lk in snap.links) == {"4xFDR": 12, "4xEDR": 2, "4xFDR10": 1}
    # An EDR NIC is planned at 100G and FDR cables at 56G (generic switches: the catalog has
    # no MQM8700/SX6036): before issue 28 every 4xEDR here said "planned 1xNDR (100 Gb/s)".
    plan = plan_of(snap, lambda lk: 100 if lk.rate == "4xEDR" else 56)
    report = compute_drift(plan, snap)
    speed = [f for f in report.findings if f.kind == "speed_mismatch"]
    # The one FDR10 cable (line 28, the SX6036 looped port 25 to 26) runs 40 of 56 Gb/s.
    assert [f.summary for f in speed] == [
        "r-ufm-sw226 p25 (port 25) ↔ r-ufm-sw226 p26 (port 26) runs 4xFDR10 (40 Gb/s), "
        "planned 4xFDR (56 Gb/s)"
    ]
    assert report.summary["total"] == 1


def test_edr_hcas_on_a_planned_hdr_leaf_are_findings() -> None:
    # The MQM8700 is an HDR switch: planned at 200G, r-dcs96's EDR HCAs (lines 12-13) run
    # half the rate, each a speed finding naming the HDR lanes the plan means.
    snap = IbnetdiscoverReader(IB / "arthurtumanyan-small_topo_file.txt").load()
    plan = plan_of(snap, lambda lk: 200 if lk.rate == "4xEDR" else 56)
    speed = [f for f in compute_drift(plan, snap).findings if f.kind == "speed_mismatch"]
    edr = [f.summary for f in speed if "4xEDR" in f.summary]
    assert len(edr) == 2
    assert all("runs 4xEDR (100 Gb/s), planned 4xHDR (200 Gb/s)" in s for s in edr)


def test_switchib_edr_fabric_is_healthy() -> None:
    path = IB / "jabl-ibtopotool-3.topo"
    # A 2016 SwitchIB lab: 4 EDR cables, 3 FDR, 2 QDR, 1 SDR (8/6/4/2 port lines, each
    # cable listed from both ends); line 12 is one of the EDR HCAs.
    snap = IbnetdiscoverReader(path).load()
    rates = Counter(lk.rate for lk in snap.links)
    assert rates == {"4xEDR": 4, "4xFDR": 3, "4xQDR": 2, "4xSDR": 1}
    gbps = {"4xEDR": 100, "4xFDR": 56, "4xQDR": 40, "4xSDR": 10}
    plan = plan_of(snap, lambda lk: gbps[lk.rate or ""])
    assert compute_drift(plan, snap).findings == []


# ----------------------------------------------------------------------- NDR


def test_ndr_dgx_fabric_is_healthy_on_qm9700_ndr_and_wrong_on_ndr200() -> None:
    line(NDR, 51, '"a06-p1-dgx-02-c01 HCA-6" lid 522 4xNDR')
    snap = IbnetdiscoverReader(NDR).load()
    # 1,074 cables compared, all 4xNDR (2,228 4xNDR port lines, minus the 40 internal
    # SHARP links the reader folds away).
    assert Counter(lk.rate for lk in snap.links) == {"4xNDR": 1074}
    plan = plan_of(snap, lambda _: 400)
    report = compute_drift(with_model(plan, "qm9700"), snap)
    assert report.findings == []
    # The same cables planned as QM9700 NDR200 ports: same generation, half the lanes.
    report = compute_drift(with_model(plan_of(snap, lambda _: 200), "qm9700"), snap)
    assert report.summary["speed_mismatch"] == 1074
    assert "planned 2xNDR (200 Gb/s)" in report.findings[0].summary


# ----------------------------------------------------------------------- unplanned cables


def test_unplanned_ddr_cables_are_also_speed_findings() -> None:
    path = IB / "ltaulell-X5.topofile"
    # A QDR cluster (Voltaire 4036 "36 QDR ports switch", line 10) with 23 DDR cables
    # (46 port lines, line 14 the first): plan only the QDR cables, at 40G.
    line(path, 10, '"Voltaire 4036 - 36 QDR ports switch"')
    line(path, 14, "4xDDR")
    snap = IbnetdiscoverReader(path).load()
    plan = plan_of(snap, lambda _: 40, keep=lambda lk: lk.rate == "4xQDR")
    report = compute_drift(plan, snap)
    speed = [f for f in report.findings if f.kind == "speed_mismatch"]
    assert len(speed) == 23
    assert all(
        "runs 4xDDR (20 Gb/s)" in f.summary and "4xQDR (40 Gb/s)" in f.summary for f in speed
    )
    # ... and each cable is still reported as not in the plan (here inside the finding
    # of its unplanned HCA).
    assert all(not f.expected for f in speed)


# ----------------------------------------------------------------------- one identity


def site_plan(snap: Snapshot) -> list[Link]:
    """The NDR site's own convention: leaf port p serves host ``<row>-c<p>``, on the NIC the
    leaf's named hosts use (the majority); UFM and other hosts as they are seen."""
    kinds = {k: v.kind for k, v in snap.devices.items()}
    by_leaf: dict[str, list[tuple[int, ObservedLink]]] = {}
    for lk in snap.links:
        for sw, h in ((lk.a, lk.b), (lk.b, lk.a)):
            if kinds.get(sw.device) == "switch" and kinds.get(h.device) == "server":
                by_leaf.setdefault(sw.device, []).append((int(sw.port), lk))
    hosts: dict[tuple[str, int], tuple[str, str]] = {}
    for leaf, rows in by_leaf.items():
        named = [
            (p, h)
            for p, lk in rows
            for h in (lk.a, lk.b)
            if h.device != leaf and not is_factory_desc(h.device)
        ]
        nic = Counter(hca_to_ibdev(h.port) or h.port for _, h in named).most_common(1)[0][0]
        row = Counter(h.device.rsplit("-c", 1)[0] for _, h in named).most_common(1)[0][0]
        for p, lk in rows:
            h = lk.b if lk.a.device == leaf else lk.a
            mine = h.device.startswith(row) or is_factory_desc(h.device)
            hosts[(leaf, p)] = (
                (f"{row}-c{p:02d}", nic) if mine else (h.device, hca_to_ibdev(h.port) or h.port)
            )
    out = plan_of(
        snap,
        lambda _: 400,
        keep=lambda lk: kinds.get(lk.a.device) == kinds.get(lk.b.device) == "switch",
    )
    for (leaf, p), (host, nic) in sorted(hosts.items()):
        out.append(
            Link(f"{host}:{nic}", "node_leaf", "compute", host, nic, 0, leaf, f"p{p}", p, 400)
        )
    return out


def test_hcas_with_a_factory_nodedesc_are_their_host_once() -> None:
    # 69 `Ca` blocks say "MT4129 ConnectX7   Mellanox Technologies" (grep -c); line 55:
    # leaf IBLEAF-04-02 port 6 holds one, where a06-p1-dgx-02-c06 is due (its other three
    # HCAs are factory-named too: lines 94, and on leaves 02-02 and 03-02). Line 1140:
    # "localhost HCA-6" at port 10 of IBLEAF-04-01, a host whose name was never set.
    line(NDR, 55, '"MT4129 ConnectX7   Mellanox Technologies" lid 515 4xNDR')
    line(NDR, 94, '"MT4129 ConnectX7   Mellanox Technologies" lid 508 4xNDR')
    line(NDR, 1140, '"localhost HCA-6" lid 112 4xNDR')
    snap = IbnetdiscoverReader(NDR).load()
    factory = [d for d in snap.devices if d.startswith("MT4129 ConnectX7")]
    assert len(factory) == 69
    index = with_model(site_plan(snap), "qm9700")
    report = compute_drift(index, snap)
    by_kind = Counter(f.kind for f in report.findings)
    nodedesc = [f for f in report.findings if f.kind == "attribute_changed"]
    # 66 factory HCAs and localhost's 3 bound: 19 hosts with factory NodeDescs, 1 localhost.
    assert len(nodedesc) == 20
    c06 = next(f for f in nodedesc if f.summary.startswith("a06-p1-dgx-02-c06:"))
    assert "4 HCAs report the NodeDesc 'MT4129 ConnectX7 Mellanox Technologies'" in c06.summary
    assert "0xe09d730300858d88" in c06.summary  # line 55's GUID, bound to mlx5_5
    assert "rdma-ndd" in c06.fix and "the cabling is as planned" in c06.fix
    loc = next(f for f in nodedesc if f.summary.startswith("a05-p1-dgx-01-c10:"))
    assert "hostnamectl set-hostname a05-p1-dgx-01-c10" in loc.fix
    # None of them is a missing host any more, nor a device to disconnect; what is left is
    # wiring: 3 factory HCAs sit on a port another host's NIC is miscabled into (lines
    # 1184-1185: c12's HCA-2 on port 11, a factory HCA on port 12), so they stay unbound
    # and reported; "ubuntu mlx5_0/1" (lines 144, 188) names ports the plan does not have.
    missing = [f.summary for f in report.findings if f.kind == "missing_device"]
    assert missing == ["b08-p1-dgx-08-c21 is planned but was not seen (2 planned links not seen)"]
    strangers = sorted(
        f.summary.split(" is not")[0] for f in report.findings if f.kind == "unexpected_device"
    )
    assert len([s for s in strangers if s.startswith("MT4129")]) == 3
    assert "ubuntu" in strangers and len(strangers) == 4
    assert by_kind["wrong_peer"] == 5 and by_kind["speed_mismatch"] == 0


def test_drift_on_the_ndr_dump_stays_fast() -> None:
    snap = IbnetdiscoverReader(NDR).load()
    index = with_model(site_plan(snap), "qm9700")
    t = time.perf_counter()
    compute_drift(index, snap)
    assert time.perf_counter() - t < 2.0  # measured 0.14 s (see the commit); bench: < 5 s


# ----------------------------------------------------------------------- spec-built plans


def observed(index: PlanIndex, rate_of: Callable[[Link], str]) -> Snapshot:
    """Every planned compute cable observed, each at ``rate_of(link)`` (an IB source)."""
    from fabric_stack.drift.model import Endpoint
    from fabric_stack.drift.speeds import ib_speed

    links = []
    for lk in index.links:
        if lk.network != "compute":
            continue
        rate = rate_of(lk)
        links.append(
            ObservedLink(
                Endpoint(lk.a_device, lk.a_port),
                Endpoint(lk.b_device, lk.b_port),
                speed_gbps=ib_speed(rate),
                width=rate[: rate.index("x") + 1],
                rate=rate,
            )
        )
    return Snapshot("ibnetdiscover", "memory", links, networks=frozenset({"compute"}))


def test_a_spec_planned_edr_fabric_means_4x_edr() -> None:
    from tests.drift_fixtures import topology

    # The catalog has no EDR switch: an EDR fabric is a generic 100G InfiniBand switch.
    topo = topology(
        {"gpus": 16, "gpus_per_node": 1, "rails": 1, "nic_gbps": 100, "switch": "generic-36x100"}
    )
    index = PlanIndex.from_topology(topo)
    assert compute_drift(index, observed(index, lambda _: "4xEDR")).findings == []
    assert compute_drift(index, observed(index, lambda _: "2xHDR")).findings == []  # HDR100
    first = next(lk for lk in index.links if lk.role == "node_leaf")
    snap = observed(index, lambda lk: "1xNDR" if lk is first else "4xEDR")
    (f,) = compute_drift(index, snap).findings
    assert f.kind == "speed_mismatch"
    assert "runs 1xNDR (100 Gb/s), planned 4xEDR (100 Gb/s)" in f.summary
    assert f.changes == ["rate: '4xEDR' → '1xNDR'"]


def test_a_qm9700_ndr200_plan_means_2x_ndr() -> None:
    from tests.drift_fixtures import topology

    index = PlanIndex.from_topology(topology({"gpus": 128, "nic_gbps": 200}))
    assert compute_drift(index, observed(index, lambda _: "2xNDR")).findings == []
    report = compute_drift(index, observed(index, lambda _: "4xHDR"))  # 200 Gb/s, HDR lanes
    assert report.summary["speed_mismatch"] == report.summary["total"] > 0
    assert "runs 4xHDR (200 Gb/s), planned 2xNDR (200 Gb/s)" in report.findings[0].summary
