"""`render nccl`: one env file per fabric, every variable explained by a comment."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fabric_stack.artifacts import nccl
from tests.golden_artifacts import context, seed_context


def _env(text: str) -> dict[str, str]:
    """KEY=value lines; asserts the file is a valid env file (full-line comments only)."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        assert sep and key.isidentifier() and key.upper() == key, line
        assert key not in out, f"{key} set twice"
        assert lines[i - 1].startswith("# "), f"{key} has no comment"
        out[key] = value
    return out


def test_infiniband_seed() -> None:
    (art,) = nccl.render(seed_context("infiniband"))
    assert art.path == "nccl/infiniband.env"
    env = _env(art.content)
    assert env == {
        "NCCL_IB_HCA": "=" + ",".join(f"mlx5_{i}:1" for i in range(8)),
        "NCCL_SOCKET_IFNAME": "=mgmt1",
        "NCCL_CROSS_NIC": "0",
    }


def test_roce_seed() -> None:
    (art,) = nccl.render(seed_context("roce"))
    assert art.path == "nccl/roce.env"
    env = _env(art.content)
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert env["NCCL_IB_TC"] == "104"  # DSCP 26 << 2
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}:1" for i in range(8))
    assert "NCCL_COLLNET_ENABLE" not in env
    assert "trust dscp, PFC 0,0,0,1,0,0,0,0" in art.content
    assert "hosts/<server>.roce-qos.sh" in art.content


def test_sharp_enables_collnet() -> None:
    env = _env(nccl.render(context({"infiniband": {"sharp": True}}))[0].content)
    assert env["NCCL_COLLNET_ENABLE"] == "1" and env["SHARP_COLL_ENABLE_SAT"] == "1"


def test_dual_plane_lists_every_nic_in_rail_order() -> None:
    env = _env(nccl.render(context({"planes": 2, "nic_gbps": 800, "switch": "q3400"}))[0].content)
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}:1" for i in range(16))


def test_ethernet_uses_sockets_on_the_rails() -> None:
    (art,) = nccl.render(context({"fabric": "ethernet", "switch": "sn5600"}))
    env = _env(art.content)
    assert art.path == "nccl/ethernet.env"
    assert env["NCCL_IB_DISABLE"] == "1"
    assert env["NCCL_SOCKET_IFNAME"] == "=" + ",".join(f"rail{r}" for r in range(1, 9))
    assert "NCCL_IB_HCA" not in env


@settings(max_examples=30, deadline=None)
@given(dscp=st.integers(0, 63), prio=st.integers(0, 7))
def test_traffic_class_is_the_dscp_in_the_tos_byte(dscp: int, prio: int) -> None:
    # CNPs keep their default marking (DSCP 48, priority 6): the spec rejects a clash.
    assume(dscp != 48 and prio != 6)
    spec: dict[str, Any] = {
        "fabric": "roce",
        "switch": "sn5600",
        "gpus": 16,
        "roce": {"roce_dscp": dscp, "pfc_priorities": [prio]},
    }
    (art,) = nccl.render(context(spec))
    tc = int(_env(art.content)["NCCL_IB_TC"])
    assert tc >> 2 == dscp and tc & 0b11 == 0 and 0 <= tc <= 252
    pfc = ",".join("1" if i == prio else "0" for i in range(8))
    assert f"PFC {pfc}" in art.content


@pytest.mark.parametrize("dscp", [0, 26, 63])
def test_traffic_class_function(dscp: int) -> None:
    assert nccl.traffic_class(dscp) == dscp * 4
