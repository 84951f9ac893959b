"""The RoCE twin's host side against its switch side (#46): `twin check` compares the MTU of
both ends of every host link, read back from the kernel, and finds a planted mismatch.

The smallest RoCE twin (32 GPUs: 4 servers, one SU's switches). Needs root; skipped otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabric_stack.artifacts import RenderContext
from fabric_stack.twin.host_side import switch_mtus
from fabric_stack.twin.model import TwinState
from fabric_stack.twin.ops import topology_of
from fabric_stack.twin.runtime import netns_name
from tests.integration.twin.test_twin import ok, state_of, twin
from tests.integration.twin.test_twin import (
    twin_dir as twin_dir,  # the fixture (torn down whatever happens)
)

pytestmark = [
    pytest.mark.twin,
    pytest.mark.skipif(os.geteuid() != 0, reason="the twin needs root (network namespaces)"),
]


def check(d: Path) -> dict[str, Any]:
    res = twin("check", "--dir", str(d), "--format", "json")
    assert res.returncode in (0, 1), res.stderr
    report: dict[str, Any] = json.loads(res.stdout)
    return report


def test_a_host_mtu_below_plan_is_found_per_link(twin_dir: Path) -> None:
    ok(twin("up", "--fabric", "roce", "--switch", "sn5600", "--gpus", "32",
            "--dir", str(twin_dir)))  # fmt: skip
    state = TwinState.model_validate(state_of(twin_dir))
    ctx = RenderContext.from_topology(topology_of(state))
    report = check(twin_dir)
    links = report["host_links"]
    assert links["links"] == len(ctx.underlay.hosts) == 32
    assert links["agree"] == 32 and links["mismatches"] == [], links
    assert "not applied" in links["rdma_cm_tos"]
    # the leaf end carries the switch config's MTU, the host end render hosts' MTU
    h = ctx.underlay.hosts[5]
    leaf_ns = netns_name(state.tag, h.leaf)
    got = subprocess.run(["ip", "-j", "-n", leaf_ns, "link", "show", "dev", h.leaf_port],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert json.loads(got.stdout)[0]["mtu"] == switch_mtus(ctx)[h.leaf]
    # plant: one host NIC raised above its leaf port's MTU (a host tuned to 9216 by hand)
    host_ns = netns_name(state.tag, h.server)
    wrong = switch_mtus(ctx)[h.leaf] + 100
    subprocess.run(["ip", "-n", host_ns, "link", "set", "dev", h.nic, "mtu", str(wrong)],
                   check=True)  # fmt: skip
    report = check(twin_dir)
    assert report["ok"] is False
    (bad,) = report["host_links"]["mismatches"]
    assert (bad["host"], bad["leaf"]) == (f"{h.server}:{h.nic}", f"{h.leaf}:{h.leaf_port}")
    assert bad["host_mtu"] == wrong and "full-size frames are dropped" in bad["why"]
    ok(twin("down", "--dir", str(twin_dir)))
