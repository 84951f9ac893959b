"""The pack's servicer decodes each request once and answers exactly as the SDK's does.

:mod:`fabric_stack.adapters.pulumi.sdk_servicer` relies on pulumi-policy's private
servicer; these tests pin that layout and compare both servicers' protobuf responses
on the same requests (clean fabrics, violations, an unknown value, a stack policy
disabled by config), with the pack's caches emptied before each run.
"""

from __future__ import annotations

import inspect
from typing import Any

import pulumi_policy.policy as sdk
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime import proto
from pulumi_policy import EnforcementLevel, PolicyPack
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from fabric_stack.adapters.pulumi import sdk_servicer
from tests.policy_fixtures import BAD_PCIE_PROFILE, ROCE, intent_for, resource, stack_resources
from tests.unit.test_policy_pack import fp


def _raw(value: Any) -> Any:
    """The props behind the SDK's proxies, unknown sentinels kept (what the engine sent)."""
    if type(value) is fp.DictProxy:
        return {k: _raw(v) for k, v in fp.target(value).items()}
    if type(value) is fp.ListProxy:
        return [_raw(v) for v in fp.target(value)]
    return value


def _struct(props: Any) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(_raw(props))
    return s


def _stack_request(resources: list[Any]) -> Any:
    return proto.AnalyzeStackRequest(
        resources=[
            proto.AnalyzerResource(
                type=r.resource_type, urn=r.urn, name=r.name, properties=_struct(r.props)
            )
            for r in resources
        ]
    )


def _requests(resources: list[Any]) -> list[Any]:
    return [
        proto.AnalyzeRequest(
            type=r.resource_type, urn=r.urn, name=r.name, properties=_struct(r.props)
        )
        for r in resources
    ]


def _servicers(config: dict[str, Any] | None = None) -> list[Any]:
    out = []
    for cls in (sdk_servicer.SDK_SERVICER, sdk_servicer.SharedDecodeServicer):
        s = cls(fp.PACK_NAME, "0.1.0", fp.POLICIES, EnforcementLevel.ADVISORY)
        if config:
            req = proto.ConfigureAnalyzerRequest()
            for name, level in config.items():
                req.policyConfig[name].enforcementLevel = level
            s.Configure(req, None)
        out.append(s)
    return out


def _fresh() -> None:
    fp._views.clear()
    fp._decoded.clear()
    fp._models.clear()


FABRICS = {
    "clean IB": {},
    "2:1 + one SM": {"oversubscription": "2:1", "infiniband": {"subnet_managers": 1}},
    "bad PCIe": {"node_profile": BAD_PCIE_PROFILE},
    "RoCE MTU override": {**ROCE, "roce": {"overrides": {"spine": {"mtu": 1500}}}},
}


@pytest.mark.parametrize("spec", FABRICS.values(), ids=list(FABRICS))
def test_both_servicers_answer_the_same(spec: dict[str, Any]) -> None:
    resources = stack_resources(intent_for(**spec))
    sdk_s, ours = _servicers()
    for method in ("AnalyzeStack",):
        req = _stack_request(resources)
        _fresh()
        want = getattr(sdk_s, method)(req, None)
        _fresh()
        got = getattr(ours, method)(req, None)
        assert got == want
    for req in _requests(resources):
        _fresh()
        want_a, want_r = sdk_s.Analyze(req, None), sdk_s.Remediate(req, None)
        _fresh()
        assert ours.Analyze(req, None) == want_a
        assert ours.Remediate(req, None) == want_r


def test_a_violation_and_an_unknown_read_the_same() -> None:
    resources = stack_resources(intent_for(oversubscription="2:1"))
    sw = next(r for r in resources if r.resource_type.endswith(":Switch"))
    resources.append(resource("Switch", "unknown", {}, text=UNKNOWN_STRING_VALUE))
    sdk_s, ours = _servicers()
    req = _stack_request(resources)
    _fresh()
    want = sdk_s.AnalyzeStack(req, None)
    _fresh()
    got = ours.AnalyzeStack(req, None)
    assert got == want
    # The Switch-reading policies cannot run; the rest still judge the fabric.
    assert any("during preview" in d.message for d in got.diagnostics)
    assert {d.policyName for d in got.diagnostics if "during preview" in d.message} >= {
        "oversubscription-1-to-1"
    }
    one = _requests([sw])[0]
    assert ours.Analyze(one, None) == sdk_s.Analyze(one, None)


def test_a_disabled_and_a_remediate_level_policy_answer_the_same() -> None:
    config = {
        "network-separation": proto.EnforcementLevel.DISABLED,
        "port-budget": proto.EnforcementLevel.REMEDIATE,
    }
    resources = stack_resources(intent_for(oversubscription="2:1"))
    sdk_s, ours = _servicers(config)
    req = _stack_request(resources)
    _fresh()
    want = sdk_s.AnalyzeStack(req, None)
    _fresh()
    assert ours.AnalyzeStack(req, None) == want
    for one in _requests(resources[:6]):
        assert ours.Remediate(one, None) == sdk_s.Remediate(one, None)
        assert ours.Analyze(one, None) == sdk_s.Analyze(one, None)


def test_policy_pack_finds_the_servicer_by_its_module_name() -> None:
    # install() rebinds the module global that PolicyPack.__init__ instantiates.
    assert "_PolicyAnalyzerServicer(" in inspect.getsource(PolicyPack.__init__)
    assert sdk_servicer.SDK_SERVICER.__name__ == "_PolicyAnalyzerServicer"
    fields = vars(sdk_servicer.SDK_SERVICER("p", "1", fp.POLICIES, EnforcementLevel.ADVISORY))
    for name in ("policies", "policy_pack_name", "policy_pack_version", "stack_tags"):
        assert "_PolicyAnalyzerServicer__" + name in fields
    before = sdk._PolicyAnalyzerServicer
    try:
        sdk_servicer.install()
        assert sdk._PolicyAnalyzerServicer is sdk_servicer.SharedDecodeServicer
    finally:
        sdk._PolicyAnalyzerServicer = before
