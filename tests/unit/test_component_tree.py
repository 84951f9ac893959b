"""The Fabric component's resource tree under Pulumi mocks (no engine, no provider CRUD)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pulumi
import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.intent.wire import record_of


class Mocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.resources: list[tuple[str, str, dict[str, Any], str | None]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append((args.typ, args.name, dict(args.inputs), args.resource_id))
        return f"{args.name}-id", dict(args.inputs)

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


@pytest.fixture
def mocks() -> Mocks:
    m = Mocks()
    pulumi.runtime.set_mocks(m, project="fabric-stack", stack="unit", preview=True)
    return m


def _build(mocks: Mocks, granularity: str, **spec: Any):  # type: ignore[no-untyped-def]
    from components.fabric import FabricComponent

    intent = derive_intent(build_topology(size_fabric(validate_spec(**spec))))
    comp = FabricComponent("gpu-cluster", intent, "sqlite:///unused.db", granularity)  # type: ignore[arg-type]
    return intent, comp


@pulumi.runtime.test
def test_bundle_tree(mocks: Mocks) -> Any:
    intent, comp = _build(mocks, "bundle", gpus=512)

    def check(_: Any) -> None:
        types = Counter(t for t, *_ in mocks.resources)
        p = "pulumi-python:dynamic/fabric:"
        assert types[p + "Switch"] == len(intent.switches) == 16 + 8 + 8
        assert types[p + "Fabric"] == 1
        assert types[p + "Rail"] == 8 and types[p + "Vlan"] == 4
        # one per server: 64 positions, one given to the two UFMs (the RA rule)
        assert types[p + "RdmaNicGroup"] == 63
        # one bundle per switch side: 16 leaves x (down, up) + 8 access switches x down
        assert types[p + "CableBundle"] == 16 * 2 + 8
        assert types["fabric-stack:index:ScalableUnit"] == 2
        assert types["fabric-stack:index:SpineLayer"] == 1
        bundles = [record_of(i) for t, _, i, _ in mocks.resources if t == p + "CableBundle"]
        assert sum(b["count"] for b in bundles) == len(intent.cables)
        assert all(len(b["cables"]) == b["count"] for b in bundles)
        # every resource carries its record as one JSON text, where it is kept
        # (inventory URL and stack), and its own serialized provider: nothing else
        for t, name, inputs, _ in mocks.resources:
            if t.startswith(p):
                assert set(inputs) == {"record", "inventory", "__provider"}, name
                assert inputs["inventory"] == {"url": "sqlite:///unused.db", "stack": "unit"}
                assert inputs["__provider"]
                assert record_of(inputs)["name"] == name
        # a switch's record holds the fields the policies judge
        sw = next(record_of(i) for t, n, i, _ in mocks.resources if n == "su1-r3-leaf")
        assert sw == intent.switches[[s.name for s in intent.switches].index("su1-r3-leaf")].props()

    return pulumi.Output.all(*[r.urn for r in comp.resources]).apply(check)


@pulumi.runtime.test
def test_cable_granularity_tree(mocks: Mocks) -> Any:
    intent, comp = _build(mocks, "cable")

    def check(_: Any) -> None:
        types = Counter(t for t, *_ in mocks.resources)
        p = "pulumi-python:dynamic/fabric:"
        assert types[p + "Cable"] == len(intent.cables) == 448 + 2  # + UFM-to-leaf cables
        assert types[p + "RdmaNic"] == 128
        names = {n for t, n, *_ in mocks.resources if t == p + "Cable"}
        assert "su1-node07:mlx5_3" in names and "su1-r1-leaf:1/17/1" in names

    return pulumi.Output.all(*[r.urn for r in comp.resources]).apply(check)


@pulumi.runtime.test
def test_dgx_h100_records_carry_the_real_names(mocks: Mocks) -> Any:
    _, comp = _build(mocks, "cable", node_profile="dgx-h100")

    def check(_: Any) -> None:
        p = "pulumi-python:dynamic/fabric:"
        nics = {record_of(i)["nic"] for t, _, i, _ in mocks.resources if t == p + "RdmaNic"}
        assert nics == {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9"} | {
            "mlx5_10",
            "mlx5_11",
        }
        cables = {n for t, n, *_ in mocks.resources if t == p + "Cable"}
        assert "su1-node07:mlx5_11" in cables and "su1-node07:mlx5_7" not in cables
        assert "su1-node07:enp41s0f0np0" in cables  # storage port by its netdev
        fabric = next(record_of(i) for t, _, i, _ in mocks.resources if t == p + "Fabric")
        assert fabric["spec"]["node_profile"]["name"] == "dgx-h100"

    return pulumi.Output.all(*[r.urn for r in comp.resources]).apply(check)
