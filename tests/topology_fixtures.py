"""Shared helpers for the topology, export, BOM and diagram tests: specs and cached builds."""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology

Spec = tuple[tuple[str, Any], ...]
"""A spec as a hashable tuple of (field, value) pairs, so builds can be cached."""


def spec_key(**kw: Any) -> Spec:
    """Hashable form of spec keyword arguments."""
    return tuple(sorted(kw.items()))


@cache
def topo_for(key: Spec) -> FabricTopology:
    """The topology of a spec (built once per test session)."""
    return build_topology(size_fabric(validate_spec(**dict(key))))


def topo(**kw: Any) -> FabricTopology:
    """The topology of ``validate_spec(**kw)`` (cached)."""
    return topo_for(spec_key(**kw))


# Families of valid specs. Each draws a GPU count that fits its fabric and keeps builds
# small enough (≤ 8,192 GPUs) for property tests on a 2-core machine.
_ib_two_tier = st.builds(lambda n: spec_key(gpus=8 * n), st.integers(min_value=1, max_value=256))
_ib_three_tier = st.builds(
    lambda n: spec_key(gpus=8 * n), st.integers(min_value=257, max_value=1024)
)
_oversubscribed = st.builds(
    lambda n, r: spec_key(gpus=8 * n, oversubscription=r),
    st.integers(min_value=1, max_value=400),
    st.sampled_from(["2:1", "3:1", "5:3"]),
)
_dual_plane = st.builds(
    lambda n: spec_key(gpus=8 * n, planes=2), st.integers(min_value=1, max_value=300)
)
_roce = st.builds(
    lambda n, g: spec_key(gpus=8 * n, fabric="roce", switch="sn5600", nic_gbps=g),
    st.integers(min_value=1, max_value=512),
    st.sampled_from([400, 800]),
)
_small_su = st.builds(
    lambda n, su: spec_key(gpus=8 * n, su_nodes=su),
    st.integers(min_value=1, max_value=128),
    st.integers(min_value=1, max_value=32),
)
_generic = st.builds(
    lambda n: spec_key(gpus=8 * n, switch="generic-32x400"), st.integers(min_value=1, max_value=256)
)

any_spec = st.one_of(
    _ib_two_tier, _ib_three_tier, _oversubscribed, _dual_plane, _roce, _small_su, _generic
)
"""Varied valid specs: IB 2 and 3 tiers, 2:1/3:1, dual-plane, RoCE on SN5600, small SUs."""

small_spec = st.one_of(
    _ib_two_tier,
    _dual_plane,
    _roce.filter(lambda k: dict(k)["gpus"] <= 4096),
    _small_su,
    _generic,
    _oversubscribed.filter(lambda k: dict(k)["gpus"] <= 4096),
)
"""Specs small enough (≤ 512 servers) for the min-cut check."""
