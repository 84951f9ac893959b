"""The scenarios `make validate` renders: each family of rendered file on each fabric."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.artifacts import RenderContext, render_artifacts, write_artifacts


@dataclass(frozen=True, slots=True)
class Scenario:
    """A spec (plain data, as in a YAML file) and how its Kubernetes pods get the rails."""

    name: str
    spec: dict[str, Any]
    k8s_rdma: str = "sriov"
    targets: tuple[str, ...] = field(default=("all",))


ROCE = {"fabric": "roce", "switch": "sn5600"}
TRAY4 = {"gpus_per_node": 4}
"""A four-GPU compute tray with one NIC per GPU (GB300 class): four planes of its four rails
fit an SU's network rack (four planes of eight rails need 64 U of leaves there)."""
Q3400_SPINES = {"spine_switch": "q3400", "uplink_gbps": 400}

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("ib-seed", {}),
    Scenario(
        "ib-2planes-upstream",
        {"planes": 2, "infiniband": {"sm_location": "opensm-host", "opensm": "upstream"}},
    ),
    Scenario("dgx-h100-ib", {"node_profile": "dgx-h100"}),
    Scenario("dgx-h100-roce", {**ROCE, "node_profile": "dgx-h100"}),
    Scenario("roce-128", dict(ROCE)),
    Scenario("roce-1024", {**ROCE, "gpus": 1024}),
    Scenario("ethernet", {"fabric": "ethernet", "switch": "sn5600"}),
    Scenario("roce-p2p31", {**ROCE, "underlay": {"host_addressing": "p2p31"}}),
    Scenario("roce-host-device", dict(ROCE), k8s_rdma="host-device", targets=("kubernetes",)),
    Scenario("ib-ipoib", {}, k8s_rdma="ipoib", targets=("kubernetes",)),
    Scenario("roce-800g-uplinks", {**ROCE, "gpus": 1024, "uplink_gbps": 800}),
    Scenario("roce-4planes", {**ROCE, **TRAY4, "gpus": 256, "nic_gbps": 800, "planes": 4}),
    Scenario(
        "ib-4planes-q3400-spines",
        {**TRAY4, "gpus": 256, "nic_gbps": 800, "planes": 4, **Q3400_SPINES},
    ),
    Scenario(
        "roce-rail-grouped",
        {**ROCE, "gpus": 1024, "nic_gbps": 800, "su_nodes": 64, "spine_grouping": "rail"},
    ),
)
"""The matrix of issue #26: IB seed, IB 2 planes on upstream OpenSM, DGX H100 on IB and
RoCE, RoCE SN5600 at 128 and 1,024 GPUs, plain Ethernet, RoCE with ``p2p31`` hosts, and
the host-device and IPoIB Kubernetes variants; and issue #43's per-tier cases: RoCE leaves
with 400G downlinks and 800G uplinks (SONiC by dynamic port breakout: BREAKOUT_CFG per cage,
judged by SONiC's breakout code over the SN5600 platform.json), and
an 800G NIC as four 200G planes on four-GPU trays (RoCE at 200G on the V256 HwSKU, and
InfiniBand with NDR200 QM9700 leaves and NDR Q3400 spines); and issue #43's
rail-grouped RoCE fabric (the DGX B300 SuperPOD shape: 64-server SUs, two leaves per rail,
one spine group per rail)."""


def scenario_named(name: str) -> Scenario:
    """The scenario called ``name`` (KeyError names the valid ones)."""
    for s in SCENARIOS:
        if s.name == name:
            return s
    raise KeyError(f"unknown scenario {name!r}: one of {', '.join(s.name for s in SCENARIOS)}")


def render_scenario(scenario: Scenario, root: Path) -> list[Path]:
    """Render ``scenario``'s targets under ``root`` (replacing what was there)."""
    topo = build_topology(size_fabric(validate_spec(scenario.spec)))
    base = RenderContext.from_topology(topo)
    ctx = RenderContext(base.topo, base.intent, {}, {}, scenario.k8s_rdma)
    artifacts = [a for t in scenario.targets for a in render_artifacts(t, ctx)]
    return write_artifacts(artifacts, root)
