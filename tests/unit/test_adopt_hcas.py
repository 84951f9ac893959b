"""Grouping factory-named HCAs into servers by the leaf-and-port pattern (issue 47)."""

from __future__ import annotations

from fabric_stack.drift.adopt_hcas import group_factory_hcas
from fabric_stack.drift.observation import Observation, ObservedDevice

MT = "mt4129 connectx7   mellanox technologies"


def _fabric(extra: list[tuple[str, str, str, str]]) -> Observation:
    obs = Observation("t", "t")
    for leaf in ("leaf-a", "leaf-b"):
        obs.devices[leaf] = ObservedDevice(leaf, "switch")
    cables = [
        ("n1", "HCA-1", "leaf-a", "1"),
        ("n1", "HCA-2", "leaf-b", "1"),
        ("n2", "HCA-1", "leaf-a", "2"),
        ("n4", "HCA-1", "leaf-a", "4"),
        ("n4", "HCA-2", "leaf-b", "4"),
        *extra,
    ]
    for a, _, _, _ in cables:
        if a.startswith("n"):
            obs.devices[a] = ObservedDevice(a, "server")
    for i, (a, _, _, _) in enumerate(cables):
        if a.startswith("mt"):
            obs.devices[a] = ObservedDevice(a, "server", [f"0x{i:016x}"])
    obs.cables = cables
    return obs


def test_a_factory_hca_joins_the_named_host_at_its_port_on_the_sibling_leaf() -> None:
    obs = _fabric([(f"{MT} aa", "1", "leaf-b", "2")])
    got = group_factory_hcas(obs)
    assert got.grouped == 1
    assert ("n2", "HCA-2", "leaf-b", "2") in got.obs.cables  # leaf-b's NIC, n2's name
    assert f"{MT} aa" not in got.obs.devices and got.obs.devices["n2"].guids
    assert got.basis["n2"][0] == "medium"
    assert f"{MT} aa" in obs.devices  # the input is left as it is


def test_factory_hcas_at_one_port_with_no_named_host_are_one_new_server() -> None:
    obs = _fabric([(f"{MT} aa", "1", "leaf-a", "3"), (f"{MT} bb", "1", "leaf-b", "3")])
    got = group_factory_hcas(obs)
    new = [d for d in got.obs.devices if d.startswith("mt4129-")]
    assert len(new) == 1 and got.basis[new[0]][0] == "low"
    assert sorted(p for a, p, _, _ in got.obs.cables if a == new[0]) == ["HCA-1", "HCA-2"]


def test_a_factory_hca_on_a_leaf_its_host_already_uses_is_not_grouped() -> None:
    # n1 is on leaf-b port 1 already: a second HCA there breaks the pattern
    obs = _fabric([(f"{MT} aa", "1", "leaf-a", "1"), (f"{MT} bb", "1", "leaf-b", "1")])
    got = group_factory_hcas(obs)
    assert got.grouped == 0 and f"{MT} aa" in got.obs.devices
