"""Shared fixtures of the policy tests: intents from real specs, mutations, SDK-shaped resources.

Intents come from the real pipeline (spec → size → topology → intent); the
"hand-mutated" ones change one record with ``model_copy`` so a test breaks a
rule the pipeline never breaks by itself (a miswired NIC, a slow cable end).
Resources for the CrossGuard wrappers go through the same protobuf Struct →
``deserialize_properties`` → ``unknown_checking_proxy`` path the SDK uses, so
numbers arrive as floats and lists as proxies, as in a real preview.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.intent.model import FabricIntent
from fabric_stack.intent.wire import record_text

TYPE = "pulumi-python:dynamic/fabric:"

OPTS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)
"""Resource options of every test resource (the defaults a preview sends)."""

BAD_PCIE_PROFILE: dict[str, Any] = {
    "name": "odd-8gpu",
    "description": "NIC 1 sits under pcie1 while GPU 1 is under pcie0",
    "gpus": 8,
    "rdma_nics": 8,
    "pcie_switches": [
        {"name": "pcie0", "numa": 0, "gpus": [0, 1], "nics": [0]},
        {"name": "pcie1", "numa": 0, "gpus": [2, 3], "nics": [1, 2, 3]},
        {"name": "pcie2", "numa": 1, "gpus": [4, 5], "nics": [4, 5]},
        {"name": "pcie3", "numa": 1, "gpus": [6, 7], "nics": [6, 7]},
    ],
}
"""A node profile whose PCIe map puts NIC 1 under another switch than GPU 1."""

ROCE: dict[str, Any] = {"fabric": "roce", "switch": "sn5600"}
"""The seed cluster on RoCEv2 (Spectrum-4 at 400G)."""


def _key(spec: Mapping[str, Any]) -> str:
    import json

    return json.dumps(spec, sort_keys=True)


@cache
def _intent(key: str) -> FabricIntent:
    import json

    spec = validate_spec(json.loads(key))
    return derive_intent(build_topology(size_fabric(spec)))


def intent_for(**spec: Any) -> FabricIntent:
    """The intent of a spec through the real pipeline (cached: intents are immutable)."""
    return _intent(_key(spec))


def replace(
    intent: FabricIntent, field: str, match: Callable[[Any], bool], **update: Any
) -> FabricIntent:
    """A copy of ``intent`` whose records in ``field`` matching ``match`` get ``update``."""
    recs = getattr(intent, field)
    hits = [r for r in recs if match(r)]
    assert hits, f"no {field} record matched"
    new = tuple(r.model_copy(update=update) if match(r) else r for r in recs)
    return intent.model_copy(update={field: new})


def by_name(name: str) -> Callable[[Any], bool]:
    """Record matcher on the name field."""
    return lambda r: r.name == name


def sdk_props(props: Mapping[str, Any]) -> Any:
    """Props as the policy SDK hands them over (Struct round trip, unknown-checking proxy)."""
    s = struct_pb2.Struct()
    s.update(dict(props))
    return unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(s)))


def urn(kind: str, name: str) -> str:
    """The URN a test resource gets."""
    return f"urn:pulumi:dev::fabric-stack::{TYPE}{kind}::{name}"


def resource(
    kind: str, name: str, props: Mapping[str, Any], text: str | None = None
) -> PolicyResource:
    """One stack resource of ``kind`` as the component sends it: record text + inventory.

    ``text`` replaces the record text (e.g. by the SDK's unknown-value sentinel).
    """
    full = {
        "record": record_text(props) if text is None else text,
        "inventory": {"url": "sqlite:////tmp/inventory.db", "stack": "dev"},
    }
    return PolicyResource(
        TYPE + kind,
        sdk_props(full),
        urn(kind, name),
        name,
        OPTS,
        None,
        None,
        [],
        {},
    )


def stack_resources(intent: FabricIntent, granularity: str = "bundle") -> list[PolicyResource]:
    """The fabric as the component creates it: per-record or bundled cables and NICs."""
    out = [resource("Fabric", intent.summary.name, intent.summary.props())]
    out += [resource("Switch", sw.name, sw.props()) for sw in intent.switches]
    out += [resource("Rail", r.name, r.props()) for r in intent.rails]
    out += [resource("Vlan", v.name, v.props()) for v in intent.vlans]
    # An unrelated resource in the same stack must be ignored.
    out.append(
        PolicyResource(
            "random:index/randomId:RandomId",
            sdk_props({"byteLength": 4}),
            "urn:pulumi:dev::fabric-stack::random:index/randomId:RandomId::x",
            "x",
            OPTS,
            None,
            None,
            [],
            {},
        )
    )
    if granularity == "cable":
        out += [resource("Cable", c.name, c.props()) for c in intent.cables]
        out += [resource("RdmaNic", n.name, n.props()) for n in intent.nics]
        return out
    bundles: dict[str, list[Any]] = defaultdict(list)
    for c in intent.cables:
        side = "uplinks" if c.role in ("leaf_spine", "spine_core") else "downlinks"
        dev = c.a_device if side == "uplinks" else c.b_device
        bundles[f"{dev}/{side}"].append(c)
    for name, cables in bundles.items():
        out.append(
            resource(
                "CableBundle",
                name,
                {"name": name, "count": len(cables), "cables": [c.props() for c in cables]},
            )
        )
    groups: dict[str, list[Any]] = defaultdict(list)
    for n in intent.nics:
        groups[f"{n.node}/nics"].append(n)
    for name, nics in groups.items():
        out.append(
            resource(
                "RdmaNicGroup",
                name,
                {"name": name, "count": len(nics), "nics": [n.props() for n in nics]},
            )
        )
    return out


class Collector:
    """A ``report_violation`` that keeps (message, urn) pairs, as the SDK's own tests do."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, str | None]] = []

    def __call__(self, message: str, urn: str | None = None) -> None:
        self.reports.append((message, urn))

    @property
    def messages(self) -> list[str]:
        """Reported messages."""
        return [m for m, _ in self.reports]
