"""Each private-API assumption of fabric_stack.compat, checked against the installed library.

A library upgrade that breaks one of these fails here, by name, instead of building
corrupt records, unwrapping policy props wrongly or changing every Pulumi URN.
"""

from __future__ import annotations

import base64

import dill
import pydantic
import pytest
from pulumi import dynamic
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from components.providers import CableBundle, Switch, SwitchProvider
from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.pulumi import sdk_dynamic as pulumi_dynamic
from fabric_stack.adapters.pulumi import sdk_policy as pulumi_policy_proxy
from fabric_stack.compat import pydantic_internals
from fabric_stack.intent.model import CableIntent, SwitchIntent


def test_pydantic_instance_is_exactly_the_slots_trusted_construction_sets() -> None:
    assert pydantic.VERSION.startswith("2."), pydantic.VERSION
    assert tuple(pydantic.BaseModel.__slots__) == pydantic_internals.INSTANCE_SLOTS


def test_trusted_instance_equals_a_validated_one() -> None:
    intent = derive_intent(build_topology(size_fabric(validate_spec())))
    for rec in (intent.switches[0], intent.cables[0], intent.cables[-1], intent.summary):
        validated = type(rec).model_validate(rec.model_dump(mode="json"))
        assert rec == validated
        assert rec.model_dump(mode="json") == validated.model_dump(mode="json")
    # Defaults are filled in when a trusted build leaves fields out.
    partial = pydantic_internals.trusted_instance(
        CableIntent,
        {k: v for k, v in intent.cables[0].model_dump().items() if k != "cable_type"},
    )
    assert partial.cable_type == ""
    assert partial.model_copy(update={"cable_type": "x"}).cable_type == "x"


def test_trusted_bulk_instances_equal_validated_ones_and_need_every_field() -> None:
    intent = derive_intent(build_topology(size_fabric(validate_spec())))
    rows = [c.model_dump() for c in intent.cables[:3]]
    built = pydantic_internals.trusted_bulk(CableIntent, rows)
    assert [type(c) for c in built] == [CableIntent] * 3
    assert list(built) == [CableIntent.model_validate(r) for r in rows]
    assert built[1].__dict__ is rows[1]  # the very dict: nothing copied
    assert built[2].model_dump_json() == intent.cables[2].model_dump_json()
    assert pydantic_internals.trusted_bulk(CableIntent, []) == ()
    with pytest.raises(ValueError, match="CableIntent rows must hold exactly its fields"):
        pydantic_internals.trusted_bulk(CableIntent, [{"name": "x"}])


def test_every_derived_nic_and_cable_equals_its_validated_round_trip() -> None:
    # derive builds these in bulk from plain objects' attribute dicts (trusted_bulk): each
    # must be the record validation makes of its own JSON, field for field.
    spec = validate_spec(
        {"fabric": "roce", "gpus": 64, "gpus_per_node": 4, "planes": 4, "switch": "sn5600"}
    )
    intent = derive_intent(build_topology(size_fabric(spec)))
    assert intent.nics and intent.cables
    for rec in (*intent.nics, *intent.cables):
        validated = type(rec).model_validate_json(rec.model_dump_json())
        assert rec == validated and rec.__dict__ == validated.__dict__
        assert list(rec.__dict__) == list(type(rec).model_fields)  # field order kept


def test_dynamic_provider_key_and_serializer() -> None:
    assert pulumi_dynamic.PROVIDER_KEY == "__provider"
    blob = pulumi_dynamic.serialized_provider(SwitchProvider)
    assert isinstance(dill.loads(base64.b64decode(blob)), dynamic.ResourceProvider)


@pytest.mark.parametrize(
    ("cls", "token"),
    [
        (Switch, "pulumi-python:dynamic/fabric:Switch"),
        (CableBundle, "pulumi-python:dynamic/fabric:CableBundle"),
    ],
)
def test_type_token_is_what_every_urn_holds(cls: type[dynamic.Resource], token: str) -> None:
    # The SDK derives this from Resource.__init_subclass__; our resources register with it.
    assert pulumi_dynamic.type_token(cls) == token


def test_policy_proxies_unwrap_to_their_targets() -> None:
    props = unknown_checking_proxy({"record": "{}", "cables": ["a", UNKNOWN_STRING_VALUE]})
    assert type(props) is pulumi_policy_proxy.DictProxy
    inner = pulumi_policy_proxy.target(props)
    assert type(inner) is dict and inner["record"] == "{}"
    cables = props["cables"]
    assert type(cables) is pulumi_policy_proxy.ListProxy
    assert pulumi_policy_proxy.target(cables) == ["a", UNKNOWN_STRING_VALUE]
    assert UNKNOWN_STRING_VALUE in pulumi_policy_proxy.UNKNOWN_VALUES
    with pytest.raises(pulumi_policy_proxy.UnknownValueError):
        cables[1]


def test_switch_record_kinds_use_trusted_construction() -> None:
    rec = SwitchIntent.trusted(name="x")
    assert type(rec) is SwitchIntent and rec.name == "x" and rec.vlans == []


def test_drift_compares_only_fields_the_records_and_links_have() -> None:
    # drift declares what it compares (drift/model.py); the Pulumi records and the
    # topology's links must still carry those fields under the same names.
    from dataclasses import fields

    from fabric_stack.drift.model import CABLE_ATTRS, LINK_FIELDS, SPEED_ATTRS
    from fabric_stack.topology.build import Link

    assert set(CABLE_ATTRS) - {"status"} <= set(CableIntent.model_fields)
    assert set(LINK_FIELDS) <= {f.name for f in fields(Link)}
    assert set(SPEED_ATTRS) <= set(CableIntent.model_fields)
