"""The compact bundle form round-trips every cable and NIC record exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.fabric import bundle_of
from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.intent.wire import decode_cables, decode_nics, encode_cables, encode_nics


@settings(max_examples=15, deadline=None)
@given(
    st.sampled_from(
        [
            {},
            {"planes": 2},
            {"gpus": 2056},
            {"fabric": "roce", "switch": "sn5600"},
            {"oversubscription": "2:1", "gpus": 512},
        ]
    )
)
def test_round_trip_per_bundle(spec: dict[str, object]) -> None:
    intent = derive_intent(build_topology(size_fabric(validate_spec(**spec))))
    by_dev: dict[tuple[str, str], list[dict[str, object]]] = {}
    for c in intent.cables:  # grouped as the Fabric component groups them
        by_dev.setdefault(bundle_of(c), []).append(c.props())
    for cables in by_dev.values():
        enc = encode_cables(cables)
        # every field shared: all lines (a fabric manager's cable differs in role: kept whole)
        assert all(
            isinstance(x, str)
            for x, c in zip(enc["cables"], cables, strict=True)
            if c["role"] != "manager_leaf"
        )
        assert decode_cables(enc) == cables
    nodes: dict[str, list[dict[str, object]]] = {}
    for n in intent.nics:
        nodes.setdefault(n.node, []).append(n.props())
    for nics in nodes.values():
        enc = encode_nics(nics)
        assert decode_nics(enc) == nics


def test_a_member_that_differs_is_kept_whole() -> None:
    intent = derive_intent(build_topology(size_fabric(validate_spec())))
    cables = [c.props() for c in intent.cables if c.b_device == "su1-r1-leaf"]
    cables[1] = {**cables[1], "a_speed_gbps": 200}
    enc = encode_cables(cables)
    assert isinstance(enc["cables"][1], dict) and isinstance(enc["cables"][0], str)
    assert decode_cables(enc) == cables


def test_bad_lines_are_reported() -> None:
    with pytest.raises(ValueError, match="is not 'a_device a_port -> b_device b_port'"):
        decode_cables({"shared": {}, "cables": ["su1-node01 mlx5_0"]})
    with pytest.raises(ValueError, match="malformed"):
        decode_nics({"shared": {"node": "n"}, "nics": ["mlx5_0 r1 -> leaf 1"]})
