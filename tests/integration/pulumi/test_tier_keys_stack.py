"""`pulumi preview` of a stack whose ``fabric:`` config sets the per-tier keys (#43).

The stack says, in camelCase, SN5600 leaves serving 400G NICs with 800G uplinks to SN5600
spines (``fabric:uplinkGbps: 800``, ``fabric:spineSwitch: sn5600``). The real engine's
preview must carry what the plan says: every leaf-spine cable at 800G (half as many as at
400G), the hosts' cables at 400G, each switch record with its tier's model and speeds.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.intent.wire import decode_cables, record_of
from tests.pulumi_project import make_project, preview_steps, pulumi

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

SPEC = {"gpus": 128, "fabric": "roce", "switch": "sn5600", "uplink_gbps": 800}


def test_preview_carries_each_links_speed_and_each_tiers_model(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    proj = make_project(tmp_path)
    pulumi(proj, pulumi_env, "stack", "init", "tiers")
    settings = {
        "fabric:gpus": "128",
        "fabric:fabric": "roce",
        "fabric:switch": "sn5600",
        "fabric:spineSwitch": "sn5600",
        "fabric:uplinkGbps": "800",
        "fabric:configRecords": "false",
        "fabric:inventory": f"sqlite:///{tmp_path / 'inventory.db'}",
    }
    for key, value in settings.items():
        pulumi(proj, pulumi_env, "config", "set", key, value)
    steps = preview_steps(proj, pulumi_env)
    assert {s["op"] for s in steps} <= {"create", "same"}
    records = []
    for step in steps:
        state = step.get("newState") or {}
        kind = step.get("type") or state.get("type", "")
        if kind.startswith("pulumi-python:dynamic/fabric:"):
            records.append((kind.rsplit(":", 1)[-1], record_of(state["inputs"])))
    cables = [c for kind, r in records if kind == "CableBundle" for c in decode_cables(r)]
    topo = build_topology(size_fabric(validate_spec(**SPEC)))
    planned = {k.id: k.speed_gbps for k in topo.links}
    assert {c["name"]: c["a_speed_gbps"] for c in cables} == planned
    by_role = Counter((c["role"], c["a_speed_gbps"]) for c in cables)
    # A partial SU gets its full uplinks: 8 leaves × 32 800G cages (64 400G ports' worth).
    assert by_role[("leaf_spine", 800)] == topo.plan.cables.leaf_spine == 256
    assert by_role[("node_leaf", 400)] == 128 and ("leaf_spine", 400) not in by_role
    switches = {r["name"]: r for kind, r in records if kind == "Switch"}
    leaf, spine = switches["su1-r1-leaf"], switches["spine-01"]
    assert (leaf["model"], leaf["port_gbps"], leaf["up_gbps"]) == ("sn5600", 400, 800)
    assert (spine["model"], spine["port_gbps"]) == ("sn5600", 800)
