"""Other hosts on compute leaves (issue 47): by name, and by more HCAs than the compute majority."""

from __future__ import annotations

from fabric_stack.drift.adopt_others import other_hosts
from fabric_stack.drift.observation import Observation, ObservedDevice


def _fabric(hosts: dict[str, int]) -> Observation:
    """One leaf; host → its number of HCA cables (ports numbered in order)."""
    obs = Observation("ibnetdiscover", "test")
    obs.devices["leaf1"] = ObservedDevice("leaf1", "switch")
    port = 0
    for h, n in hosts.items():
        obs.devices[h] = ObservedDevice(h, "server")
        for i in range(n):
            port += 1
            obs.cables.append((h, f"mlx5_{i}", "leaf1", str(port)))
    return obs


def test_named_and_wider_hosts_are_other_with_their_leaf_port() -> None:
    obs = _fabric({"cn01": 1, "cn02": 1, "cn03": 1, "cn04": 1, "ufm01": 1, "lustre-oss1": 1,
                   "big01": 2, "cn05": 0})  # fmt: skip
    got = {o.device: o for o in other_hosts(obs, managers={"ufm01"})}
    assert set(got) == {"lustre-oss1", "big01"}  # a UFM host at a manager seat stays one
    assert (got["lustre-oss1"].leaf, got["lustre-oss1"].port) == ("leaf1", "6")
    assert "2 fabric cable(s) where most hosts have 1" in got["big01"].why
    # a host with fewer cables (one down) is a compute host, left to drift
    assert "cn05" not in got


def test_a_storage_host_on_a_manager_seat_is_still_other() -> None:
    obs = _fabric({"cn01": 1, "cn02": 1, "bee01": 1, "ufm1": 1})
    assert [o.device for o in other_hosts(obs, managers={"bee01"})] == ["bee01", "ufm1"]
