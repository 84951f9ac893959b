"""docs/spec-reference.md is generated from the models and must be current."""

from __future__ import annotations

from pathlib import Path

from fabric_stack.views.reference import spec_reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "spec-reference.md"


def test_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == spec_reference(), (
        "docs/spec-reference.md is stale: "
        "run `python -m fabric_stack.views.reference > docs/spec-reference.md`"
    )


def test_reference_names_every_spec_field() -> None:
    text = spec_reference()
    for key in (
        "gpus",
        "gpus_per_node",
        "nic_gbps",
        "rails",
        "fabric",
        "switch",
        "oversubscription",
        "su_nodes",
        "planes",
        "node_profile",
        "pfc_priorities",
        "subnet_managers",
        "rail_vlans",
        "pcie_switches",
        "qm9700",
        "sn5600",
        "q3400",
    ):
        assert f"`{key}`" in text, key
