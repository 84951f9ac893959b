"""A spec file and a stack's ``fabric:`` config, one into the other (issue #48), as pure
functions: every key of a full spec (``FabricSpec.model_dump``) survives the trip through the
``pulumi config --json`` form, and the stack config the program reads back builds the same
spec. The real CLI's side is tests/integration/pulumi/test_stack_spec.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.files.config import spec_from_file, split_stack_config
from fabric_stack.files.stack_spec import (
    camel,
    check_keys,
    config_of_spec,
    scalar,
    spec_of_config,
    stack_config_values,
)
from fabric_stack.spec.model import FabricSpec, validate_spec

ASKS = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["prod", "007", "lab-b", "true"]),
        "gpus": st.sampled_from([16, 64, 128, 256, 512]),
        "gpus_per_node": st.sampled_from([4, 8]),
        "nic_gbps": st.sampled_from([200, 400]),
        "fabric": st.sampled_from(["infiniband", "roce", "ethernet"]),
        "switch": st.sampled_from(["qm9700", "sn5600"]),
        "oversubscription": st.sampled_from(["1:1", "2:1", "4:1"]),
        "planes": st.sampled_from([1, 2]),
    },
)


def full_spec(asks: dict[str, Any]) -> FabricSpec:
    try:
        return validate_spec(asks)
    except SpecError:
        assume(False)
        raise


def through_pulumi(config: dict[str, Any]) -> dict[str, Any]:
    """What `pulumi config --json` answers after `set-all --json` of ``config``: the same
    entries, a secret without its value (checked against the CLI in the integration test)."""
    out = json.loads(json.dumps(config))
    for entry in out.values():
        if entry["secret"]:
            entry.pop("value")
    return out


@settings(max_examples=60, suppress_health_check=[HealthCheck.filter_too_much])
@given(ASKS)
def test_every_key_of_a_full_spec_round_trips(asks: dict[str, Any]) -> None:
    spec = full_spec(asks)
    data = spec.model_dump(mode="json")
    config = config_of_spec(data)
    assert set(config) == {f"fabric:{camel(k)}" for k in data}
    back, secrets = spec_of_config(through_pulumi(config))
    assert back == data and secrets == []
    # ... and the program, reading the same stack, builds the same spec
    program_data, _ = split_stack_config(stack_config_values(through_pulumi(config)))
    assert validate_spec(program_data) == spec


@settings(max_examples=30, suppress_health_check=[HealthCheck.filter_too_much])
@given(asks=ASKS)
def test_a_spec_file_and_its_stack_give_the_same_spec(
    asks: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    spec = full_spec(asks)
    f = tmp_path_factory.mktemp("spec") / "spec.yaml"
    f.write_text(json.dumps({**asks, "inventory": "sqlite:///x.db", "netbox_branch": "r-1"}))
    config = config_of_spec(json.loads(f.read_text()))
    data, _ = split_stack_config(stack_config_values(through_pulumi(config)))
    assert spec_from_file(f) == validate_spec(data) == spec


def test_credentials_become_secrets_and_are_never_exported() -> None:
    config = config_of_spec(
        {
            "gpus": 64,
            "netbox_token": "abc",
            "inventory": "postgresql://fab:pw@db/inv",
            "netbox_branch": "review-1",
        }
    )
    assert {k for k, v in config.items() if v["secret"]} == {
        "fabric:netboxToken",
        "fabric:inventory",
    }
    data, secrets = spec_of_config(through_pulumi(config))
    assert data == {"gpus": 64, "netbox_branch": "review-1"}
    assert secrets == ["fabric:netboxToken", "fabric:inventory"]


def test_a_names_file_is_kept_absolute(tmp_path: Path) -> None:
    got = config_of_spec({"names": "names.csv"}, base=tmp_path)
    assert got["fabric:names"]["value"] == str(tmp_path / "names.csv")


def test_scalars_are_typed_as_their_field() -> None:
    assert scalar("gpus", "128") == 128
    assert scalar("name", "007") == "007"
    assert scalar("oversubscription", "2:1") == "2:1"
    assert scalar("config_records", "false") is False


def test_an_unknown_key_names_itself_and_the_valid_ones() -> None:
    with pytest.raises(InputFileError) as caught:
        check_keys({"gpus": 8, "gpuz": 8}, "spec.yaml")
    assert caught.value.message.startswith("spec.yaml: gpuz: not a spec or stack key")
    assert "netbox_branch" in caught.value.message
