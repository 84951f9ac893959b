"""The simulated whereabouts allocation (issue #26 item 3): whereabouts' order, and a
collision is a render error."""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.artifacts import k8s_ipam, kubernetes, kubernetes_bundle
from fabric_stack.artifacts.k8s_allocation import (
    PodAddressCollisionError,
    allocate,
    check_networks,
    prove_no_collision,
)
from fabric_stack.cli import main
from fabric_stack.errors import FabricStackError
from tests.golden_artifacts import context, seed_context


def test_lowest_free_first_skipping_excluded_subnets() -> None:
    ipam = {"range": "10.0.0.0/28", "exclude": ["10.0.0.1/32", "10.0.0.2/31", "10.0.0.8"]}
    a = allocate("n", ipam, 20)
    # .0 network, .1-.3 excluded, .8 excluded (bare IP = /32), .15 broadcast: 10 usable.
    assert a.addresses == tuple(f"10.0.0.{i}" for i in (4, 5, 6, 7, 9, 10, 11, 12, 13, 14))
    assert a.refused == 10


def test_range_start_and_end_narrow_the_range() -> None:
    a = allocate(
        "n", {"range": "10.0.0.0/24", "range_start": "10.0.0.100", "range_end": "10.0.0.101"}, 3
    )
    assert a.addresses == ("10.0.0.100", "10.0.0.101") and a.refused == 1


def test_the_issues_defect_is_a_render_error() -> None:
    # The old rail range: the whole /15, no exclusion: pod 1 took the gateway, 2-3 the hosts.
    ipam = {"range": "10.64.0.0/15"}
    alloc = allocate("rail1", ipam, 3)
    assert alloc.addresses == ("10.64.0.1", "10.64.0.2", "10.64.0.3")
    gw = re.escape("10.64.0.1, which is the leaf gateway")
    with pytest.raises(PodAddressCollisionError, match=gw):
        prove_no_collision(alloc, ipam, ("10.64.0.2", "10.64.0.3"), "10.64.0.1")
    with pytest.raises(FabricStackError, match="a host's own rail address"):
        prove_no_collision(alloc, ipam, ("10.64.0.2",), None)


@pytest.mark.parametrize("variant", ["roce", "roce-2su", "infiniband", "ethernet"])
def test_every_rendered_network_allocates_clean_for_every_vf(variant: str) -> None:
    eth = {"fabric": "ethernet", "switch": "sn5600"}
    ctx = context(eth) if variant == "ethernet" else seed_context(variant)
    nets = kubernetes.networks_of(ctx)
    allocs = check_networks(nets, kubernetes.num_vfs(ctx))  # raises on a collision
    assert len(allocs) == len(nets) and all(a.addresses for a in allocs)


def test_a_collision_fails_the_render() -> None:
    ctx = seed_context("roce")
    net = kubernetes.networks_of(ctx)[0]
    leaky = dict(net.ipam, exclude=[])  # as if the gateway and hosts were not excluded
    bad = type(net)(net.name, net.rail, net.su, net.leaf, leaky, net.hosts, net.servers)
    with pytest.raises(PodAddressCollisionError, match=net.name):
        kubernetes.network_note(ctx, bad, 8)


def test_pod_addresses_per_port_sizes_what_is_given() -> None:
    ctx = context({"fabric": "roce", "switch": "sn5600", "underlay": {"pod_addresses_per_port": 8}})
    (a, *_) = check_networks(kubernetes.networks_of(ctx), kubernetes.num_vfs(ctx))
    assert a.refused == 0  # 16 servers x 8 VFs fit the /24 block


def _ipam(prefix: int, excl: list[int]) -> dict[str, Any]:
    base = IPv4Network(f"10.1.0.0/{prefix}")
    return {"range": str(base), "exclude": [f"{base.network_address + e}/32" for e in excl]}


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.integers(min_value=22, max_value=30),
    data=st.data(),
    pods=st.integers(min_value=0, max_value=1100),
)
def test_property_never_an_excluded_or_repeated_address(prefix: int, data: Any, pods: int) -> None:
    size = 1 << (32 - prefix)
    excl = data.draw(st.lists(st.integers(min_value=0, max_value=size - 1), max_size=40))
    ipam = _ipam(prefix, excl)
    alloc = allocate("n", ipam, pods)
    net = IPv4Network(ipam["range"])
    got = [IPv4Address(a) for a in alloc.addresses]
    excluded = {net.network_address + e for e in excl}
    usable = [a for a in net.hosts() if a not in excluded]
    # Exactly whereabouts' order: the lowest free addresses, as many as fit.
    assert got == usable[:pods]
    assert alloc.refused == pods - len(got)
    hosts = tuple(str(a) for a in excluded if a in net)
    prove_no_collision(alloc, ipam, hosts, None)  # never raises on an excluded host


def test_bundle_renders_clean_on_the_matrix_shapes() -> None:
    for spec in ({"fabric": "roce", "switch": "sn5600", "gpus": 1024}, {}):
        ctx = context(spec)
        assert kubernetes_bundle.render(ctx)


def test_cli_exits_2_with_one_line_on_a_collision(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Plant the issue's defect in the generator: ranges without the gateway and hosts excluded.
    real = k8s_ipam.block_ipam

    def leaky(*args: Any) -> dict[str, Any]:
        return {k: v for k, v in real(*args).items() if k != "exclude"}

    monkeypatch.setattr(k8s_ipam, "block_ipam", leaky)
    out = tmp_path / "out"
    args = ["render", "kubernetes", "--fabric", "roce", "--switch", "sn5600", "--out-dir", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert "pod network rail1-su1" in line and "the leaf gateway (10.64.0.1)" in line
    assert not out.exists()  # nothing written
